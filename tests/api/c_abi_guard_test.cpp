// The C-ABI guard both APIs run their bodies under: every failure becomes a result code of the
// API's own enum and a last-error message; nothing escapes.
#include <gtest/gtest.h>

#include <new>
#include <stdexcept>
#include <string>

#include "base/c_abi_guard.h"
#include "deepcomm/nccl.h"

namespace {

TEST(CAbiGuard, BodyWithoutResultSucceedsWhenItReturns) {
  int ran = 0;
  EXPECT_EQ(dc::guard_c_abi<dcResult_t>([&] { ++ran; }), dcSuccess);
  EXPECT_EQ(ran, 1);
}

TEST(CAbiGuard, BodyResultIsTheCallsResult) {
  EXPECT_EQ(dc::guard_c_abi<ncclResult_t>([] { return ncclInProgress; }), ncclInProgress);
  EXPECT_EQ(dc::guard_c_abi<dcResult_t>([] { return dcInvalidUsage; }), dcInvalidUsage);
}

TEST(CAbiGuard, ErrorKeepsItsCodeInEitherEnum) {
  const auto body = [] { dc::fail(dcRemoteError, "DeepComm: the peer left"); };
  EXPECT_EQ(dc::guard_c_abi<dcResult_t>(body), dcRemoteError);
  EXPECT_STREQ(dc::last_error(), "DeepComm: the peer left");
  EXPECT_EQ(dc::guard_c_abi<ncclResult_t>([] {
              dc::fail(dcInvalidArgument, "bad count");
              return ncclSuccess;
            }),
            ncclInvalidArgument);
  EXPECT_STREQ(dc::last_error(), "bad count");
}

TEST(CAbiGuard, OutOfMemoryIsASystemError) {
  EXPECT_EQ(dc::guard_c_abi<ncclResult_t>([]() -> ncclResult_t { throw std::bad_alloc(); }), ncclSystemError);
  EXPECT_STREQ(dc::last_error(), "DeepComm: out of memory");
}

TEST(CAbiGuard, AnythingElseIsAnInternalErrorWithItsMessage) {
  EXPECT_EQ(dc::guard_c_abi<dcResult_t>([] { throw std::logic_error("a broken invariant"); }), dcInternalError);
  EXPECT_STREQ(dc::last_error(), "DeepComm: internal error: a broken invariant");
  EXPECT_EQ(dc::guard_c_abi<ncclResult_t>([]() -> ncclResult_t { throw 42; }), ncclInternalError);
  EXPECT_STREQ(dc::last_error(), "DeepComm: internal error");
}

}  // namespace
