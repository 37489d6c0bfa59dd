#include "tools/topo/plan_table.h"

#include <cstdio>
#include <string>
#include <vector>

#include "src/plan/select.h"
#include "tools/common/options.h"

namespace dc::tools {

namespace {

const dcCollective_t kCollectives[] = {dcCollAllReduce, dcCollAllGather, dcCollReduceScatter, dcCollBroadcast,
                                       dcCollReduce,    dcCollAlltoAll,  dcCollGather,        dcCollScatter};

struct Row {
  dcCollective_t collective;
  uint64_t bytes;
  std::vector<PricedGenerator> candidates;
};

std::vector<Row> rows(const TableOptions& o, const std::shared_ptr<const ClusterView>& cluster) {
  std::vector<Row> out;
  for (dcCollective_t c : kCollectives) {
    for (uint64_t bytes = o.min_bytes; bytes <= o.max_bytes; bytes *= o.factor) {
      PlanRequest q;
      q.collective = c;
      q.nranks = cluster->nranks();
      q.root = 0;
      q.count = bytes / 4 ? bytes / 4 : 1;  // float32 elements (per rank's block for the block collectives)
      q.cluster = cluster;
      if (c == dcCollAllReduce) q.compression = o.compress;
      out.push_back(Row{c, bytes, price_candidates(q)});
      if (bytes > o.max_bytes / o.factor) break;
    }
  }
  return out;
}

std::string format(const char* fmt, double a) {
  char text[64];
  std::snprintf(text, sizeof text, fmt, a);
  return text;
}

}  // namespace

std::string report(const topo::NodeTopology& node, const TableOptions& o) {
  const auto cluster = simulated_cluster(o.layout);
  const std::vector<Row> table = rows(o, cluster);
  std::string out;
  if (o.json) {
    out += "{\"machine\":\"" + json_escaped(topo::describe(node)) + "\",\"cluster\":\"" +
           json_escaped(cluster->describe()) +
           "\",\"topo_file\":" + (o.layout.file ? "\"" + json_escaped(o.layout.file->source) + "\"" : "null") +
           ",\"hosts\":" + std::to_string(cluster->nhosts()) + ",\"ranks\":" + std::to_string(cluster->nranks()) +
           ",\"plans\":[";
    for (size_t i = 0; i < table.size(); ++i) {
      const Row& r = table[i];
      out += i ? ",\n" : "\n";
      out += std::string("{\"collective\":\"") + collective_name(r.collective) +
             "\",\"bytes\":" + std::to_string(r.bytes) + ",\"algorithm\":\"" + r.candidates[0].generator->name +
             "\",\"predicted_seconds\":" + format("%.9g", r.candidates[0].seconds) +
             ",\"tuned\":" + (r.candidates[0].tuned ? "true" : "false");
      if (r.candidates.size() > 1)
        out += std::string(",\"runner_up\":\"") + r.candidates[1].generator->name +
               "\",\"runner_up_seconds\":" + format("%.9g", r.candidates[1].seconds);
      out += "}";
    }
    return out + "\n]}\n";
  }
  out += "# Machine\n" + topo::describe(node) + "\n# Cluster view priced" +
         (o.layout.file ? " (" + o.layout.file->source + ")" : std::string()) + "\n" + cluster->describe() + "\n";
  out +=
      "# Plans (float32; bytes = count x 4 with NCCL's count: per rank's block for all-gather,\n#  reduce-scatter, all-to-all, gather and scatter; predicted time by the cost model;\n#  choice+: a tuning rule's)\n";
  char line[200];
  std::snprintf(line, sizeof line, "%-14s %12s  %-13s %12s  %-13s %12s\n", "collective", "bytes", "choice",
                "predicted_us", "runner-up", "its_us");
  out += line;
  for (const Row& r : table) {
    const auto& best = r.candidates[0];
    const bool second = r.candidates.size() > 1;
    const std::string choice = std::string(best.generator->name) + (best.tuned ? "+" : "");
    std::snprintf(line, sizeof line, "%-14s %12llu  %-13s %12.1f  %-13s %12s\n", collective_name(r.collective),
                  static_cast<unsigned long long>(r.bytes), choice.c_str(), best.seconds * 1e6,
                  second ? r.candidates[1].generator->name : "-",
                  second ? format("%.1f", r.candidates[1].seconds * 1e6).c_str() : "-");
    out += line;
  }
  return out;
}

}  // namespace dc::tools
