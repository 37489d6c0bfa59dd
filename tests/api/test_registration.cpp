// Memory registration and windows: handles are tracked per communicator, registered buffers work
// in collectives, and wrong, foreign or released handles are refused.
#include <gtest/gtest.h>

#include <vector>

#include "deepcomm/deepcomm.h"
#include "tests/support/collective_check.h"

namespace {

TEST(Registration, HandlesAreCheckedAndBuffersWork) {
  std::vector<dcComm_t> others(1);
  ASSERT_EQ(dcCommInitAll(others.data(), 1), dcSuccess);
  dcComm_t foreign = others[0];
  std::string errors = dctest::run_as_threads(2, [foreign](int rank, dcComm_t comm) -> std::string {
    std::vector<double> buf(1 << 16, rank + 1.0);
    void* handle = nullptr;
    if (dcCommRegister(comm, buf.data(), buf.size() * sizeof(double), &handle) != dcSuccess || !handle)
      return dcGetLastError();
    if (dcAllReduce(buf.data(), buf.data(), buf.size(), dcFloat64, dcSum, comm, nullptr) != dcSuccess)
      return dcGetLastError();
    if (buf[0] != 3.0) return "all-reduce on a registered buffer";
    if (dcCommDeregister(foreign, handle) != dcInvalidArgument) return "foreign communicator accepted";
    dcWindow_t win = nullptr;
    if (dcCommWindowRegister(comm, buf.data(), 4096, &win, 7) != dcInvalidArgument) return "bad flags accepted";
    if (dcCommWindowRegister(comm, buf.data(), 4096, &win, 1) != dcSuccess || !win) return dcGetLastError();
    if (dcCommDeregister(comm, win) != dcInvalidArgument) return "window released as a registration";
    if (dcCommWindowDeregister(comm, reinterpret_cast<dcWindow_t>(handle)) != dcInvalidArgument)
      return "registration released as a window";
    if (dcCommDeregister(comm, handle) != dcSuccess) return dcGetLastError();
    if (dcCommDeregister(comm, handle) != dcInvalidArgument) return "released twice";
    if (dcCommRegister(comm, nullptr, 8, &handle) != dcInvalidArgument) return "NULL buffer accepted";
    // The window is left registered: destroying the communicator releases it.
    return "";
  });
  EXPECT_EQ(errors, "");
  EXPECT_EQ(dcCommDestroy(foreign), dcSuccess);
}

}  // namespace
