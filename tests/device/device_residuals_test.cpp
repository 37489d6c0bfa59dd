// The device residual store (src/core/device_residuals.h) on the CPU stream queue: a residual is
// zeroed on its stream when new and kept across calls; the cap drops the least recently used; a
// dropped residual's memory is reused only once the operations that used it retired, and is zeroed
// again; DEEPCOMM_COMPRESS_RESET's change drops them all. (That device calls then give the host
// calls' bits is nccl_device_bridge_test's.)
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <set>
#include <vector>

#include "device/cpu_stream_queue.h"
#include "src/core/device_residuals.h"

namespace {

using dc::DeviceResidualStore;
using dc::Status;
using dc::device::CpuStreamQueue;
using dc::device::Stream;
using namespace std::chrono_literals;

constexpr size_t kCount = 1000;
constexpr uint64_t kOneResidual = kCount * sizeof(float);

struct Store : ::testing::Test {
  ~Store() override { store.release(); }

  // The residual of buffer b for operation op, after the stream ran its zeroing.
  float* residual(int b, uint64_t op, uint64_t retired_through, size_t count = kCount) {
    Status status;
    float* values = store.find_or_create(&buffers[b], count, dcFloat32, stream, op, retired_through, &status);
    EXPECT_TRUE(status.ok()) << status.message;
    EXPECT_TRUE(queue.synchronize(stream, 10s));
    return values;
  }

  static bool all_zero(const float* values, size_t count = kCount) {
    for (size_t i = 0; i < count; ++i)
      if (values[i] != 0.0f) return false;
    return true;
  }

  CpuStreamQueue queue;
  Stream stream{0x51};
  int buffers[4] = {};
  DeviceResidualStore store{queue, 2 * kOneResidual};
};

TEST_F(Store, ANewResidualIsZeroedAndKeptAcrossCalls) {
  float* first = residual(0, 1, 0);
  ASSERT_NE(first, nullptr);
  EXPECT_TRUE(all_zero(first));
  first[7] = 2.5f;  // what a call's residual update leaves
  float* again = residual(0, 2, 1);
  EXPECT_EQ(again, first);
  EXPECT_EQ(again[7], 2.5f) << "a kept residual was zeroed again";
  EXPECT_EQ(store.entries(), 1u);
  EXPECT_EQ(store.bytes(), kOneResidual);
}

TEST_F(Store, TheCapDropsTheLeastRecentlyUsedAndItsMemoryIsReusedZeroed) {
  float* a = residual(0, 1, 0);
  float* b = residual(1, 2, 1);
  a[0] = b[0] = 1.0f;
  residual(0, 3, 2);             // a is now the most recently used
  float* c = residual(2, 4, 3);  // drops b's residual, whose operation retired: its memory serves c
  EXPECT_EQ(c, b);
  EXPECT_TRUE(all_zero(c)) << "reused memory kept the dropped residual's values";
  EXPECT_EQ(store.entries(), 2u);
  EXPECT_EQ(store.bytes(), 2 * kOneResidual);
  float* a_again = residual(0, 5, 4);
  EXPECT_EQ(a_again, a);
  EXPECT_EQ(a_again[0], 1.0f) << "the most recently used residual was dropped";
}

TEST_F(Store, DroppedMemoryIsNotReusedBeforeItsOperationsRetired) {
  float* a = residual(0, 1, 0);
  residual(1, 2, 0);
  float* c = residual(2, 3, 0);  // drops a's, but operation 1 may still be on a stream
  EXPECT_NE(c, a);
  float* d = residual(3, 4, 1);  // drops b's (op 2, pending); a's memory (op 1) retired meanwhile
  EXPECT_EQ(d, a);
}

TEST_F(Store, AResidualLargerThanTheCapServesOneCallOnly) {
  float* big = residual(0, 1, 0, 3 * kCount);
  ASSERT_NE(big, nullptr);
  EXPECT_TRUE(all_zero(big, 3 * kCount));
  big[0] = 4.0f;
  EXPECT_EQ(store.entries(), 0u);
  float* next = residual(0, 2, 1, 3 * kCount);
  EXPECT_EQ(next, big) << "its memory is dropped at once and serves the next call";
  EXPECT_TRUE(all_zero(next, 3 * kCount));
}

TEST_F(Store, AChangedResetGenerationDropsEveryResidual) {
  store.reset_on_change("epoch 0");  // the first value only records it
  float* a = residual(0, 1, 0);
  a[3] = 1.0f;
  store.reset_on_change("epoch 0");
  EXPECT_EQ(residual(0, 2, 1)[3], 1.0f);
  store.reset_on_change("epoch 1");
  EXPECT_EQ(store.entries(), 0u);
  EXPECT_EQ(store.bytes(), 0u);
  EXPECT_TRUE(all_zero(residual(0, 3, 2)));
}

}  // namespace
