// libFuzzer target for the topology file parser. Any input either fails with dc::Error or parses;
// what parses must write out and parse back to the very same text. Built with clang when
// DEEPCOMM_FUZZERS is on; the corpus is replayed through this function in every build
// (topology_file_fuzzer_replay).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "base/error.h"
#include "topology/topology_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace dc::topo;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  TopologyFile file;
  try {
    file = parse_topology_file(text, "fuzz");
  } catch (const dc::Error&) {
    return 0;
  }
  const std::string written = write_topology_file(file);
  try {
    const std::string again = write_topology_file(parse_topology_file(written, "written"));
    if (again != written) {
      std::fprintf(stderr, "written file changed on reading back:\n%s\n---\n%s\n", written.c_str(), again.c_str());
      std::abort();
    }
  } catch (const dc::Error& e) {
    std::fprintf(stderr, "written file does not parse: %s\n%s\n", e.what(), written.c_str());
    std::abort();
  }
  return 0;
}
