// Canonical, length-limited Huffman codes as plain data, for code that runs on the CPU and the GPU
// (DC_HOST_DEVICE, fixed-size arrays, scratch passed in): the code lengths from a histogram by
// package-merge, the canonical codes, the one-lookup decoding table, and the stored form with
// every check of reading it. compression/huffman_table.h is the CPU's class over these functions,
// so both sides build, write and read tables with the same text; that header describes the stored
// form.
#pragma once

#include <cstddef>
#include <cstdint>

#include "compression/form/wire_format.h"
#include "compression/gpu/bits.h"
#include "kernels/host_device.h"

namespace dc::compression::gpu {

constexpr unsigned kMaxSymbols = 256;
constexpr unsigned kDecodeEntries = 1u << wire::kMaxCodeLength;

enum class CodeKind : uint8_t { empty = 0, single = 1, coded = 2 };

struct CodeLengths {
  CodeKind kind = CodeKind::empty;
  uint8_t single = 0;  // the one symbol of a single-symbol table
  uint8_t lengths[kMaxSymbols] = {};
};

struct MergeNode {
  uint64_t weight;
  int32_t leaf;   // position among the weights, or -1 for a package
  uint32_t left;  // a package's two items in the level before
};

// build_code's working memory: 93 KiB, so a GPU caller keeps it in global memory.
struct PackageMergeScratch {
  uint64_t weights[kMaxSymbols];
  uint8_t symbols[kMaxSymbols], lengths[kMaxSymbols];
  MergeNode levels[wire::kMaxCodeLength][2 * kMaxSymbols];
  uint32_t level_size[wire::kMaxCodeLength];
  uint16_t order[kMaxSymbols], sorted[kMaxSymbols];
  uint32_t visit[2 * kMaxSymbols], next[2 * kMaxSymbols];
};

// Largest stored table of `alphabet` symbols, in bytes (message_form.h's max_table_bytes).
constexpr size_t kMaxStoredTableBytes = (2 + 8 + 8 + 6 * kMaxSymbols + 7) / 8;

// Why a stored table was refused; TableError::detail holds the number the message names.
enum class TableFault : uint8_t {
  none,
  past_section,    // it runs past its section
  unknown_kind,    // detail: the kind
  symbol_outside,  // detail: the symbol
  symbol_range,    // detail: lo, detail2: hi
  code_length,     // detail: the length (as an int: -1 when a "one less" went below 0)
  range_ends,      // the symbol range does not start and end at a used symbol
  incomplete,      // the lengths do not make a complete prefix code
  padding,         // nonzero padding bits
};

struct TableError {
  TableFault fault = TableFault::none;
  int32_t detail = 0, detail2 = 0;
};

// canonical_codes' working memory: per length, the count of its codes and its first code.
struct CanonicalScratch {
  uint32_t count[wire::kMaxCodeLength + 1];
  uint32_t next[wire::kMaxCodeLength + 2];
};

namespace {

// Stable order of positions by weight (bottom-up merge sort: ties keep their order).
DC_HOST_DEVICE inline void sort_by_weight(const uint64_t* weights, unsigned n, uint16_t* order, uint16_t* tmp) {
  for (unsigned i = 0; i < n; ++i) order[i] = uint16_t(i);
  for (unsigned width = 1; width < n; width *= 2) {
    for (unsigned lo = 0; lo < n; lo += 2 * width) {
      const unsigned mid = lo + width < n ? lo + width : n, hi = lo + 2 * width < n ? lo + 2 * width : n;
      unsigned a = lo, b = mid, o = lo;
      while (a < mid && b < hi) tmp[o++] = weights[order[b]] < weights[order[a]] ? order[b++] : order[a++];
      while (a < mid) tmp[o++] = order[a++];
      while (b < hi) tmp[o++] = order[b++];
    }
    for (unsigned i = 0; i < n; ++i) order[i] = tmp[i];
  }
}

// Code lengths (<= max_length) minimizing the coded size of weights[0..n) (all > 0, 2 <= n <= 256,
// 2^max_length >= n), in the order given, ties broken by position. Leaves sorted by (weight,
// position); each level merges the leaves with the pairs ("packages") of the level before, a leaf
// first on equal weight. The first 2n-2 items of the last level make the code: a leaf's length is
// how many of them contain it.
DC_HOST_DEVICE inline void package_merge(const uint64_t* weights, unsigned n, unsigned max_length,
                                         PackageMergeScratch& s, uint8_t* lengths) {
  sort_by_weight(weights, n, s.order, s.sorted);
  MergeNode* leaves = s.levels[0];
  for (unsigned i = 0; i < n; ++i) leaves[i] = {weights[s.order[i]], int32_t(s.order[i]), 0};
  s.level_size[0] = n;
  for (unsigned l = 1; l < max_length; ++l) {
    const MergeNode* prev = s.levels[l - 1];
    MergeNode* cur = s.levels[l];
    const uint32_t pairs = s.level_size[l - 1] / 2;
    uint32_t leaf = 0, pair = 0, size = 0;
    while (leaf < n || pair < pairs) {
      const uint64_t pw = pair < pairs ? prev[2 * pair].weight + prev[2 * pair + 1].weight : 0;
      if (leaf < n && (pair >= pairs || leaves[leaf].weight <= pw)) {
        cur[size++] = leaves[leaf++];
      } else {
        cur[size++] = {pw, -1, 2 * pair};
        ++pair;
      }
    }
    s.level_size[l] = size;
  }
  for (unsigned i = 0; i < n; ++i) lengths[i] = 0;
  // Count leaf occurrences below the chosen items, level by level (each item is visited once).
  uint32_t visits = 2 * n - 2;
  for (uint32_t i = 0; i < visits; ++i) s.visit[i] = i;
  for (int l = int(max_length) - 1; l >= 0; --l) {
    uint32_t nexts = 0;
    for (uint32_t v = 0; v < visits; ++v) {
      const MergeNode& node = s.levels[l][s.visit[v]];
      if (node.leaf >= 0) {
        ++lengths[node.leaf];
      } else {
        s.next[nexts++] = node.left;
        s.next[nexts++] = node.left + 1;
      }
    }
    for (uint32_t i = 0; i < nexts; ++i) s.visit[i] = s.next[i];
    visits = nexts;
  }
}

// The code of a histogram counts[0..alphabet): empty (no symbol), single, or coded.
DC_HOST_DEVICE inline void build_code(const uint32_t* counts, unsigned alphabet, PackageMergeScratch& s,
                                      CodeLengths& code) {
  code = CodeLengths{};
  unsigned n = 0;
  for (unsigned sym = 0; sym < alphabet; ++sym) {
    if (counts[sym] == 0) continue;
    s.weights[n] = counts[sym];
    s.symbols[n++] = uint8_t(sym);
  }
  if (n == 1) {
    code.kind = CodeKind::single;
    code.single = s.symbols[0];
  } else if (n > 1) {
    code.kind = CodeKind::coded;
    package_merge(s.weights, n, wire::kMaxCodeLength, s, s.lengths);
    for (unsigned i = 0; i < n; ++i) code.lengths[s.symbols[i]] = s.lengths[i];
  }
}

DC_HOST_DEVICE inline uint32_t reverse_bits(uint32_t code, unsigned length) {
  uint32_t r = 0;
  for (unsigned i = 0; i < length; ++i) r |= ((code >> i) & 1u) << (length - 1 - i);
  return r;
}

// Per symbol: the bit-reversed canonical code (by length, then symbol) | length << 16, 0 for an
// unused symbol; decode (kDecodeEntries entries, or null): the code's length | its symbol << 8 at
// every index whose low bits are the code. A single-symbol table takes 0 bits per use. The scratch
// is the caller's (a GPU thread's local array would take a stack frame).
DC_HOST_DEVICE inline void canonical_codes(const CodeLengths& code, unsigned alphabet, uint32_t* codes,
                                           uint16_t* decode, CanonicalScratch& scratch) {
  for (unsigned sym = 0; sym < alphabet; ++sym) codes[sym] = 0;
  if (code.kind == CodeKind::single && decode)
    for (uint32_t k = 0; k < kDecodeEntries; ++k) decode[k] = uint16_t(code.single << 8);
  if (code.kind != CodeKind::coded) return;
  constexpr unsigned kMax = wire::kMaxCodeLength;
  uint32_t* count = scratch.count;
  uint32_t* next = scratch.next;
  for (unsigned l = 0; l <= kMax; ++l) count[l] = 0;
  for (unsigned sym = 0; sym < alphabet; ++sym) count[code.lengths[sym]]++;
  count[0] = 0;
  next[0] = next[1] = 0;
  for (unsigned l = 1; l <= kMax; ++l) next[l + 1] = (next[l] + count[l]) << 1;
  // Every decode entry is written below: the code is complete (read_code checks it, package-merge
  // makes one), so each index's low bits are exactly one code.
  for (unsigned sym = 0; sym < alphabet; ++sym) {
    const unsigned l = code.lengths[sym];
    if (l == 0) continue;
    const uint32_t c = reverse_bits(next[l]++, l);
    codes[sym] = c | (l << 16);
    if (decode)
      for (uint32_t k = c; k < kDecodeEntries; k += uint32_t(1) << l) decode[k] = uint16_t(l | (sym << 8));
  }
}

// Stores the table at out (at least kMaxStoredTableBytes); returns its bytes.
DC_HOST_DEVICE inline size_t write_code(const CodeLengths& code, unsigned alphabet, uint8_t* out) {
  BitSink w(out, kMaxStoredTableBytes);
  w.put(uint32_t(code.kind), 2);
  if (code.kind == CodeKind::single) w.put(code.single, 8);
  if (code.kind == CodeKind::coded) {
    unsigned lo = 0, hi = alphabet - 1;
    while (code.lengths[lo] == 0) ++lo;
    while (code.lengths[hi] == 0) --hi;
    w.put(lo, 8);
    w.put(hi, 8);
    unsigned prev = 0;
    for (unsigned sym = lo; sym <= hi; ++sym) {
      const unsigned l = code.lengths[sym];
      if (l == prev) w.put(0, 1);
      else if (l == prev + 1 || l + 1 == prev) w.put(1u | (l + 1 == prev ? 4u : 0u), 3);
      else w.put(3u | (l << 2), 6);
      prev = l;
    }
  }
  return w.finish();
}

// Reads a stored table from the front of data[0, size): the code and *used (its bytes), or the
// first fault found, in the order the CPU reader always checked them.
DC_HOST_DEVICE inline TableError read_code(const uint8_t* data, size_t size, unsigned alphabet, CodeLengths& code,
                                           size_t* used) {
  code = CodeLengths{};
  BitSource r(data, size);
  TableError error;
  auto take = [&](unsigned n) -> unsigned {
    const unsigned v = r.take(n);
    if (r.used() > 8 * uint64_t(size) && error.fault == TableFault::none) error.fault = TableFault::past_section;
    return v;
  };
  auto failed = [&](TableFault fault, int32_t detail = 0, int32_t detail2 = 0) {
    if (error.fault == TableFault::none) error = {fault, detail, detail2};
    return error;
  };
  const unsigned kind = take(2);
  if (error.fault != TableFault::none) return error;
  if (kind > 2) return failed(TableFault::unknown_kind, int32_t(kind));
  code.kind = CodeKind(kind);
  if (code.kind == CodeKind::single) {
    const unsigned single = take(8);
    if (error.fault != TableFault::none) return error;
    if (single >= alphabet) return failed(TableFault::symbol_outside, int32_t(single));
    code.single = uint8_t(single);
  } else if (code.kind == CodeKind::coded) {
    const unsigned lo = take(8);
    if (error.fault != TableFault::none) return error;
    const unsigned hi = take(8);
    if (error.fault != TableFault::none) return error;
    if (lo >= hi || hi >= alphabet) return failed(TableFault::symbol_range, int32_t(lo), int32_t(hi));
    unsigned prev = 0;
    for (unsigned sym = lo; sym <= hi; ++sym) {
      unsigned l = prev;
      if (take(1)) {
        if (take(1)) l = take(4);
        else l = take(1) ? prev - 1 : prev + 1;  // prev - 1 wraps when prev is 0: caught below
      }
      if (error.fault != TableFault::none) return error;
      if (l > wire::kMaxCodeLength) return failed(TableFault::code_length, int32_t(l));
      code.lengths[sym] = uint8_t(l);
      prev = l;
    }
    if (code.lengths[lo] == 0 || code.lengths[hi] == 0) return failed(TableFault::range_ends);
    uint64_t kraft = 0;
    for (unsigned sym = lo; sym <= hi; ++sym)
      if (code.lengths[sym]) kraft += uint64_t(1) << (wire::kMaxCodeLength - code.lengths[sym]);
    if (kraft != (uint64_t(1) << wire::kMaxCodeLength)) return failed(TableFault::incomplete);
  }
  *used = size_t((r.used() + 7) / 8);
  const unsigned pad = unsigned(r.used() & 7);
  if (pad && (data[*used - 1] >> pad) != 0) return failed(TableFault::padding);
  return error;
}

}  // namespace
}  // namespace dc::compression::gpu
