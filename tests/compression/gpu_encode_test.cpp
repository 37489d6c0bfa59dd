// The GPU encoder's kernels, run through the emulator, write the CPU encoder's bytes and residuals
// (issue 31: one wire format): every dense and top-k spec, element type and gradient shape, on
// several grid shapes, over error-feedback steps.
#include <gtest/gtest.h>

#include <cstring>

#include "compression/gpu/emulated_encoder.h"
#include "gradient_matrix.h"

namespace dc::compression::test {
namespace {

using kernels::EmulatorMode;
using kernels::GridShape;

const char* const kSpecs[] = {"q8",
                              "q8,huffman",
                              "q8:stochastic,huffman",
                              "q8,huffman,ef",
                              "q8:stochastic,ef:0.9",
                              "q8:16,huffman,ef:0.5",
                              "q8:stochastic:100,huffman",
                              "q8:4096,ef,huffman"};

// Top-k: exact and sampled, fractions whose chunks come out sparse, dense or both, every value
// form (float32, q8, raw or Huffman-coded), with and without error feedback.
const char* const kSparseSpecs[] = {"topk:0.01",
                                    "topk:0.01,huffman,ef",
                                    "topk:0.001,q8,huffman,ef",
                                    "topk:0.001:sampled,q8,huffman,ef",
                                    "topk:0.05:sampled,q8:stochastic:16,ef:0.9",
                                    "topk:0.3,q8,huffman,ef:0.5",
                                    "topk:0.3:sampled,ef",
                                    "topk:0.125:sampled,q8:stochastic,huffman",
                                    "topk:1,q8,ef",
                                    "topk:0.02:sampled,huffman"};

struct Encoded {
  std::vector<uint8_t> message;
  std::vector<float> residual;
  bool nonfinite;
  uint64_t sent;
};

// Three error-feedback steps of one input (the residual carries between them), by the CPU encoder
// or the emulated kernels.
template <class EncodeOnce>
std::vector<Encoded> steps(const Spec& spec, TypedBuffer& in, EncodeOnce&& encode_once) {
  std::vector<Encoded> out;
  // One element more than the input, so that a residual of 0 elements still has an address.
  std::vector<float> residual(in.count() + 1, 0.0f);
  for (uint64_t seed = 7; seed < 10; ++seed) {
    std::vector<uint8_t> msg(max_message_bytes(spec, in.count()));
    const std::span<float> r = spec.error_feedback ? std::span<float>(residual.data(), in.count()) : std::span<float>();
    const EncodeResult result = encode_once(r, seed, std::span<uint8_t>(msg));
    msg.resize(result.bytes);
    out.push_back({msg, residual, result.nonfinite, result.sent});
  }
  return out;
}

void expect_same(const std::vector<Encoded>& cpu, const std::vector<Encoded>& gpu, const std::string& what) {
  ASSERT_EQ(cpu.size(), gpu.size());
  for (size_t s = 0; s < cpu.size(); ++s) {
    ASSERT_EQ(cpu[s].message.size(), gpu[s].message.size()) << what << " step " << s;
    ASSERT_EQ(0, std::memcmp(cpu[s].message.data(), gpu[s].message.data(), cpu[s].message.size()))
        << what << " step " << s << ": the messages differ";
    ASSERT_EQ(cpu[s].residual.size(), gpu[s].residual.size());
    for (size_t i = 0; i < cpu[s].residual.size(); ++i)
      ASSERT_EQ(bits(cpu[s].residual[i]), bits(gpu[s].residual[i])) << what << " step " << s << " residual " << i;
    EXPECT_EQ(cpu[s].nonfinite, gpu[s].nonfinite) << what;
    EXPECT_EQ(cpu[s].sent, gpu[s].sent) << what;
  }
}

void compare(const char* spec_text, uint32_t chunk_log2, dcDataType_t type, const GradientCase& g, GridShape grid,
             EmulatorMode mode = EmulatorMode::Sequential) {
  Spec spec = parse_spec(spec_text);
  spec.chunk_log2 = chunk_log2;
  TypedBuffer in(type, g.values);
  Encoder encoder;
  const auto cpu = steps(spec, in, [&](std::span<float> r, uint64_t seed, std::span<uint8_t> out) {
    return encoder.encode(spec, type, in.data(), in.count(), r, seed, out);
  });
  const auto gpu = steps(spec, in, [&](std::span<float> r, uint64_t seed, std::span<uint8_t> out) {
    return gpu::encode_emulated(spec, type, in.data(), in.count(), r, seed, out, grid, mode);
  });
  expect_same(cpu, gpu,
              std::string(spec_text) + " chunk 2^" + std::to_string(chunk_log2) + " " + type_name(type) + " " + g.name);
}

TEST(GpuEncode, WritesTheCpuBytesForEveryDenseSpecTypeAndShape) {
  const std::vector<GradientCase> matrix = gradient_matrix();
  for (const char* spec : kSpecs)
    for (dcDataType_t type : {dcFloat32, dcFloat16, dcBfloat16})
      for (const GradientCase& g : matrix) compare(spec, 12, type, g, {3, 5});
}

TEST(GpuEncode, WritesTheCpuBytesForEveryTopKSpecTypeAndShape) {
  const std::vector<GradientCase> matrix = gradient_matrix();
  for (const char* spec : kSparseSpecs)
    for (dcDataType_t type : {dcFloat32, dcFloat16, dcBfloat16})
      for (const GradientCase& g : matrix) compare(spec, 12, type, g, {3, 5});
}

// Ties at the k-th magnitude are kept by the lower index, across scan blocks; a threshold that
// admits everything (a constant) and one that admits fewer than k (mostly zeros) both reach the
// CPU's set.
TEST(GpuEncode, TopKTiesGoToTheLowerIndex) {
  std::vector<float> ties(30000);
  for (size_t i = 0; i < ties.size(); ++i) ties[i] = float(int(i % 5) - 2) * 0.25f;
  for (const char* spec : {"topk:0.1,q8,huffman,ef", "topk:0.1:sampled,ef", "topk:0.5:sampled,q8,ef"})
    for (GridShape grid : {GridShape{1, 1}, GridShape{7, 3}}) compare(spec, 12, dcFloat32, {"ties", ties}, grid);
}

TEST(GpuEncode, TheGridShapeAndTheChunkSizeChangeNoByte) {
  const std::vector<GradientCase> matrix = gradient_matrix();
  for (const GradientCase& g : matrix) {
    for (GridShape grid : {GridShape{1, 1}, GridShape{2, 64}})
      compare("q8:stochastic,huffman,ef", 12, dcFloat32, g, grid);
    compare("q8,huffman,ef", 16, dcBfloat16, g, {4, 8});
    compare("topk:0.001:sampled,q8,huffman,ef", 16, dcFloat32, g, {2, 64});
    compare("topk:0.01,q8:stochastic,huffman,ef", 16, dcFloat16, g, {1, 1});
  }
}

TEST(GpuEncode, EmulatedThreadsRunSideBySide) {
  const GradientCase g{"laplace", make_values(Dist::laplace, 9000, 5)};
  compare("q8,huffman,ef", 12, dcFloat32, g, {2, 4}, EmulatorMode::Threads);
  compare("topk:0.01:sampled,q8,huffman,ef", 12, dcFloat32, g, {2, 4}, EmulatorMode::Threads);
  compare("topk:0.01,huffman,ef", 12, dcFloat32, g, {2, 4}, EmulatorMode::Threads);
}

TEST(GpuEncode, RefusesWhatTheCpuRefusesAndAutoSpecs) {
  std::vector<float> x(100, 1.0f), r(100, 0.0f);
  std::vector<uint8_t> out(max_message_bytes(parse_spec("auto"), 100));
  const auto message_of = [&](const char* spec, std::span<float> residual, size_t out_size) -> std::string {
    try {
      gpu::encode_emulated(parse_spec(spec), dcFloat32, x.data(), x.size(), residual, 1,
                           std::span<uint8_t>(out.data(), out_size));
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), dcInvalidArgument);
      return e.what();
    }
    return "accepted";
  };
  EXPECT_NE(message_of("auto", {}, out.size()).find("auto is chosen on the CPU"), std::string::npos);
  EXPECT_NE(message_of("q8,ef", {}, out.size()).find("no residual"), std::string::npos);
  EXPECT_NE(message_of("q8", r, out.size()).find("residual was given"), std::string::npos);
  EXPECT_NE(message_of("q8", {}, 10).find("below the worst case"), std::string::npos);
}

}  // namespace
}  // namespace dc::compression::test
