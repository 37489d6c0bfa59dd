// The compressed all-reduce through the native API on threads-as-ranks: bitwise-identical results
// on every rank, close to the sum (exact for a lossless spec), per-call statistics, error feedback
// held by handles, clear errors for bad specs and handles, and ranks that disagree on the spec.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "deepcomm/deepcomm.h"
#include "tests/support/collective_check.h"

namespace {

// Deterministic gradient-like values: mostly small, a few large.
float gradient_like(int rank, size_t i, int call = 0) {
  uint64_t h = (uint64_t(rank) + 1) * 0x9E3779B97F4A7C15ull ^ (i * 0xC2B2AE3D27D4EB4Full) ^ (uint64_t(call) << 40);
  h ^= h >> 29;
  const float u = float(h % 100000) / 100000.0f - 0.5f;
  return (i % 101 == 0 ? 4.0f : 0.02f) * u;
}

uint64_t digest(const void* data, size_t bytes) {
  uint64_t h = 1469598103934665603ull;
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < bytes; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

std::string last_error(const std::string& what, dcResult_t r) {
  return what + " returned " + std::to_string(r) + ": " + dcGetLastError();
}

struct Setting {
  const char* spec;
  const char* algo;  // DEEPCOMM_ALGO
  int nranks;
};

class CompressedAllReduce : public ::testing::TestWithParam<Setting> {
 protected:
  void SetUp() override { setenv("DEEPCOMM_ALGO", GetParam().algo, 1); }
  void TearDown() override { unsetenv("DEEPCOMM_ALGO"); }
};

// Every rank gets the same bits; q8 stays within its quantization error of the sum; the statistics
// say what went over the wire; error feedback carries what one call left out into the next.
TEST_P(CompressedAllReduce, IdenticalOnEveryRankAndCloseToTheSum) {
  const Setting setting = GetParam();
  const int n = setting.nranks;
  const size_t count = 200003;
  std::vector<uint64_t> digests(n);
  std::string errors = dctest::run_as_threads(n, [&](int rank, dcComm_t comm) -> std::string {
    std::vector<float> in(count), out(count);
    for (size_t i = 0; i < count; ++i) in[i] = gradient_like(rank, i);
    dcResidual_t residual = nullptr;
    if (std::string(setting.spec).find("ef") != std::string::npos)
      if (dcResult_t r = dcResidualCreate(&residual, count); r != dcSuccess) return last_error("dcResidualCreate", r);
    dcCompressStats_t stats{};
    for (int call = 0; call < 3; ++call) {
      if (dcResult_t r = dcCompressedAllReduce(in.data(), out.data(), count, dcFloat32, dcSum, setting.spec, residual,
                                               comm, nullptr, &stats);
          r != dcSuccess)
        return last_error("dcCompressedAllReduce", r);
    }
    digests[rank] = digest(out.data(), count * sizeof(float));
    if (stats.wireBytes == 0 || stats.rawBytes == 0 || stats.ratio < 2.5)
      return "statistics say raw " + std::to_string(stats.rawBytes) + ", wire " + std::to_string(stats.wireBytes);
    if (std::string(stats.algorithm) != setting.algo) return std::string("ran ") + stats.algorithm;
    if (stats.selectSeconds <= 0 || stats.decodeSeconds <= 0 || stats.totalSeconds <= 0)
      return "codec times are missing from the statistics";
    if (std::string(setting.spec).rfind("q8", 0) == 0) {
      // Each input's quantization errs by at most half a step of its block (2/126: the largest
      // values are 2), the owner's of the sum by half a step of the sum's (2n/126); with error
      // feedback a call's error is the difference of two residuals, each within half a step.
      const bool ef = residual != nullptr;
      const double tolerance = (ef ? 1.0 : 0.5) * (n * 2.0 / 126 + 2.0 * n / 126) + 1e-5;
      for (size_t i = 0; i < count; ++i) {
        double want = 0;
        for (int r = 0; r < n; ++r) want += gradient_like(r, i);
        if (std::fabs(out[i] - want) > tolerance)
          return "element " + std::to_string(i) + " is " + std::to_string(out[i]) + ", the sum " + std::to_string(want);
      }
    }
    if (residual) dcResidualDestroy(residual);
    return "";
  });
  EXPECT_EQ(errors, "");
  for (int r = 1; r < n; ++r) EXPECT_EQ(digests[r], digests[0]) << "rank " << r << " differs bitwise";
}

INSTANTIATE_TEST_SUITE_P(
    Specs, CompressedAllReduce,
    ::testing::Values(Setting{"q8", "twophase", 3}, Setting{"q8,huffman,ef", "twophase", 4},
                      Setting{"q8,ef", "sparsegather", 2}, Setting{"topk:0.01,q8,huffman,ef", "twophase", 3},
                      Setting{"topk:0.01,q8,huffman,ef", "sparsegather", 4}, Setting{"auto,ef", "twophase", 2}),
    [](const auto& info) {
      std::string name = std::string(info.param.algo) + "_" + std::to_string(info.param.nranks) + "_";
      for (char c : std::string(info.param.spec)) name += std::isalnum(c) ? c : '_';
      return name;
    });

// Small integers in a 16-bit float type (exact there).
uint16_t narrow(float v, dcDataType_t type) {
  uint32_t bits;
  std::memcpy(&bits, &v, 4);
  if (type == dcBfloat16) return uint16_t(bits >> 16);
  if (v == 0) return 0;
  const int e = int((bits >> 23) & 0xff) - 127;
  return uint16_t(((bits >> 31) << 15) | uint32_t(e + 15) << 10 | ((bits >> 13) & 0x3ff));
}

// A spec that keeps everything as float32 adds exactly like the dense all-reduce, for every
// datatype and op, in place and out of place.
TEST(CompressedAllReduceExact, LosslessSpecMatchesTheDenseResult) {
  const int n = 3;
  std::string errors = dctest::run_as_threads(n, [&](int rank, dcComm_t comm) -> std::string {
    for (dcDataType_t type : {dcFloat32, dcFloat16, dcBfloat16}) {
      for (dcRedOp_t op : {dcSum, dcAvg}) {
        for (bool in_place : {false, true}) {
          const size_t count = 70001, elem = type == dcFloat32 ? 4 : 2;
          std::vector<unsigned char> in(count * elem), dense(count * elem), out(count * elem);
          for (size_t i = 0; i < count; ++i) {
            const float v = float(int((i * 7 + rank * 3) % 9) - 4);  // sums stay exact in every type
            if (type == dcFloat32) std::memcpy(&in[4 * i], &v, 4);
            else {
              const uint16_t h = narrow(v, type);
              std::memcpy(&in[2 * i], &h, 2);
            }
          }
          if (dcResult_t r = dcAllReduce(in.data(), dense.data(), count, type, op, comm, nullptr); r != dcSuccess)
            return last_error("dcAllReduce", r);
          const std::vector<unsigned char> sent = in;
          void* recv = in_place ? static_cast<void*>(in.data()) : out.data();
          if (dcResult_t r =
                  dcCompressedAllReduce(in.data(), recv, count, type, op, "topk:1", nullptr, comm, nullptr, nullptr);
              r != dcSuccess)
            return last_error("dcCompressedAllReduce", r);
          const std::string what =
              std::to_string(type) + (op == dcSum ? " sum" : " avg") + (in_place ? " in place" : "");
          if (std::memcmp(recv, dense.data(), count * elem) != 0) return "differs from the dense result: " + what;
          if (!in_place && in != sent) return "the send buffer was written: " + what;
        }
      }
    }
    return "";
  });
  EXPECT_EQ(errors, "");
}

// Two hosts of two ranks each (host identities set per rank): the plan is dense inside each host
// and compressed across; every rank gets the same bits (compared through max and min all-reduces
// of a digest).
TEST(CompressedAllReduceHosts, DenseInsideHostsCompressedAcross) {
  std::string errors = dctest::run_as_processes(
      4, {},
      [](int rank, int n, const dcUniqueId& id) {
        setenv("DEEPCOMM_HOST_ID", rank < 2 ? "compressed-test-host-a" : "compressed-test-host-b", 1);
        dcComm_t comm;
        if (dcCommInitRank(&comm, n, &id, rank, nullptr) != dcSuccess) return 2;
        const size_t count = 300007;
        std::vector<float> grad(count), out(count);
        for (size_t i = 0; i < count; ++i) grad[i] = gradient_like(rank, i);
        dcResidual_t residual;
        dcCompressStats_t stats{};
        if (dcResidualCreate(&residual, count) != dcSuccess) return 3;
        for (int call = 0; call < 2; ++call)
          if (dcCompressedAllReduce(grad.data(), out.data(), count, dcFloat32, dcAvg, "topk:0.01,q8,huffman,ef",
                                    residual, comm, nullptr, &stats) != dcSuccess)
            return fprintf(stderr, "%s\n", dcGetLastError()), 4;
        if (std::string(stats.algorithm) != "hiercompressed") return fprintf(stderr, "ran %s\n", stats.algorithm), 5;
        int64_t d = int64_t(digest(out.data(), count * sizeof(float)) >> 1), lo = 0, hi = 0;
        dcAllReduce(&d, &lo, 1, dcInt64, dcMin, comm, nullptr);
        dcAllReduce(&d, &hi, 1, dcInt64, dcMax, comm, nullptr);
        // Only ranks of one host's rail pair cross the network: their messages are compressed.
        dcCounters_t c{};
        dcCommGetCounters(comm, &c);
        dcResidualDestroy(residual);
        dcCommDestroy(comm);
        if (lo != hi) return 6;
        return c.tcpBytesSent * 20 < 2 * count * sizeof(float) ? 0 : 7;
      },
      120);
  EXPECT_EQ(errors, "");
}

}  // namespace
