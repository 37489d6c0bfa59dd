// Bad input through the native API: a clear code, a message, and no buffer touched.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <vector>

#include "deepcomm/deepcomm.h"
#include "tests/support/collective_check.h"

namespace {

void expect_error(dcResult_t got, dcResult_t want, const char* what) {
  EXPECT_EQ(got, want) << what;
  EXPECT_STRNE(dcGetLastError(), "") << what;
}

TEST(BadInput, RefusedWithoutTouchingBuffers) {
  std::string errors = dctest::run_as_threads(2, [](int rank, dcComm_t comm) -> std::string {
    if (rank != 0) return "";  // only rank 0 issues (refused) calls; nothing may reach rank 1
    std::vector<float> in(16, 1.0f), out(16, 7.0f);
    const std::vector<float> out_before = out;
    expect_error(dcAllReduce(in.data(), out.data(), 16, dcFloat32, dcSum, nullptr, nullptr), dcInvalidArgument,
                 "null comm");
    expect_error(dcAllReduce(nullptr, out.data(), 16, dcFloat32, dcSum, comm, nullptr), dcInvalidArgument, "null send");
    expect_error(dcAllReduce(in.data(), nullptr, 16, dcFloat32, dcSum, comm, nullptr), dcInvalidArgument, "null recv");
    expect_error(dcAllReduce(in.data(), out.data(), 16, static_cast<dcDataType_t>(12), dcSum, comm, nullptr),
                 dcInvalidArgument, "datatype 12");
    expect_error(dcAllReduce(in.data(), out.data(), 16, static_cast<dcDataType_t>(-1), dcSum, comm, nullptr),
                 dcInvalidArgument, "datatype -1");
    expect_error(dcAllReduce(in.data(), out.data(), 16, dcFloat32, static_cast<dcRedOp_t>(5), comm, nullptr),
                 dcInvalidArgument, "op 5 not created");
    expect_error(dcAllReduce(in.data(), out.data(), 16, dcFloat32, static_cast<dcRedOp_t>(-3), comm, nullptr),
                 dcInvalidArgument, "op -3");
    expect_error(dcBroadcast(in.data(), out.data(), 16, dcFloat32, 2, comm, nullptr), dcInvalidArgument, "root 2 of 2");
    expect_error(dcReduce(in.data(), out.data(), 16, dcFloat32, dcSum, -1, comm, nullptr), dcInvalidArgument,
                 "root -1");
    expect_error(dcSend(in.data(), 16, dcFloat32, 5, comm, nullptr), dcInvalidArgument, "peer 5");
    expect_error(dcRecv(out.data(), 16, dcFloat32, -2, comm, nullptr), dcInvalidArgument, "peer -2");
    expect_error(dcAllGather(in.data(), out.data(), std::numeric_limits<size_t>::max() / 4, dcFloat32, comm, nullptr),
                 dcInvalidArgument, "overflow");
    expect_error(
        dcAllReduce(in.data(), out.data(), std::numeric_limits<size_t>::max(), dcFloat64, dcSum, comm, nullptr),
        dcInvalidArgument, "overflow 2");
    expect_error(dcGroupEnd(), dcInvalidUsage, "group end without start");
    int count = 0;
    expect_error(dcCommCount(nullptr, &count), dcInvalidArgument, "count of null comm");
    expect_error(dcCommCount(comm, nullptr), dcInvalidArgument, "null count pointer");
    expect_error(dcCommInitRank(nullptr, 2, nullptr, 0, nullptr), dcInvalidArgument, "null init pointers");
    dcUniqueId junk;
    std::memset(&junk, 0x42, sizeof junk);
    dcComm_t other = nullptr;
    expect_error(dcCommInitRank(&other, 2, &junk, 0, nullptr), dcInvalidArgument, "junk unique id");
    expect_error(dcCommInitRank(&other, 2, &junk, 3, nullptr), dcInvalidArgument, "rank out of range");
    expect_error(dcMemFree(in.data()), dcInvalidArgument, "free of foreign memory");
    if (out != out_before) return "a refused call changed the receive buffer";
    return "";
  });
  EXPECT_EQ(errors, "");
}

TEST(BadInput, DestroyedCommunicatorIsAnError) {
  dcComm_t comms[1];
  ASSERT_EQ(dcCommInitAll(comms, 1), dcSuccess) << dcGetLastError();
  ASSERT_EQ(dcCommDestroy(comms[0]), dcSuccess);
  float x = 1, y = 0;
  EXPECT_EQ(dcAllReduce(&x, &y, 1, dcFloat32, dcSum, comms[0], nullptr), dcInvalidArgument);
  EXPECT_NE(std::string(dcGetLastError()).find("not valid"), std::string::npos) << dcGetLastError();
  EXPECT_EQ(dcCommDestroy(comms[0]), dcInvalidArgument);
  EXPECT_EQ(y, 0);
}

TEST(BadInput, RequestInsideGroupIsInvalidUsage) {
  std::string errors = dctest::run_as_threads(1, [](int, dcComm_t comm) -> std::string {
    float x = 1, y = 0;
    dcRequest_t req = nullptr;
    dcGroupStart();
    dcResult_t r = dcAllReduce(&x, &y, 1, dcFloat32, dcSum, comm, &req);
    dcGroupEnd();
    if (r != dcInvalidUsage) return "expected invalid usage";
    return "";
  });
  EXPECT_EQ(errors, "");
}

TEST(Errors, StringsAndVersion) {
  EXPECT_STREQ(dcGetErrorString(dcSuccess), "no error");
  EXPECT_NE(std::string(dcGetErrorString(dcRemoteError)), "");
  EXPECT_NE(std::string(dcGetErrorString(static_cast<dcResult_t>(99))), "");
  int v = 0;
  ASSERT_EQ(dcGetVersion(&v), dcSuccess);
  EXPECT_EQ(v, DEEPCOMM_VERSION_MAJOR * 10000 + DEEPCOMM_VERSION_MINOR * 100 + DEEPCOMM_VERSION_PATCH);
}

}  // namespace
