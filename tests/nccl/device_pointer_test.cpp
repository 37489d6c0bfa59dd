// Device memory that no device plugin serves is refused with ncclInvalidUsage and a message saying
// why, host memory works. The CUDA runtime is fake_cudart.c, linked into this program:
// libnccl.so.2 finds it already loaded, sees a device, and looks for libdeepcomm-cuda.so, which
// cannot start here (no driver) or is not on the loader's path.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "deepcomm/nccl.h"

extern "C" char fake_device_memory[];

namespace {

constexpr const char* kDeviceMemoryMessage = "DeepComm: device memory needs the device plugin: ";

class NcclDevicePointer : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(ncclCommInitAll(&comm_, 1, nullptr), ncclSuccess) << ncclGetLastError(nullptr);
    std::memset(fake_device_memory, 0x5A, 64);
  }
  void TearDown() override { EXPECT_EQ(ncclCommDestroy(comm_), ncclSuccess); }

  void expect_device_memory_refused(ncclResult_t result) {
    EXPECT_EQ(result, ncclInvalidUsage);
    EXPECT_EQ(std::string(ncclGetLastError(comm_)).rfind(kDeviceMemoryMessage, 0), 0u) << ncclGetLastError(comm_);
  }
  void expect_device_memory_untouched() {
    for (int i = 0; i < 64; ++i) ASSERT_EQ(fake_device_memory[i], 0x5A) << i;
  }

  ncclComm_t comm_ = nullptr;
  std::vector<float> host_ = std::vector<float>(16, 3.0f);
  float* device_ = reinterpret_cast<float*>(fake_device_memory);
};

TEST_F(NcclDevicePointer, HostMemoryWorks) {
  std::vector<float> result(16, 0.0f);
  ASSERT_EQ(ncclAllReduce(host_.data(), result.data(), 16, ncclFloat, ncclSum, comm_, nullptr), ncclSuccess);
  EXPECT_EQ(result, host_);
}

TEST_F(NcclDevicePointer, DeviceSendOrReceiveBufferIsRefused) {
  expect_device_memory_refused(ncclAllReduce(device_, host_.data(), 16, ncclFloat, ncclSum, comm_, nullptr));
  expect_device_memory_refused(ncclAllReduce(host_.data(), device_, 16, ncclFloat, ncclSum, comm_, nullptr));
  expect_device_memory_refused(ncclBcast(device_, 16, ncclFloat, 0, comm_, nullptr));
  expect_device_memory_refused(ncclAllGather(host_.data(), device_, 16, ncclFloat, comm_, nullptr));
  expect_device_memory_refused(ncclSend(device_, 16, ncclFloat, 0, comm_, nullptr));
  expect_device_memory_refused(ncclRecv(device_, 16, ncclFloat, 0, comm_, nullptr));
  expect_device_memory_untouched();
  EXPECT_EQ(host_, std::vector<float>(16, 3.0f));
}

TEST_F(NcclDevicePointer, ScalarInDeviceMemoryIsRefused) {
  ncclRedOp_t op = ncclSum;
  expect_device_memory_refused(ncclRedOpCreatePreMulSum(&op, device_, ncclFloat, ncclScalarHostImmediate, comm_));
  EXPECT_EQ(op, ncclSum);
}

}  // namespace
