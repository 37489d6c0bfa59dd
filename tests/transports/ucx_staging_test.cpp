// The UCX transport's staging pool (transports/ucx/ucx_staging.h): buffers come back for reuse, sized
// by power-of-two class, and what the pool keeps is bounded.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <vector>

#include "transports/ucx/ucx_staging.h"

namespace {

using dc::UcxStagingPool;

TEST(UcxStagingPool, ReturnedBufferIsReused) {
  auto pool = UcxStagingPool::make();
  unsigned char* first = nullptr;
  {
    UcxStagingPool::Buffer b = pool->take(1 << 20);
    ASSERT_TRUE(b);
    first = b.data();
    std::memset(b.data(), 0xA5, 1 << 20);  // the whole requested size is writable
  }
  EXPECT_EQ(pool->retained_bytes(), size_t{1} << 20);
  UcxStagingPool::Buffer again = pool->take((1 << 20) - 100);  // same class
  EXPECT_EQ(again.data(), first);
  EXPECT_EQ(pool->retained_bytes(), 0u);
  UcxStagingPool::Buffer other = pool->take((1 << 20) + 1);  // the next class: a new buffer
  EXPECT_NE(other.data(), first);
}

TEST(UcxStagingPool, SmallPayloadsShareTheSmallestClass) {
  auto pool = UcxStagingPool::make();
  { UcxStagingPool::Buffer b = pool->take(1); }
  EXPECT_EQ(pool->retained_bytes(), 4096u);
  { UcxStagingPool::Buffer b = pool->take(0); }  // an empty payload still gets a buffer
  EXPECT_EQ(pool->retained_bytes(), 4096u);
}

TEST(UcxStagingPool, KeepsAtMostItsBound) {
  auto pool = UcxStagingPool::make();
  const size_t each = 4 << 20;
  const size_t count = UcxStagingPool::kRetainBytes / each + 5;
  {
    std::vector<UcxStagingPool::Buffer> held;
    for (size_t i = 0; i < count; ++i) held.push_back(pool->take(each));
  }
  EXPECT_EQ(pool->retained_bytes(), UcxStagingPool::kRetainBytes);
}

// Suspending a communicator frees what the pool keeps; a buffer in use then still comes back.
TEST(UcxStagingPool, ReleaseFreesWhatItKeeps) {
  auto pool = UcxStagingPool::make();
  UcxStagingPool::Buffer in_use = pool->take(1 << 20);
  { UcxStagingPool::Buffer b = pool->take(8 << 20); }
  { UcxStagingPool::Buffer b = pool->take(5000); }
  EXPECT_EQ(pool->retained_bytes(), (size_t{8} << 20) + 8192);
  EXPECT_EQ(pool->release_retained(), (size_t{8} << 20) + 8192);
  EXPECT_EQ(pool->retained_bytes(), 0u);
  EXPECT_EQ(pool->release_retained(), 0u);
  std::memset(in_use.data(), 7, 1 << 20);
  in_use = UcxStagingPool::Buffer();
  EXPECT_EQ(pool->retained_bytes(), size_t{1} << 20);
}

// UCX may hold a buffer after its connection (and the worker owning the pool) went.
TEST(UcxStagingPool, BufferOutlivesThePoolsOwner) {
  auto pool = UcxStagingPool::make();
  UcxStagingPool::Buffer b = pool->take(100);
  std::weak_ptr<UcxStagingPool> watch = pool;
  pool.reset();
  EXPECT_FALSE(watch.expired());
  std::memset(b.data(), 1, 100);
  b = UcxStagingPool::Buffer();  // returned to the pool, then the pool goes
  EXPECT_TRUE(watch.expired());
}

}  // namespace
