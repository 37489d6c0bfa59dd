#include "compression/huffman_table.h"

#include <memory>
#include <string>

#include "base/error.h"
#include "compression/form/wire_format.h"

namespace dc::compression {
namespace {

// Package-merge's working memory, one per thread (92 KiB: not on the stack).
gpu::PackageMergeScratch& merge_scratch() {
  thread_local std::unique_ptr<gpu::PackageMergeScratch> scratch = std::make_unique<gpu::PackageMergeScratch>();
  return *scratch;
}

std::string describe(const gpu::TableError& e) {
  switch (e.fault) {
    case gpu::TableFault::past_section: return "it runs past its section";
    case gpu::TableFault::unknown_kind: return "unknown kind " + std::to_string(e.detail);
    case gpu::TableFault::symbol_outside: return "symbol " + std::to_string(e.detail) + " outside the alphabet";
    case gpu::TableFault::symbol_range:
      return "symbol range " + std::to_string(e.detail) + ".." + std::to_string(e.detail2);
    case gpu::TableFault::code_length: return "code length " + std::to_string(e.detail) + " (longest is 11)";
    case gpu::TableFault::range_ends: return "the symbol range does not start and end at a used symbol";
    case gpu::TableFault::incomplete: return "the code lengths do not make a complete prefix code";
    case gpu::TableFault::padding: return "nonzero padding bits";
    case gpu::TableFault::none: break;
  }
  return "no fault";
}

}  // namespace

std::string table_error_message(const gpu::TableError& error) {
  return "compressed message: bad Huffman table: " + describe(error);
}

std::vector<uint8_t> package_merge(const std::vector<uint64_t>& weights, unsigned max_length) {
  std::vector<uint8_t> lengths(weights.size());
  gpu::package_merge(weights.data(), unsigned(weights.size()), max_length, merge_scratch(), lengths.data());
  return lengths;
}

HuffmanTable HuffmanTable::build(const uint32_t* counts, unsigned alphabet) {
  HuffmanTable t;
  t.alphabet_ = alphabet;
  gpu::build_code(counts, alphabet, merge_scratch(), t.code_);
  t.finish();
  return t;
}

void HuffmanTable::finish() {
  decode_.assign(kind() == Kind::empty ? 0 : gpu::kDecodeEntries, 0);
  gpu::CanonicalScratch scratch;
  gpu::canonical_codes(code_, alphabet_, codes_.data(), decode_.empty() ? nullptr : decode_.data(), scratch);
}

size_t HuffmanTable::write(uint8_t* out) const { return gpu::write_code(code_, alphabet_, out); }

HuffmanTable HuffmanTable::read(const uint8_t* data, size_t size, unsigned alphabet, size_t* used) {
  HuffmanTable t;
  t.alphabet_ = alphabet;
  const gpu::TableError error = gpu::read_code(data, size, alphabet, t.code_, used);
  if (error.fault != gpu::TableFault::none) fail(dcInvalidArgument, table_error_message(error));
  t.finish();
  return t;
}

}  // namespace dc::compression
