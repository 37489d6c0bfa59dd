// Every NCCL test runs on DeepComm's libnccl.so.2 from this build, never on NVIDIA's, which is on
// the loader path of the machine too.
#include <gtest/gtest.h>

#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>

#include <string>

#include "deepcomm/nccl.h"

namespace {

std::string real_path(const char* path) {
  char resolved[PATH_MAX];
  return realpath(path, resolved) != nullptr ? std::string(resolved) : std::string();
}

TEST(NcclLoadedLibrary, IsDeepCommsBuild) {
  int version = 0;  // a call, so that the program needs libnccl.so.2 even when linked --as-needed
  ASSERT_EQ(ncclGetVersion(&version), ncclSuccess);
  EXPECT_EQ(version, NCCL_VERSION_CODE);
  void* symbol = dlsym(RTLD_DEFAULT, "ncclGetVersion");
  ASSERT_NE(symbol, nullptr);
  Dl_info info{};
  ASSERT_NE(dladdr(symbol, &info), 0);
  ASSERT_NE(info.dli_fname, nullptr);
  EXPECT_EQ(real_path(info.dli_fname), real_path(DEEPCOMM_NCCL_LIBRARY));
}

}  // namespace
