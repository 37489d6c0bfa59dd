#include "compression/huffman_table.h"

#include <algorithm>
#include <numeric>
#include <string>

#include "base/error.h"
#include "compression/bit_io.h"
#include "compression/form/message_form.h"
#include "compression/form/wire_format.h"

namespace dc::compression {
namespace {

constexpr unsigned kMaxLength = wire::kMaxCodeLength;

[[noreturn]] void bad_table(const std::string& why) {
  fail(dcInvalidArgument, "compressed message: bad Huffman table: " + why);
}

uint32_t reverse_bits(uint32_t code, unsigned length) {
  uint32_t r = 0;
  for (unsigned i = 0; i < length; ++i) r |= ((code >> i) & 1u) << (length - 1 - i);
  return r;
}

}  // namespace

std::vector<uint8_t> package_merge(const std::vector<uint64_t>& weights, unsigned max_length) {
  // Leaves sorted by (weight, position); each level merges the leaves with the pairs ("packages")
  // of the level before, a leaf first on equal weight. The first 2n-2 items of the last level
  // make the code: a leaf's length is how many of them contain it.
  struct Node {
    uint64_t weight;
    int32_t leaf;   // position in `weights`, or -1 for a package
    uint32_t left;  // a package's two items in the level before
  };
  const size_t n = weights.size();
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return weights[a] < weights[b]; });

  std::vector<std::vector<Node>> levels(max_length);
  for (uint32_t i : order) levels[0].push_back({weights[i], int32_t(i), 0});
  for (unsigned l = 1; l < max_length; ++l) {
    const std::vector<Node>& prev = levels[l - 1];
    std::vector<Node>& cur = levels[l];
    cur.reserve(n + prev.size() / 2);
    size_t leaf = 0, pair = 0;
    const size_t pairs = prev.size() / 2;
    while (leaf < n || pair < pairs) {
      const uint64_t pw = pair < pairs ? prev[2 * pair].weight + prev[2 * pair + 1].weight : 0;
      if (leaf < n && (pair >= pairs || levels[0][leaf].weight <= pw)) {
        cur.push_back(levels[0][leaf++]);
      } else {
        cur.push_back({pw, -1, uint32_t(2 * pair)});
        ++pair;
      }
    }
  }
  std::vector<uint8_t> lengths(n, 0);
  // Count leaf occurrences below the chosen items, level by level (each item is visited once).
  std::vector<uint32_t> visit(2 * n - 2), next;
  std::iota(visit.begin(), visit.end(), 0u);
  for (int l = int(max_length) - 1; l >= 0; --l) {
    next.clear();
    for (uint32_t idx : visit) {
      const Node& node = levels[l][idx];
      if (node.leaf >= 0) {
        ++lengths[node.leaf];
      } else {
        next.push_back(node.left);
        next.push_back(node.left + 1);
      }
    }
    visit.swap(next);
  }
  return lengths;
}

HuffmanTable HuffmanTable::build(const uint32_t* counts, unsigned alphabet) {
  HuffmanTable t;
  t.alphabet_ = alphabet;
  std::vector<uint64_t> weights;
  std::vector<unsigned> symbols;
  for (unsigned s = 0; s < alphabet; ++s) {
    if (counts[s] == 0) continue;
    weights.push_back(counts[s]);
    symbols.push_back(s);
  }
  if (symbols.size() == 1) {
    t.kind_ = Kind::single;
    t.single_ = symbols[0];
  } else if (symbols.size() > 1) {
    t.kind_ = Kind::coded;
    const std::vector<uint8_t> lengths = package_merge(weights, kMaxLength);
    for (size_t i = 0; i < symbols.size(); ++i) t.lengths_[symbols[i]] = lengths[i];
  }
  t.finish();
  return t;
}

void HuffmanTable::finish() {
  decode_.clear();
  codes_.fill(0);
  if (kind_ == Kind::single) {  // every entry: the symbol, 0 bits
    decode_.assign(size_t(1) << kMaxLength, uint16_t(single_ << 8));
    return;
  }
  if (kind_ != Kind::coded) return;
  // Canonical codes: by length, then symbol.
  unsigned count[kMaxLength + 1] = {};
  for (unsigned s = 0; s < alphabet_; ++s) count[lengths_[s]]++;
  count[0] = 0;
  uint32_t next[kMaxLength + 2] = {};
  for (unsigned l = 1; l <= kMaxLength; ++l) next[l + 1] = (next[l] + count[l]) << 1;
  decode_.assign(size_t(1) << kMaxLength, 0);
  for (unsigned s = 0; s < alphabet_; ++s) {
    const unsigned l = lengths_[s];
    if (l == 0) continue;
    const uint32_t code = reverse_bits(next[l]++, l);
    codes_[s] = code | (l << 16);
    for (uint32_t k = code; k < decode_.size(); k += uint32_t(1) << l) decode_[k] = uint16_t(l | (s << 8));
  }
}

size_t HuffmanTable::write(uint8_t* out) const {
  BitWriter w(out, max_table_bytes(alphabet_) + 8);
  w.put(uint32_t(kind_), 2);
  if (kind_ == Kind::single) w.put(single_, 8);
  if (kind_ == Kind::coded) {
    unsigned lo = 0, hi = alphabet_ - 1;
    while (lengths_[lo] == 0) ++lo;
    while (lengths_[hi] == 0) --hi;
    w.put(lo, 8);
    w.put(hi, 8);
    w.flush();
    unsigned prev = 0;
    for (unsigned s = lo; s <= hi; ++s) {
      const unsigned l = lengths_[s];
      if (l == prev) w.put(0, 1);
      else if (l == prev + 1 || l + 1 == prev) w.put(1u | (l + 1 == prev ? 4u : 0u), 3);
      else w.put(3u | (l << 2), 6);
      w.flush();
      prev = l;
    }
  }
  return w.finish();
}

HuffmanTable HuffmanTable::read(const uint8_t* data, size_t size, unsigned alphabet, size_t* used) {
  HuffmanTable t;
  t.alphabet_ = alphabet;
  BitReader r(data, size);
  uint64_t bits = 0;  // read so far, to detect running past `size`
  auto take = [&](unsigned n) {
    r.refill();
    bits += n;
    if (bits > 8 * uint64_t(size)) bad_table("it runs past its section");
    return unsigned(r.take(n));
  };
  const unsigned kind = take(2);
  if (kind > 2) bad_table("unknown kind " + std::to_string(kind));
  t.kind_ = Kind(kind);
  if (t.kind_ == Kind::single) {
    t.single_ = take(8);
    if (t.single_ >= alphabet) bad_table("symbol " + std::to_string(t.single_) + " outside the alphabet");
  } else if (t.kind_ == Kind::coded) {
    const unsigned lo = take(8), hi = take(8);
    if (lo >= hi || hi >= alphabet) bad_table("symbol range " + std::to_string(lo) + ".." + std::to_string(hi));
    unsigned prev = 0;
    for (unsigned s = lo; s <= hi; ++s) {
      unsigned l = prev;
      if (take(1)) {
        if (take(1)) l = take(4);
        else l = take(1) ? prev - 1 : prev + 1;  // prev - 1 wraps when prev is 0: caught below
      }
      if (l > kMaxLength) bad_table("code length " + std::to_string(int(l)) + " (longest is 11)");
      t.lengths_[s] = uint8_t(l);
      prev = l;
    }
    if (t.lengths_[lo] == 0 || t.lengths_[hi] == 0)
      bad_table("the symbol range does not start and end at a used symbol");
    uint64_t kraft = 0;
    for (unsigned s = lo; s <= hi; ++s)
      if (t.lengths_[s]) kraft += uint64_t(1) << (kMaxLength - t.lengths_[s]);
    if (kraft != (uint64_t(1) << kMaxLength)) bad_table("the code lengths do not make a complete prefix code");
  }
  *used = size_t((bits + 7) / 8);
  const unsigned pad = unsigned(bits & 7);
  if (pad && (data[*used - 1] >> pad) != 0) bad_table("nonzero padding bits");
  t.finish();
  return t;
}

}  // namespace dc::compression
