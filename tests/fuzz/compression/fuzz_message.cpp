// libFuzzer target: whole-message and piece-wise decoding of arbitrary bytes, and the GPU decoder
// (emulated) beside the CPU's. The first byte picks the destination type, whether the checksums are
// recomputed first (so that mangled structure reaches the checks behind them), and how the piece
// decoder splits the message. Oracle: no crash, no sanitizer report; a bad message is a dc::Error;
// the GPU decoder adds the same bits or refuses with the same words (decode_parity.h).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "base/error.h"
#include "compression/decoder.h"
#include "compression/form/wire_format.h"
#include "compression/piece_decoder.h"
#include "tests/fuzz/compression/decode_parity.h"
#include "tests/fuzz/compression/reseal.h"

namespace {

constexpr uint64_t kMaxCount = uint64_t(1) << 18;  // destination buffers the fuzzer allocates

void decode_whole(std::span<const uint8_t> msg, const dc::compression::Target& dst) {
  try {
    dc::compression::decode_accumulate(msg, dst);
  } catch (const dc::Error&) {}
}

void decode_pieces(std::span<const uint8_t> msg, const dc::compression::Target& dst, size_t piece) {
  try {
    dc::compression::PieceDecoder d(dst);
    for (size_t pos = 0; pos < msg.size(); pos += piece) d.consume(msg.subspan(pos, std::min(piece, msg.size() - pos)));
    d.finish();
  } catch (const dc::Error&) {}
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const uint8_t mode = data[0];
  std::vector<uint8_t> msg(data + 1, data + size);
  if (mode & 1) dc::compression::fuzz::reseal(msg);
  const uint64_t count = msg.size() >= 16 ? dc::compression::wire::get_u64(msg.data() + 8) : 0;
  if (count > kMaxCount) return 0;
  const dcDataType_t types[4] = {dcFloat32, dcFloat16, dcBfloat16, dcFloat32};
  const dcDataType_t type = types[(mode >> 1) & 3];
  std::vector<uint8_t> dst(count * 4 + 4, 0);
  const dc::compression::fuzz::DecoderComparison parity = dc::compression::fuzz::compare_decoders(
      {msg, type, count, false, dst}, {2, 3}, dc::kernels::EmulatorMode::Sequential);
  if (!parity.difference.empty()) {
    std::fprintf(stderr, "GPU decoder: %s\n", parity.difference.c_str());
    std::abort();
  }
  const dc::compression::Target target{type, dst.data(), count};
  decode_whole(msg, target);
  decode_pieces(msg, target, size_t(1) << ((mode >> 3) & 15));
  return 0;
}
