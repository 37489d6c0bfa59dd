// What the dynamic loader sees of the libraries that must start on machines without a GPU driver
// (DESIGN.md, GPU path, rule 6): neither libnccl.so.2 nor libdeepcomm-cuda.so lists libcuda or
// libcudart as NEEDED (the plugin carries the static runtime, which opens the driver itself), and
// the plugin exports its entry point only, so its CUDA runtime cannot interpose on another's.
#include <gtest/gtest.h>

#include <cstdio>
#include <regex>
#include <set>
#include <string>

namespace {

std::string output_of(const std::string& command, int* status) {
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return *status = -1, out;
  char buffer[4096];
  for (size_t n; (n = fread(buffer, 1, sizeof buffer, pipe)) > 0;) out.append(buffer, n);
  *status = pclose(pipe);
  return out;
}

std::set<std::string> needed(const std::string& library) {
  int status = 0;
  const std::string out = output_of("readelf -d '" + library + "'", &status);
  EXPECT_EQ(status, 0) << out;
  std::set<std::string> names;
  const std::regex entry(R"(\(NEEDED\)\s+Shared library: \[([^\]]+)\])");
  for (std::sregex_iterator it(out.begin(), out.end(), entry), end; it != end; ++it) names.insert((*it)[1]);
  return names;
}

TEST(CudaLinkage, NeitherLibraryNeedsTheCudaRuntimeOrDriver) {
  for (const std::string library : {NCCL_LIBRARY, CUDA_PLUGIN_LIBRARY}) {
    const std::set<std::string> names = needed(library);
    EXPECT_TRUE(names.count("libc.so.6")) << library << ": readelf -d listed no libc, so its output was not read";
    for (const std::string& name : names)
      EXPECT_NE(name.rfind("libcuda", 0), 0u) << library << " needs " << name;  // libcuda.so.1, libcudart.so.*
  }
}

TEST(CudaLinkage, ThePluginExportsItsEntryPointOnly) {
  int status = 0;
  const std::string out = output_of(std::string("nm -D --defined-only '") + CUDA_PLUGIN_LIBRARY + "'", &status);
  ASSERT_EQ(status, 0) << out;
  std::set<std::string> exported;
  const std::regex symbol(R"([0-9a-f]+ [A-Za-z] (\S+))");
  for (std::sregex_iterator it(out.begin(), out.end(), symbol), end; it != end; ++it) exported.insert((*it)[1]);
  EXPECT_EQ(exported, std::set<std::string>{"deepcommDevicePlugin"}) << out;
}

}  // namespace
