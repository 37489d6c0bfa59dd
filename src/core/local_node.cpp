#include "src/core/local_node.h"

#include <unistd.h>

#include <mutex>

#include "base/error.h"
#include "base/log.h"
#include "topology/detect.h"

namespace dc {

const topo::NodeSummary& local_node_summary() {
  static std::once_flag once;
  static topo::NodeSummary summary;
  std::call_once(once, [] {
    try {
      summary = topo::summarize(topo::detect_node());
    } catch (const Error& e) {
      char host[256] = {};
      gethostname(host, sizeof host - 1);
      summary = topo::NodeSummary{};
      summary.host = host;
      DC_WARN("node detection failed, publishing the host name only: %s", e.what());
    }
  });
  return summary;
}

std::string summary_to_card(const topo::NodeSummary& summary) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned char ch : topo::encode_summary(summary)) {
    out += digits[ch >> 4];
    out += digits[ch & 0xf];
  }
  return out;
}

topo::NodeSummary summary_from_card(const std::string& text) {
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  if (text.size() % 2 != 0) fail(dcInvalidArgument, "node summary: odd number of hex digits");
  std::string bytes;
  for (size_t i = 0; i < text.size(); i += 2) {
    const int hi = nibble(text[i]), lo = nibble(text[i + 1]);
    if (hi < 0 || lo < 0) fail(dcInvalidArgument, "node summary: not a hex digit");
    bytes += static_cast<char>(hi << 4 | lo);
  }
  return topo::decode_summary(bytes);
}

}  // namespace dc
