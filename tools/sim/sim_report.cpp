#include "tools/sim/sim_report.h"

#include <cstdio>

#include "tools/common/options.h"

namespace dc::tools {

namespace {

std::string number(double value) {
  char text[64];
  std::snprintf(text, sizeof text, "%.9g", value);
  return text;
}

std::string json(const ClusterView& cluster, const std::string& topo_file, const std::vector<SimRow>& rows) {
  std::string out = "{\"cluster\":\"" + json_escaped(cluster.describe()) +
                    "\",\"topo_file\":" + (topo_file.empty() ? "null" : "\"" + json_escaped(topo_file) + "\"") +
                    ",\"hosts\":" + std::to_string(cluster.nhosts()) +
                    ",\"ranks\":" + std::to_string(cluster.nranks()) + ",\"rows\":[";
  for (size_t i = 0; i < rows.size(); ++i) {
    const SimRow& r = rows[i];
    out += i ? ",\n" : "\n";
    out += std::string("{\"collective\":\"") + collective_name(r.collective) +
           "\",\"bytes\":" + std::to_string(r.bytes) + ",\"algorithm\":\"" + r.algorithm +
           "\",\"predicted_seconds\":" + number(r.seconds) + ",\"latency_seconds\":" + number(r.latency_seconds) +
           ",\"network_seconds\":" + number(r.network_seconds) + ",\"fill_seconds\":" + number(r.fill_seconds) +
           ",\"chosen\":" + (r.chosen ? "true" : "false");
    if (r.materialized_seconds) out += ",\"materialized_seconds\":" + number(*r.materialized_seconds);
    out += "}";
  }
  return out + "\n]}\n";
}

}  // namespace

std::string sim_report(const ClusterView& cluster, const std::string& topo_file, const std::vector<SimRow>& rows,
                       bool as_json) {
  if (as_json) return json(cluster, topo_file, rows);
  std::string out = "# Cluster priced" +
                    (topo_file.empty() ? std::string(" (default tiers)") : " (" + topo_file + ")") + "\n" +
                    cluster.describe() + "\n";
  out +=
      "# Predicted by the cost model from each algorithm's analytical traffic (float32; bytes = count x 4\n"
      "#  with NCCL's count); latency_us: its α part; network_us: the busiest network link's bytes over\n"
      "#  its rate; fill_us: a tree's chunk crossing its chain's edges one after another (the rest is\n"
      "#  memory: copies and sums); * the selector's choice (a tuning rule's where one matches)";
  const bool check = !rows.empty() && rows.front().materialized_seconds;
  out += check ? "; materialized_us: the plans of every rank, priced\n"
                 "#  without the fill; ratio: (predicted - fill) / materialized\n"
               : "\n";
  char line[200];
  std::snprintf(line, sizeof line, "%-14s %12s  %-13s %14s %12s %12s %10s%s\n", "collective", "bytes", "algorithm",
                "predicted_us", "latency_us", "network_us", "fill_us", check ? "  materialized_us  ratio" : "");
  out += line;
  for (const SimRow& r : rows) {
    const std::string algorithm = std::string(r.algorithm) + (r.chosen ? "*" : "");
    std::snprintf(line, sizeof line, "%-14s %12llu  %-13s %14.1f %12.1f %12.1f %10.1f", collective_name(r.collective),
                  static_cast<unsigned long long>(r.bytes), algorithm.c_str(), r.seconds * 1e6, r.latency_seconds * 1e6,
                  r.network_seconds * 1e6, r.fill_seconds * 1e6);
    out += line;
    if (r.materialized_seconds) {
      std::snprintf(line, sizeof line, "  %15.1f  %5.3f", *r.materialized_seconds * 1e6,
                    (r.seconds - r.fill_seconds) / *r.materialized_seconds);
      out += line;
    }
    out += "\n";
  }
  return out;
}

}  // namespace dc::tools
