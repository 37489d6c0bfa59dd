// DeepComm's nccl.h and libnccl.so.2 against NVIDIA's NCCL 2.30.7 as PyPI ships it
// (nvidia-nccl-cu13, pinned in python/requirements-test.txt): every entry of the header (values,
// layouts, signatures, the device API's host types) and the exported nccl*/pnccl* functions.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "tests/nccl/exported_symbols.h"
#include "tests/nccl/layout.h"

LayoutEntries vendor230_layout();  // vendor230_layout.cpp

namespace {

TEST(NcclReference230, HeaderMatchesNvidias230Header) {
  const LayoutEntries ours = our_layout();
  const LayoutEntries nvidia = vendor230_layout();
  ASSERT_EQ(ours.size(), nvidia.size());
  for (size_t i = 0; i < ours.size(); ++i) {
    ASSERT_EQ(ours[i].first, nvidia[i].first);
    EXPECT_EQ(ours[i].second, nvidia[i].second) << ours[i].first;
  }
}

std::set<std::string> names_of(const std::map<std::string, std::string>& symbols) {
  std::set<std::string> names;
  for (const auto& [name, address] : symbols) names.insert(name);
  return names;
}

// Ours: everything exported. NVIDIA's: its nccl*/pnccl* functions, less its internal
// ncclResetDebugInitInternal (ncclResetDebugInit itself is in the header and in both).
TEST(NcclReference230, ExportsWhatNvidias230LibraryExports) {
  bool ok = false;
  std::string error;
  const std::set<std::string> ours = names_of(exported_symbols(DEEPCOMM_NCCL_LIBRARY, &ok, &error));
  ASSERT_TRUE(ok) << error;
  const std::map<std::string, std::string> nvidia_symbols =
      exported_symbols(DEEPCOMM_NCCL_REFERENCE_LIBRARY, &ok, &error);
  ASSERT_TRUE(ok) << error;
  std::set<std::string> nvidia;
  for (const auto& [name, address] : nvidia_symbols) {
    const bool api = name.rfind("nccl", 0) == 0 || name.rfind("pnccl", 0) == 0;
    if (api && name != "ncclResetDebugInitInternal") nvidia.insert(name);
  }
  EXPECT_EQ(nvidia.size(), 164u);  // 82 functions and their twins
  for (const std::string& name : nvidia) EXPECT_EQ(ours.count(name), 1u) << "missing: " << name;
  for (const std::string& name : ours) EXPECT_EQ(nvidia.count(name), 1u) << "extra: " << name;
}

}  // namespace
