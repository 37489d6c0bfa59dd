// The spec grammar (items separated by commas, arguments by colons):
//   topk:F[:exact|:sampled]   q8[:nearest|:stochastic][:BLOCK]   huffman   ef[:BETA]   auto[:F]
//   chunk:ELEMENTS
#include "compression/form/spec.h"

#include <charconv>
#include <cmath>
#include <vector>

#include "base/error.h"

namespace dc::compression {
namespace {

std::vector<std::string_view> split(std::string_view text, char sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    const size_t end = text.find(sep, start);
    parts.push_back(text.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos) return parts;
    start = end + 1;
  }
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Errors name the whole spec and the item at fault.
class SpecParser {
 public:
  explicit SpecParser(std::string_view text) : text_(text) {}

  Spec parse() {
    if (trim(text_).empty()) fail_spec("is empty");
    for (std::string_view raw : split(text_, ',')) item(trim(raw));
    if (spec_.selection == Selection::dense && !spec_.q8)
      fail_spec("needs topk, q8 or auto (something that makes the message smaller)");
    if (spec_.huffman && !spec_.q8 && !spec_.sparse() && spec_.selection != Selection::automatic)
      fail_spec("has huffman but nothing for it to code: add q8 or topk");
    return spec_;
  }

 private:
  [[noreturn]] void fail_spec(const std::string& why) const {
    fail(dcInvalidArgument, "compression spec '" + std::string(text_) + "' " + why);
  }
  [[noreturn]] void fail_item(std::string_view item, const std::string& why) const {
    fail(dcInvalidArgument, "compression spec '" + std::string(text_) + "': item '" + std::string(item) + "' " + why);
  }

  void once(std::string_view item, bool& seen) {
    if (seen) fail_item(item, "repeats an earlier item");
    seen = true;
  }

  double number(std::string_view item, std::string_view arg, const char* what) const {
    double value = 0;
    const auto [end, ec] = std::from_chars(arg.data(), arg.data() + arg.size(), value);
    if (arg.empty() || ec != std::errc() || end != arg.data() + arg.size() || !std::isfinite(value))
      fail_item(item, std::string("has '") + std::string(arg) + "' where " + what + " is expected");
    return value;
  }

  uint64_t integer(std::string_view item, std::string_view arg, const char* what) const {
    uint64_t value = 0;
    const auto [end, ec] = std::from_chars(arg.data(), arg.data() + arg.size(), value);
    if (arg.empty() || ec != std::errc() || end != arg.data() + arg.size())
      fail_item(item, std::string("has '") + std::string(arg) + "' where " + what + " is expected");
    return value;
  }

  double fraction(std::string_view item, std::string_view arg) const {
    const double f = number(item, arg, "a fraction");
    if (!(f > 0.0 && f <= 1.0)) fail_item(item, "keeps a fraction outside (0, 1]");
    return f;
  }

  void selection(std::string_view item, Selection s) {
    if (selection_seen_) fail_item(item, "is a second selection (topk and auto exclude each other)");
    selection_seen_ = true;
    spec_.selection = s;
  }

  void item(std::string_view item) {
    if (item.empty()) fail_spec("has an empty item");
    const std::vector<std::string_view> args = split(item, ':');
    const std::string_view name = args[0];
    if (name == "topk") {
      if (args.size() < 2 || args.size() > 3) fail_item(item, "must be topk:FRACTION or topk:FRACTION:exact|sampled");
      Selection s = Selection::topk_exact;
      if (args.size() == 3) {
        if (args[2] == "sampled") s = Selection::topk_sampled;
        else if (args[2] != "exact") fail_item(item, "has mode '" + std::string(args[2]) + "': use exact or sampled");
      }
      selection(item, s);
      spec_.fraction = fraction(item, args[1]);
    } else if (name == "auto") {
      if (args.size() > 2) fail_item(item, "must be auto or auto:FRACTION");
      selection(item, Selection::automatic);
      spec_.fraction = args.size() == 2 ? fraction(item, args[1]) : Spec::kDefaultAutoFraction;
      spec_.q8 = spec_.huffman = true;
    } else if (name == "q8") {
      once(item, q8_seen_);
      spec_.q8 = true;
      if (args.size() > 3) fail_item(item, "must be q8[:nearest|:stochastic][:BLOCK]");
      bool rounding_seen = false, block_seen = false;
      for (size_t i = 1; i < args.size(); ++i) {
        if (args[i] == "nearest" || args[i] == "stochastic") {
          if (rounding_seen || block_seen) fail_item(item, "must be q8[:nearest|:stochastic][:BLOCK]");
          rounding_seen = true;
          spec_.rounding = args[i] == "nearest" ? Rounding::nearest : Rounding::stochastic;
        } else {
          if (block_seen) fail_item(item, "must be q8[:nearest|:stochastic][:BLOCK]");
          block_seen = true;
          const uint64_t b = integer(item, args[i], "nearest, stochastic or a block size");
          if (b < Spec::kMinBlock || b > Spec::kMaxBlock)
            fail_item(item, "has block size " + std::to_string(b) + ", outside " + std::to_string(Spec::kMinBlock) +
                                ".." + std::to_string(Spec::kMaxBlock));
          spec_.block = uint32_t(b);
        }
      }
    } else if (name == "huffman") {
      once(item, huffman_seen_);
      if (args.size() != 1) fail_item(item, "takes no argument");
      spec_.huffman = true;
    } else if (name == "ef") {
      once(item, ef_seen_);
      if (args.size() > 2) fail_item(item, "must be ef or ef:BETA");
      spec_.error_feedback = true;
      if (args.size() == 2) {
        // Checked as the float32 it becomes: a tiny decay would round to 0.
        const float beta = float(number(item, args[1], "a decay factor"));
        if (!(beta > 0.0f && beta <= 1.0f)) fail_item(item, "has a decay outside (0, 1]");
        spec_.beta = beta;
      }
    } else if (name == "chunk") {
      once(item, chunk_seen_);
      if (args.size() != 2) fail_item(item, "must be chunk:ELEMENTS");
      const uint64_t n = integer(item, args[1], "an element count");
      const bool power_of_two = n != 0 && (n & (n - 1)) == 0;
      if (!power_of_two || n < (uint64_t(1) << Spec::kMinChunkLog2) || n > (uint64_t(1) << Spec::kMaxChunkLog2))
        fail_item(item, "must be a power of two from 4096 to 1048576 elements");
      spec_.chunk_log2 = uint32_t(__builtin_ctzll(n));
    } else {
      fail_item(item, "is unknown: expected topk, q8, huffman, ef, auto or chunk");
    }
  }

  std::string_view text_;
  Spec spec_;
  bool selection_seen_ = false, q8_seen_ = false, huffman_seen_ = false, ef_seen_ = false, chunk_seen_ = false;
};

template <class T>
std::string shortest(T v) {
  char buf[32];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, ec == std::errc() ? end : buf);
}

}  // namespace

Spec parse_spec(std::string_view text) { return SpecParser(text).parse(); }

std::string Spec::to_string() const {
  std::vector<std::string> items;
  switch (selection) {
    case Selection::dense: break;
    case Selection::topk_exact: items.push_back("topk:" + shortest(fraction)); break;
    case Selection::topk_sampled: items.push_back("topk:" + shortest(fraction) + ":sampled"); break;
    case Selection::automatic:
      items.push_back(fraction == kDefaultAutoFraction ? "auto" : "auto:" + shortest(fraction));
      break;
  }
  const bool default_q8 = rounding == Rounding::nearest && block == kDefaultBlock;
  if (q8 && !(selection == Selection::automatic && default_q8)) {
    std::string q = "q8";
    if (rounding == Rounding::stochastic) q += ":stochastic";
    // append(), not ":" + to_string(): GCC 12 warns falsely (-Wrestrict) on the latter here.
    if (block != kDefaultBlock) q.append(":").append(std::to_string(block));
    items.push_back(q);
  }
  if (huffman && selection != Selection::automatic) items.push_back("huffman");
  if (error_feedback) items.push_back(beta == 1.0f ? "ef" : "ef:" + shortest(beta));
  if (chunk_log2 != kDefaultChunkLog2) items.push_back("chunk:" + std::to_string(uint64_t(1) << chunk_log2));
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : ",") + item;
  return out;
}

uint64_t kept_target(double fraction, uint64_t count) {
  if (count == 0) return 0;
  const double k = std::ceil(fraction * double(count));
  if (!(k >= 1.0)) return 1;
  return k >= double(count) ? count : uint64_t(k);
}

}  // namespace dc::compression
