// Hierarchical all-reduce across hosts, three pipelined phases built by the simple generators:
// inside each host a reduce-scatter leaves local member i with one segment summed over the host;
// the members with the same local index on every host (a rail) all-reduce that segment across
// hosts; inside each host an all-gather hands every segment to all. Inside a host it takes the
// direct halves over shared memory and the ring halves over sockets; across hosts the cheaper of
// ring and tree by the cost model. The phase tracker orders each step after exactly the earlier
// phases' steps that touch its memory, so a chunk crosses hosts as soon as its host sum is done.
// Every host must hold the same number of ranks (rails must line up).
#include <algorithm>
#include <string>
#include <vector>

#include "src/plan/generators.h"

namespace dc {

using namespace plan_build;

namespace {

struct Layout {
  std::vector<std::vector<int>> hosts;  // comm ranks per host, ascending
  int host = 0;                         // this rank's host
  int local = 0;                        // its index there
};

Layout layout_of(const ClusterView& view, int rank) {
  Layout l;
  for (int h = 0; h < view.nhosts(); ++h) l.hosts.push_back(view.ranks_on_host(h));
  l.host = view.host_of(rank);
  l.local = view.local_index(rank);
  return l;
}

std::vector<int> rail(const Layout& l, int local) {
  std::vector<int> members;
  for (const auto& host : l.hosts) members.push_back(host[local]);
  return members;
}

bool intra_direct(const PlanRequest& request, const std::vector<int>& host) {
  return members_share_memory(request, host);
}

// The request a rail's all-reduce is priced with: its segment, the longest of any rail, so that
// every rail takes the same algorithm.
PlanRequest rail_request(const PlanRequest& request, int ranks_per_host) {
  PlanRequest rail = request;
  rail.count = ring_segment(request.count, ranks_per_host, 0).count;
  return rail;
}

struct RailChoice {
  const char* name;
  void (*build)(BuildSpace&);
  Traffic traffic;
};

RailChoice rail_algorithm(const PlanRequest& request, const std::vector<int>& members) {
  RailChoice ring{"ring", build_ring_allreduce, ring_allreduce_traffic(request, members)};
  RailChoice tree{"tree", build_tree_allreduce, tree_allreduce_traffic(request, members)};
  return tree.traffic.seconds() < ring.traffic.seconds() ? tree : ring;
}

}  // namespace

bool hierarchical_allreduce_applicable(const PlanRequest& request, const std::vector<int>& members) {
  const ClusterView& view = *request.cluster;
  if (static_cast<int>(members.size()) != view.nranks() || view.nhosts() < 2) return false;
  const size_t per_host = view.ranks_on_host(0).size();
  if (per_host < 2) return false;
  for (int h = 1; h < view.nhosts(); ++h)
    if (view.ranks_on_host(h).size() != per_host) return false;
  return true;
}

void build_hierarchical_allreduce(BuildSpace& sp) {
  const PlanRequest& request = *sp.request;
  const Layout l = layout_of(*request.cluster, sp.members[sp.self]);
  const std::vector<int>& host = l.hosts[l.host];
  const int per_host = static_cast<int>(host.size());
  const bool direct = intra_direct(request, host);
  const char* intra_name = direct ? "direct" : "ring";
  PhaseTracker tracker(request);

  BuildSpace local = sp;
  local.members = host;
  local.self = l.local;
  local.finalize = false;
  local.tracker = &tracker;
  build_phase(local, "reduce-scatter", intra_name,
              direct ? build_direct_allreduce_scatter_half : build_ring_allreduce_scatter_half);

  const int owned = direct ? direct_owned_segment(l.local, per_host) : ring_owned_segment(l.local, per_host);
  const Range segment = ring_segment(sp.count, per_host, owned);
  const PlanRequest priced = rail_request(request, per_host);
  const RailChoice across = rail_algorithm(priced, rail(l, l.local));
  BuildSpace inter = sp;
  inter.members = rail(l, l.local);
  inter.self = l.host;
  inter.in = inter.out = sp.output(segment.offset);
  inter.count = segment.count;
  inter.tracker = &tracker;
  build_phase(inter, "all-reduce", across.name, [&](BuildSpace& space) {
    if (space.count > 0) across.build(space);
  });

  local.in = sp.output(0);
  build_phase(local, "all-gather", intra_name,
              direct ? build_direct_allreduce_gather_half : build_ring_allreduce_gather_half);
}

Traffic hierarchical_allreduce_traffic(const PlanRequest& request, const std::vector<int>& members) {
  const ClusterView& view = *request.cluster;
  const Layout l = layout_of(view, members[0]);
  const int per_host = static_cast<int>(l.hosts[0].size());
  Traffic inside(view);
  for (const auto& host : l.hosts) {
    inside.add_alongside(intra_direct(request, host) ? direct_allreduce_traffic(request, host)
                                                     : ring_allreduce_traffic(request, host));
  }
  const PlanRequest priced = rail_request(request, per_host);
  Traffic across(view);
  for (int i = 0; i < per_host; ++i) across.add_alongside(rail_algorithm(priced, rail(l, i)).traffic);
  inside.add(across);
  return inside;
}

}  // namespace dc
