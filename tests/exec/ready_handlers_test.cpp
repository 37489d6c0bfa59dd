// The queue a thread running an io_context's handlers keeps for itself (base/ready_handlers.h),
// over a private io_context: what it holds never passes through the io_context until it is handed
// back, it runs in order and never inside the call that posted it, and nothing is lost.
#include "base/ready_handlers.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace {

using dc::ready_handlers::DrainingScope;

TEST(ReadyHandlers, QueuedForTheDrainingThreadOutsideTheIoContext) {
  boost::asio::io_context io;
  std::vector<int> ran;
  {
    DrainingScope draining(io);
    EXPECT_TRUE(dc::ready_handlers::draining_for(io));
    dc::ready_handlers::post(io, [&] { ran.push_back(1); });
    dc::ready_handlers::post(io, [&] { ran.push_back(2); });
    EXPECT_TRUE(ran.empty()) << "a post ran inside the call that posted it";
    EXPECT_EQ(io.poll(), 0u) << "a handler queued for this thread went through the io_context";
    EXPECT_TRUE(dc::ready_handlers::run_one());
    EXPECT_EQ(ran, std::vector<int>{1});
    EXPECT_TRUE(dc::ready_handlers::run_one());
    EXPECT_FALSE(dc::ready_handlers::run_one());
  }
  EXPECT_EQ(ran, (std::vector<int>{1, 2}));
  EXPECT_FALSE(dc::ready_handlers::draining_for(io));
}

// A handler queued by a handler runs after it, and its own posts after it in turn.
TEST(ReadyHandlers, ChainsRunInOrderOneAfterAnother) {
  boost::asio::io_context io;
  std::vector<int> ran;
  DrainingScope draining(io);
  dc::ready_handlers::post(io, [&] {
    dc::ready_handlers::post(io, [&] { ran.push_back(3); });
    ran.push_back(1);
  });
  dc::ready_handlers::post(io, [&] { ran.push_back(2); });
  while (dc::ready_handlers::run_one()) {}
  EXPECT_EQ(ran, (std::vector<int>{1, 2, 3}));
}

// What is still queued when the thread stops draining goes to the io_context, in order.
TEST(ReadyHandlers, LeftoversGoToTheIoContext) {
  boost::asio::io_context io;
  std::vector<int> ran;
  {
    DrainingScope draining(io);
    for (int i = 0; i < 5; ++i) dc::ready_handlers::post(io, [&ran, i] { ran.push_back(i); });
    EXPECT_TRUE(dc::ready_handlers::run_one());
  }
  EXPECT_FALSE(dc::ready_handlers::run_one()) << "the thread's queue kept handlers after its scope";
  EXPECT_EQ(io.poll(), 4u);
  EXPECT_EQ(ran, (std::vector<int>{0, 1, 2, 3, 4}));
}

// Posts for another io_context, or from a thread that does not drain, go through boost::asio::post.
TEST(ReadyHandlers, OtherContextsAndThreadsPostToTheIoContext) {
  boost::asio::io_context io, other;
  int ran = 0;
  DrainingScope draining(io);
  dc::ready_handlers::post(other, [&] { ++ran; });
  std::thread([&] { dc::ready_handlers::post(io, [&] { ++ran; }); }).join();
  EXPECT_FALSE(dc::ready_handlers::run_one());
  EXPECT_EQ(other.poll(), 1u);
  EXPECT_EQ(io.poll(), 1u);
  EXPECT_EQ(ran, 2);
}

}  // namespace
