// docs/configuration.md and the settings tables agree: every declared setting has a row in the
// page's settings table with the same default, and every DEEPCOMM_*/NCCL_* variable the page
// documents there is declared in a room's table.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "base/config_table.h"
#include "src/core/config.h"
#include "src/nccl/settings.h"

namespace dc::config {
namespace {

struct DocRow {
  std::string default_text;
  int line = 0;
};

std::string trimmed(std::string s) {
  const size_t begin = s.find_first_not_of(' ');
  const size_t end = s.find_last_not_of(' ');
  return begin == std::string::npos ? "" : s.substr(begin, end - begin + 1);
}

// The cells of a Markdown table row; "\|" is a bar inside a cell.
std::vector<std::string> cells_of(const std::string& row) {
  std::vector<std::string> cells;
  std::string cell;
  for (size_t i = 1; i < row.size(); ++i) {  // row[0] is the leading bar
    if (row[i] == '\\' && i + 1 < row.size() && row[i + 1] == '|') {
      cell += '|';
      ++i;
    } else if (row[i] == '|') {
      cells.push_back(trimmed(cell));
      cell.clear();
    } else {
      cell += row[i];
    }
  }
  return cells;
}

std::string without_backticks(std::string s) {
  s.erase(std::remove(s.begin(), s.end(), '`'), s.end());
  return s;
}

// Variable name -> its row of the table headed "| name | type | default | meaning |". A row may
// name several variables ("`NCCL_DEBUG` (or `DEEPCOMM_DEBUG`)"): each gets the row's default.
std::map<std::string, DocRow> documented_settings(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in) << "cannot read " << path;
  std::map<std::string, DocRow> rows;
  const std::regex variable("\\b(DEEPCOMM|NCCL)_[A-Z0-9_]+");
  bool in_table = false;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.rfind("| name | type | default | meaning |", 0) == 0) {
      in_table = true;
      continue;
    }
    if (!in_table || line.rfind("| ---", 0) == 0) continue;
    if (line.empty() || line[0] != '|') {
      in_table = false;
      continue;
    }
    const std::vector<std::string> cells = cells_of(line);
    if (cells.size() < 4) {
      ADD_FAILURE() << path << ":" << number << ": a settings row needs 4 cells: " << line;
      continue;
    }
    for (std::sregex_iterator it(cells[0].begin(), cells[0].end(), variable), end; it != end; ++it) {
      const bool added = rows.emplace(it->str(), DocRow{without_backticks(cells[2]), number}).second;
      EXPECT_TRUE(added) << path << ":" << number << ": " << it->str() << " has two rows";
    }
  }
  return rows;
}

std::vector<const Setting*> every_declared_setting() {
  register_settings();                             // every room up to src/core
  Registry::instance().add(settings::kNcclTable);  // and the NCCL library's
  return Registry::instance().all();
}

TEST(ConfigurationDoc, EveryDeclaredSettingIsDocumentedWithItsDefault) {
  const std::map<std::string, DocRow> doc = documented_settings(DEEPCOMM_CONFIGURATION_MD);
  ASSERT_FALSE(doc.empty()) << "no settings table found in " << DEEPCOMM_CONFIGURATION_MD;
  for (const Setting* s : every_declared_setting()) {
    auto row = doc.find(s->name);
    if (row == doc.end()) {
      ADD_FAILURE() << s->name << " is declared in a settings table but has no row in docs/configuration.md";
      continue;
    }
    EXPECT_EQ(row->second.default_text, s->default_text)
        << s->name << ": docs/configuration.md:" << row->second.line << " states another default than its table";
  }
}

TEST(ConfigurationDoc, EveryDocumentedSettingIsDeclared) {
  every_declared_setting();
  const std::map<std::string, DocRow> doc = documented_settings(DEEPCOMM_CONFIGURATION_MD);
  for (const auto& [name, row] : doc)
    EXPECT_NE(Registry::instance().find(name), nullptr)
        << "docs/configuration.md:" << row.line << " documents " << name << ", which no settings table declares";
}

}  // namespace
}  // namespace dc::config
