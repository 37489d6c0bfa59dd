#include "src/plan/algorithm_filter.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>

#include "base/error.h"

namespace dc {

namespace {

std::string lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

std::string trim(const std::string& text) {
  const size_t first = text.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    const size_t at = text.find(separator, start);
    parts.push_back(trim(text.substr(start, at - start)));
    if (at == std::string::npos) return parts;
    start = at + 1;
  }
}

// The DeepComm algorithms one NCCL name stands for; nothing for a name DeepComm has no match of.
std::optional<std::vector<std::string>> nccl_meaning(const std::string& name) {
  if (name == "ring") return std::vector<std::string>{"ring", "pipeline"};
  if (name == "tree") return std::vector<std::string>{"tree", "dbtree"};
  return std::nullopt;
}

bool is_nccl_name(const std::string& name) {
  static const std::set<std::string> known = {"ring",          "tree",         "nvls", "nvlstree",
                                              "collnetdirect", "collnetchain", "pat"};
  return known.count(name) > 0;
}

// Parses entries; `meaning` maps one (lower-case) name to DeepComm names, or returns nothing for a
// name the caller ignores (after saying so itself).
template <class Meaning>
std::vector<std::pair<int, std::pair<bool, std::set<std::string>>>> parse_entries(const std::string& variable,
                                                                                  const std::string& text,
                                                                                  Meaning meaning,
                                                                                  std::vector<std::string>* warnings) {
  std::vector<std::pair<int, std::pair<bool, std::set<std::string>>>> entries;
  for (std::string entry : split(text, ';')) {
    if (entry.empty()) continue;
    int collective = -1;
    const size_t colon = entry.find(':');
    if (colon != std::string::npos) {
      const std::string coll = lower(trim(entry.substr(0, colon)));
      collective = collective_by_name(coll);
      if (collective < 0) {
        const std::string message = variable + ": unknown collective \"" + coll + "\" in \"" + text + "\"";
        if (!warnings) fail(dcInvalidArgument, "DeepComm: " + message);
        warnings->push_back(message + "; entry ignored");
        continue;
      }
      entry = trim(entry.substr(colon + 1));
    }
    bool exclude = false;
    if (!entry.empty() && entry[0] == '^') {
      exclude = true;
      entry = trim(entry.substr(1));
    }
    std::set<std::string> names;
    bool any_known = false;
    for (const std::string& raw : split(entry, ',')) {
      if (raw.empty()) continue;
      const std::optional<std::vector<std::string>> meant = meaning(lower(raw), raw);
      if (!meant) continue;
      any_known = true;
      names.insert(meant->begin(), meant->end());
    }
    // An entry whose names all mean nothing here filters nothing: "^NVLS" keeps everything, and
    // "NVLS" alone must not leave a collective without algorithms.
    if (!any_known) continue;
    entries.push_back({collective, {exclude, names}});
  }
  return entries;
}

}  // namespace

int collective_by_name(const std::string& name) {
  static const std::map<std::string, dcCollective_t> names = {
      {"allreduce", dcCollAllReduce}, {"allgather", dcCollAllGather}, {"reducescatter", dcCollReduceScatter},
      {"broadcast", dcCollBroadcast}, {"reduce", dcCollReduce},       {"alltoall", dcCollAlltoAll},
      {"gather", dcCollGather},       {"scatter", dcCollScatter}};
  auto it = names.find(name);
  return it == names.end() ? -1 : it->second;
}

const std::vector<std::string>& algorithm_names() {
  static const std::vector<std::string> names = {"ring",     "direct",   "tree",         "doubling",
                                                 "halving",  "dbtree",   "hierarchical", "pipeline",
                                                 "pairwise", "twophase", "sparsegather", "hiercompressed"};
  return names;
}

AlgorithmFilter AlgorithmFilter::parse_deepcomm(const std::string& text) {
  AlgorithmFilter filter;
  if (lower(trim(text)) == "auto" || trim(text).empty()) return filter;
  auto meaning = [&](const std::string& name, const std::string& raw) -> std::optional<std::vector<std::string>> {
    const auto& known = algorithm_names();
    if (std::find(known.begin(), known.end(), name) == known.end())
      fail(dcInvalidArgument, "DeepComm: DEEPCOMM_ALGO=" + text + ": unknown algorithm \"" + raw +
                                  "\" (expected auto, or ring, direct, tree, dbtree, hierarchical, pipeline, pairwise, "
                                  "twophase, sparsegather, hiercompressed)");
    return std::vector<std::string>{name};
  };
  for (auto& [collective, rule] : parse_entries("DEEPCOMM_ALGO", text, meaning, nullptr))
    filter.rules_.push_back(Rule{collective, rule.first, rule.second});
  return filter;
}

AlgorithmFilter AlgorithmFilter::parse_nccl(const std::string& text, std::vector<std::string>* warnings) {
  AlgorithmFilter filter;
  auto meaning = [&](const std::string& name, const std::string& raw) -> std::optional<std::vector<std::string>> {
    std::optional<std::vector<std::string>> meant = nccl_meaning(name);
    if (!meant) {
      warnings->push_back(
          "NCCL_ALGO: " +
          (is_nccl_name(name) ? "DeepComm has no " + raw + " algorithm" : "\"" + raw + "\" is not an NCCL algorithm") +
          "; ignored");
    }
    return meant;
  };
  for (auto& [collective, rule] : parse_entries("NCCL_ALGO", text, meaning, warnings))
    filter.rules_.push_back(Rule{collective, rule.first, rule.second});
  return filter;
}

AlgorithmFilter AlgorithmFilter::only(const std::string& algorithm) {
  AlgorithmFilter filter;
  filter.rules_.push_back(Rule{-1, false, {algorithm}});
  return filter;
}

bool AlgorithmFilter::allows(dcCollective_t collective, const std::string& algorithm) const {
  // The last entry naming the collective wins; otherwise the last entry for every collective.
  const Rule* specific = nullptr;
  const Rule* general = nullptr;
  for (const Rule& r : rules_) {
    if (r.collective == collective) specific = &r;
    if (r.collective == -1) general = &r;
  }
  const Rule* rule = specific ? specific : general;
  if (!rule) return true;
  const bool named = rule->names.count(algorithm) > 0;
  return rule->exclude ? !named : named;
}

std::string AlgorithmFilter::canonical() const {
  if (rules_.empty()) return "auto";
  std::string out;
  for (const Rule& r : rules_) {
    if (!out.empty()) out += ';';
    if (r.collective >= 0) out += std::to_string(r.collective) + ':';
    if (r.exclude) out += '^';
    bool first = true;
    for (const std::string& name : r.names) {
      out += (first ? "" : ",") + name;
      first = false;
    }
  }
  return out;
}

}  // namespace dc
