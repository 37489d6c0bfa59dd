// Lifetimes across threads: a queued pre-multiplied sum keeps the scalar it was issued with after
// its op is destroyed and the slot reused; abort on one thread while calls enter on others frees
// nothing in use; an engine call that times out never runs; the scalable init checks the number of
// ids before reading them.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <thread>
#include <vector>

#include "base/error.h"
#include "deepcomm/deepcomm.h"
#include "src/exec/engine.h"
#include "src/exec/engine_call.h"

namespace {

class Lifetimes : public ::testing::Test {
 protected:
  // Every collective on the engine (the flat board would run small ones on the caller's thread).
  void SetUp() override { setenv("DEEPCOMM_FLAT_BYTES", "0", 1); }
  void TearDown() override { unsetenv("DEEPCOMM_FLAT_BYTES"); }
};

// ALREADY FIXED on main (OpArgs carries the scalar by value): this would have caught it. Rank 0's
// pre-multiplied sum waits in the queue behind an all-reduce that rank 1 joins late; meanwhile
// rank 0 destroys the op and a new op with another scalar takes its slot.
TEST_F(Lifetimes, QueuedPreMulSumKeepsItsScalar) {
  dcComm_t comms[2];
  ASSERT_EQ(dcCommInitAll(comms, 2), dcSuccess) << dcGetLastError();
  constexpr size_t n = 1024;
  std::vector<float> x0(n, 1.f), y0(n), z0(n), x1(n, 1.f), y1(n), z1(n);
  std::thread late([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    EXPECT_EQ(dcAllReduce(x1.data(), y1.data(), n, dcFloat32, dcSum, comms[1], nullptr), dcSuccess);
    const float two = 2.f;
    dcRedOp_t op;
    ASSERT_EQ(dcRedOpCreatePreMulSum(&op, &two, dcFloat32, comms[1]), dcSuccess);
    EXPECT_EQ(dcAllReduce(x1.data(), z1.data(), n, dcFloat32, op, comms[1], nullptr), dcSuccess);
    dcRedOpDestroy(op, comms[1]);
  });
  dcRequest_t first, second;
  ASSERT_EQ(dcAllReduce(x0.data(), y0.data(), n, dcFloat32, dcSum, comms[0], &first), dcSuccess);
  const float two = 2.f, thousand = 1000.f;
  dcRedOp_t op, reused;
  ASSERT_EQ(dcRedOpCreatePreMulSum(&op, &two, dcFloat32, comms[0]), dcSuccess);
  ASSERT_EQ(dcAllReduce(x0.data(), z0.data(), n, dcFloat32, op, comms[0], &second), dcSuccess);
  ASSERT_EQ(dcRedOpDestroy(op, comms[0]), dcSuccess);
  ASSERT_EQ(dcRedOpCreatePreMulSum(&reused, &thousand, dcFloat32, comms[0]), dcSuccess);
  EXPECT_EQ(reused, op) << "the test needs the destroyed op's slot to be reused";
  EXPECT_EQ(dcWait(first), dcSuccess) << dcGetLastError();
  EXPECT_EQ(dcWait(second), dcSuccess) << dcGetLastError();
  late.join();
  EXPECT_EQ(z0[0], 4.f) << "rank 0 used a scalar other than the one it issued the operation with";
  EXPECT_EQ(z0[n - 1], 4.f);
  EXPECT_EQ(z1[0], 4.f);
  dcRedOpDestroy(reused, comms[0]);
  dcCommDestroy(comms[0]);
  dcCommDestroy(comms[1]);
}

// Rank 0 is aborted by one thread while another keeps issuing all-reduces on it and a third keeps
// asking for its size and error; rank 1 keeps calling until its peer is gone. Nothing crashes or
// hangs (the sanitizer builds check that nothing freed is touched), and every call after the abort
// fails cleanly.
TEST_F(Lifetimes, AbortWhileOtherThreadsEnter) {
  for (int round = 0; round < 8; ++round) {
    dcComm_t comms[2];
    ASSERT_EQ(dcCommInitAll(comms, 2), dcSuccess) << dcGetLastError();
    auto caller = [&](dcComm_t comm, dcResult_t* last) {
      std::vector<float> data(256, 1.f);
      while ((*last = dcAllReduce(data.data(), data.data(), data.size(), dcFloat32, dcSum, comm, nullptr)) ==
             dcSuccess) {}
    };
    dcResult_t last0 = dcSuccess, last1 = dcSuccess, query = dcSuccess;
    std::thread issuer(caller, comms[0], &last0);
    std::thread peer(caller, comms[1], &last1);
    std::thread asker([&] {
      int count = 0;
      dcResult_t error;
      while ((query = dcCommCount(comms[0], &count)) == dcSuccess &&
             (query = dcCommGetAsyncError(comms[0], &error)) == dcSuccess) {}
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(5 * round));
    EXPECT_EQ(dcCommAbort(comms[0]), dcSuccess) << dcGetLastError();
    issuer.join();
    asker.join();
    peer.join();
    EXPECT_NE(last0, dcSuccess);
    EXPECT_EQ(query, dcInvalidArgument) << "a call entering after the abort finds the handle invalid";
    EXPECT_NE(last1, dcSuccess) << "the peer learns of the abort";
    int count = 0;
    EXPECT_EQ(dcCommCount(comms[0], &count), dcInvalidArgument);
    EXPECT_EQ(dcCommAbort(comms[0]), dcInvalidArgument) << "a second abort of the same handle";
    dcCommDestroy(comms[1]);
  }
}

TEST(EngineCall, TimedOutCallNeverRuns) {
  auto ran = std::make_shared<std::atomic<bool>>(false);
  dc::Engine::instance().post([] { std::this_thread::sleep_for(std::chrono::milliseconds(300)); });
  {
    int on_this_stack = 0;
    EXPECT_THROW(dc::call_on_engine(
                     [&on_this_stack, ran] {
                       on_this_stack = 1;
                       *ran = true;
                     },
                     50, "a test"),
                 dc::Error);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  EXPECT_FALSE(*ran) << "an abandoned engine call ran after its caller returned";
  EXPECT_EQ(dc::call_on_engine([] { return 7; }, 5000, "a test"), 7);
}

// One id at the very end of a page followed by an inaccessible page: reading a second id faults.
TEST(ScalableInit, IdCountIsCheckedBeforeTheIdsAreRead) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  auto* pages = static_cast<char*>(mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(pages, MAP_FAILED);
  ASSERT_EQ(mprotect(pages + page, page, PROT_NONE), 0);
  auto* id = reinterpret_cast<dcUniqueId*>(pages + page - sizeof(dcUniqueId));
  ASSERT_EQ(dcGetUniqueId(id), dcSuccess);
  dcComm_t comm = nullptr;
  EXPECT_EQ(dcCommInitRankScalable(&comm, 2, 0, 5, id, nullptr), dcInvalidArgument);
  EXPECT_NE(std::string(dcGetLastError()).find("nIds"), std::string::npos) << dcGetLastError();
  EXPECT_EQ(dcCommInitRankScalable(&comm, 2, 0, 0, id, nullptr), dcInvalidArgument);
  EXPECT_EQ(comm, nullptr);
  munmap(pages, 2 * page);
}

}  // namespace
