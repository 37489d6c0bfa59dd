// libFuzzer target: the Huffman table reader and both stream decoders (8-bit symbols in up to four
// streams, sparse gap/value elements). Oracle: a stream that decodes is exactly what encoding
// its symbols gives back (the codes are canonical and the decoder accepts only exact endings).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "base/error.h"
#include "compression/codec_isa.h"
#include "compression/form/wire_format.h"
#include "compression/huffman_table.h"
#include "compression/sparse_coder.h"

namespace {

namespace c = dc::compression;

void check(bool ok) {
  if (!ok) std::abort();
}

// 8-bit symbols: count from two bytes, streams as a message section would split them.
void dense(const c::HuffmanTable& table, const uint8_t* data, size_t size, size_t count, c::Isa isa) {
  if (table.kind() == c::HuffmanTable::Kind::empty) return;
  const c::CodecKernels& k = c::codec_kernels(isa);
  c::StreamsView v{};
  v.count = c::wire::streams_for(count);
  size_t pos = 4 * (v.count - 1);
  if (size < pos) return;
  for (unsigned s = 0; s < v.count; ++s) {
    const size_t n = s + 1 < v.count ? c::wire::get_u32(data + 4 * s) : size - pos;
    if (n > size - pos) return;
    v.data[s] = data + pos;
    v.size[s] = n;
    pos += n;
  }
  std::vector<uint8_t> out(count);
  if (!k.huffman_decode(v, table.decode_table(), out.data(), count)) return;
  for (unsigned s = 0; s < v.count; ++s) {
    const uint64_t b = c::wire::segment_begin(count, v.count, s), e = c::wire::segment_begin(count, v.count, s + 1);
    std::vector<uint8_t> again((e - b) * 2 + 16);
    const size_t n = k.huffman_encode(out.data() + b, e - b, table.codes(), again.data(), again.size());
    check(n == v.size[s] && std::memcmp(again.data(), v.data[s], n) == 0);
  }
}

void sparse(const c::HuffmanTable& gaps, const c::HuffmanTable* values, const uint8_t* data, size_t size,
            size_t count) {
  if (gaps.kind() == c::HuffmanTable::Kind::empty || (values && values->kind() == c::HuffmanTable::Kind::empty)) return;
  std::vector<uint32_t> g(count);
  std::vector<uint8_t> sym(count);
  std::vector<float> f(count);
  if (!c::decode_sparse_stream(data, size, count, gaps, values, 21, g.data(), sym.data(), f.data())) return;
  std::vector<uint8_t> again(count * 8 + 16);
  const size_t n =
      c::encode_sparse_stream(g.data(), sym.data(), f.data(), count, gaps, values, again.data(), again.size());
  check(n == size && std::memcmp(again.data(), data, n) == 0);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 3) return 0;
  const uint8_t mode = data[0];
  const size_t count = size_t(data[1]) | size_t(data[2] & 0x1f) << 8;  // < 8192
  data += 3;
  size -= 3;
  try {
    size_t used = 0;
    const unsigned alphabet = (mode & 1) ? c::wire::kGapAlphabet : c::wire::kValueAlphabet;
    const c::HuffmanTable first = c::HuffmanTable::read(data, size, alphabet, &used);
    if (mode & 1) {
      // A gap table, then a value table unless the values are float32.
      const uint8_t* rest = data + used;
      size_t left = size - used;
      if (mode & 2) {
        size_t used2 = 0;
        const c::HuffmanTable values = c::HuffmanTable::read(rest, left, c::wire::kValueAlphabet, &used2);
        sparse(first, &values, rest + used2, left - used2, count);
      } else {
        sparse(first, nullptr, rest, left, count);
      }
    } else {
      const c::Isa isa = (mode & 2) && c::isa_available(c::Isa::avx2) ? c::Isa::avx2 : c::Isa::baseline;
      dense(first, data + used, size - used, count, isa);
    }
  } catch (const dc::Error&) {}
  return 0;
}
