// What the compressed all-reduce refuses, and how: bad specs, datatypes, ops and residual handles
// are dcInvalidArgument with a message and touch nothing; a residual in use cannot be reset or
// destroyed; ranks that pass different specs get dcInvalidUsage naming the mismatch; a corrupted
// message is dcRemoteError on the rank that received it (a fake peer sends it through the
// transport with the operation's tag), never garbage in the output.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "compression/compression.h"
#include "deepcomm/deepcomm.h"
#include "src/core/communicator.h"
#include "src/exec/engine_call.h"
#include "tests/support/collective_check.h"

namespace {

bool says(const char* needle) { return std::string(dcGetLastError()).find(needle) != std::string::npos; }

TEST(CompressedAllReduceErrors, BadArgumentsAreClearErrorsAndTouchNothing) {
  dcComm_t comms[1];
  ASSERT_EQ(dcCommInitAll(comms, 1), dcSuccess);
  dcComm_t comm = comms[0];
  std::vector<float> in(1000, 1.0f), out(1000, 7.0f);
  dcResidual_t residual = nullptr, small = nullptr;
  ASSERT_EQ(dcResidualCreate(&residual, 1000), dcSuccess);
  ASSERT_EQ(dcResidualCreate(&small, 999), dcSuccess);
  auto call = [&](const char* spec, dcResidual_t r, dcDataType_t type = dcFloat32, dcRedOp_t op = dcSum) {
    return dcCompressedAllReduce(in.data(), out.data(), 1000, type, op, spec, r, comm, nullptr, nullptr);
  };
  EXPECT_EQ(call("topk:1.5,q8", nullptr), dcInvalidArgument);
  EXPECT_TRUE(says("topk:1.5"));
  EXPECT_EQ(call("q8,bogus", nullptr), dcInvalidArgument);
  EXPECT_TRUE(says("bogus"));
  EXPECT_EQ(call(nullptr, nullptr), dcInvalidArgument);
  EXPECT_EQ(call("q8,ef", nullptr), dcInvalidArgument);
  EXPECT_TRUE(says("residual"));
  EXPECT_EQ(call("q8", residual), dcInvalidArgument);
  EXPECT_TRUE(says("no error feedback"));
  EXPECT_EQ(call("q8,ef", small), dcInvalidArgument);
  EXPECT_TRUE(says("999"));
  EXPECT_EQ(call("q8", nullptr, dcInt32), dcInvalidArgument);
  EXPECT_EQ(call("q8", nullptr, dcFloat64), dcInvalidArgument);
  EXPECT_EQ(call("q8", nullptr, dcFloat32, dcMax), dcInvalidArgument);
  EXPECT_TRUE(says("sum or avg"));
  EXPECT_EQ(
      dcCompressedAllReduce(in.data(), out.data(), 1000, dcFloat32, dcSum, "q8", nullptr, nullptr, nullptr, nullptr),
      dcInvalidArgument);
  for (float v : out) ASSERT_EQ(v, 7.0f);  // nothing was touched

  EXPECT_EQ(dcResidualDestroy(small), dcSuccess);
  EXPECT_EQ(call("q8,ef", small), dcInvalidArgument);  // a destroyed handle
  EXPECT_TRUE(says("not a live handle"));
  EXPECT_EQ(dcResidualReset(small), dcInvalidArgument);
  EXPECT_EQ(dcResidualDestroy(small), dcInvalidArgument);
  EXPECT_EQ(dcResidualCreate(&small, 0), dcInvalidArgument);
  EXPECT_EQ(dcResidualCreate(nullptr, 10), dcInvalidArgument);

  EXPECT_EQ(call("q8,ef", residual), dcSuccess);  // one rank: a copy
  for (size_t i = 0; i < in.size(); ++i) ASSERT_EQ(out[i], in[i]);
  EXPECT_EQ(dcResidualReset(residual), dcSuccess);
  EXPECT_EQ(dcResidualDestroy(residual), dcSuccess);
  EXPECT_EQ(dcCommResetCompression(comm), dcSuccess);
  EXPECT_EQ(dcCommResetCompression(nullptr), dcInvalidArgument);
  EXPECT_EQ(dcCommDestroy(comm), dcSuccess);
}

TEST(CompressedAllReduceErrors, ResidualInUseCannotBeResetOrDestroyed) {
  std::string errors = dctest::run_as_threads(2, [](int rank, dcComm_t comm) -> std::string {
    const size_t count = 1 << 20;
    std::vector<float> in(count, 1.0f + rank), out(count);
    dcResidual_t residual;
    if (dcResidualCreate(&residual, count) != dcSuccess) return dcGetLastError();
    dcRequest_t request = nullptr;
    if (dcCompressedAllReduce(in.data(), out.data(), count, dcFloat32, dcSum, "topk:0.01,q8,ef", residual, comm,
                              &request, nullptr) != dcSuccess)
      return dcGetLastError();
    int done = 0;
    std::string problem;
    if (dcTest(request, &done) == dcSuccess && !done) {  // still pending: the residual is in use
      if (dcResidualReset(residual) != dcInvalidUsage) problem = "reset of a residual in use was not refused";
      if (dcResidualDestroy(residual) != dcInvalidUsage) problem = "destroy of a residual in use was not refused";
    }
    if (!done && dcWait(request) != dcSuccess) return dcGetLastError();
    if (dcResidualReset(residual) != dcSuccess || dcResidualDestroy(residual) != dcSuccess) return dcGetLastError();
    return problem;
  });
  EXPECT_EQ(errors, "");
}

TEST(CompressedAllReduceErrors, RanksWithDifferentSpecsFailWithAMessage) {
  std::string errors = dctest::run_as_threads(2, [](int rank, dcComm_t comm) -> std::string {
    const size_t count = 100000;
    std::vector<float> in(count, 1.0f), out(count);
    const dcResult_t r = dcCompressedAllReduce(in.data(), out.data(), count, dcFloat32, dcSum,
                                               rank == 0 ? "q8" : "q8:stochastic", nullptr, comm, nullptr, nullptr);
    if (r != dcInvalidUsage) return "returned " + std::to_string(r) + " (" + dcGetLastError() + ")";
    if (!says("compressed")) return std::string("the message does not name the compression: ") + dcGetLastError();
    return "";
  });
  EXPECT_EQ(errors, "");
}

// Rank 1 is no real participant: it sends rank 0 a compressed message with one byte flipped, under
// the tag rank 0's plan expects from it (phase 0, ring step 0: tag 0), bypassing its own plan.
void corrupted_message_is_a_remote_error(const char* algorithm, size_t count, size_t message_elements) {
  setenv("DEEPCOMM_ALGO", algorithm, 1);
  std::string errors = dctest::run_as_threads(2, [&](int rank, dcComm_t comm) -> std::string {
    std::vector<float> in(count, 0.5f), out(count, 3.0f);
    if (rank == 0) {
      const dcResult_t r = dcCompressedAllReduce(in.data(), out.data(), count, dcFloat32, dcSum, "q8,huffman", nullptr,
                                                 comm, nullptr, nullptr);
      if (r != dcRemoteError) return "returned " + std::to_string(r) + " (" + dcGetLastError() + ")";
      if (!says("checksum")) return std::string("the message does not say what was wrong: ") + dcGetLastError();
      return "";
    }
    const auto spec = dc::compression::parse_spec("q8,huffman");
    // Owned by the send's completion: the transport reads it until then.
    auto message = std::make_shared<std::vector<uint8_t>>(dc::compression::max_message_bytes(spec, message_elements));
    message->resize(
        dc::compression::Encoder().encode(spec, dcFloat32, in.data(), message_elements, nullptr, 1, *message).bytes);
    (*message)[message->size() / 2] ^= 0x10;
    const dc::Tag tag{comm->exec.id, comm->exec.next_collective_seq, 0, 0};
    dc::call_on_engine(
        [&] {
          comm->exec.peer(0)->send(tag, message->data(), message->size(), [message](const dc::Status&, size_t) {});
          return 0;
        },
        10000, "sending a corrupted message");
    // Rank 0 fails its call and tells this rank.
    for (int i = 0; i < 500 && comm->exec.async_error.load() == dcSuccess; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (comm->exec.async_error.load() != dcRemoteError) return "rank 0's failure did not reach rank 1";
    return "";
  });
  unsetenv("DEEPCOMM_ALGO");
  EXPECT_EQ(errors, "");
}

TEST(CompressedAllReduceErrors, CorruptedMessageDecodedPieceByPieceIsARemoteError) {
  // Two-phase: rank 0 owns the first half and receives rank 1's encode of it in pieces.
  corrupted_message_is_a_remote_error("twophase", 1 << 21, 1 << 20);
}

TEST(CompressedAllReduceErrors, CorruptedMessageDecodedWholeIsARemoteError) {
  // Sparse all-gather: rank 0 receives rank 1's whole message, then decodes it.
  corrupted_message_is_a_remote_error("sparsegather", 100000, 100000);
}

}  // namespace
