// Settings are read only through base/config_table.h: no library or tool source but it calls
// getenv with a DEEPCOMM_* or NCCL_* name (launcher inputs and other libraries' variables are
// not settings and may be read where they are used).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

namespace {

TEST(ConfigTable, OnlyTheHelperReadsSettingsFromTheEnvironment) {
  namespace fs = std::filesystem;
  const fs::path root = DEEPCOMM_SOURCE_DIR;
  const std::regex direct_read("getenv\\s*\\(\\s*\"(DEEPCOMM|NCCL)_");
  int scanned = 0;
  for (const auto& top : fs::directory_iterator(root)) {
    // Every folder of library or tool code, new rooms included; not the tests' and benchmarks'
    // own variables, nor build trees inside the source tree.
    const std::string name = top.path().filename().string();
    if (!top.is_directory() || name[0] == '.' || name.rfind("build", 0) == 0 || name == "tests" || name == "bench" ||
        name == "examples" || name == "docs" || name == "python" || name == "cmake")
      continue;
    for (const auto& entry : fs::recursive_directory_iterator(top.path())) {
      const std::string ext = entry.path().extension().string();
      if (!entry.is_regular_file() || (ext != ".cpp" && ext != ".h" && ext != ".inc" && ext != ".c")) continue;
      std::ifstream in(entry.path());
      std::stringstream text;
      text << in.rdbuf();
      ++scanned;
      EXPECT_FALSE(std::regex_search(text.str(), direct_read))
          << fs::relative(entry.path(), root).string()
          << " reads a DEEPCOMM_*/NCCL_* variable with getenv: declare it in its room's settings.h and read it "
             "through base/config_table.h";
    }
  }
  EXPECT_GT(scanned, 100);  // the tree was found
}

}  // namespace
