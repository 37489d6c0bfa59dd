// Hierarchical compressed all-reduce: dense inside each host, compressed only across hosts. Three
// pipelined phases, as the dense hierarchical plan: a dense reduce-scatter inside each host (direct
// halves over shared memory, ring halves over sockets) leaves local member i with segment i summed
// over its host; the members with the same local index on every host (a rail) run a compressed
// all-reduce of that segment (two-phase or sparse all-gather, the cheaper by the cost model, the
// same on every rail), each with the segment's share of its residual; a dense all-gather inside
// each host hands every segment to all. Only the compressed phase crosses the slow tier, and its
// result is the same bits on every rail member, so every rank ends with the same bits.
#include <vector>

#include "src/plan/generators.h"

namespace dc {

using namespace plan_build;

namespace {

std::vector<int> rail_of(const ClusterView& view, int local) {
  std::vector<int> members;
  for (int h = 0; h < view.nhosts(); ++h) members.push_back(view.ranks_on_host(h)[local]);
  return members;
}

struct RailChoice {
  const char* name;
  void (*build)(BuildSpace&);
  Traffic traffic;
};

// Priced with the longest segment, so that every rail takes the same algorithm.
RailChoice rail_algorithm(const PlanRequest& request, int ranks_per_host, const std::vector<int>& rail) {
  PlanRequest segment = request;
  segment.count = ring_segment(request.count, ranks_per_host, 0).count;
  RailChoice twophase{"twophase", build_twophase_allreduce, twophase_allreduce_traffic(segment, rail)};
  RailChoice gather{"sparsegather", build_sparse_allgather_allreduce, sparse_allgather_allreduce_traffic(segment, rail)};
  return gather.traffic.seconds() < twophase.traffic.seconds() ? gather : twophase;
}

}  // namespace

void build_hierarchical_compressed_allreduce(BuildSpace& sp) {
  const PlanRequest& request = *sp.request;
  const ClusterView& view = *request.cluster;
  const int rank = sp.members[sp.self];
  const std::vector<int> host = view.ranks_on_host(view.host_of(rank));
  const int per_host = static_cast<int>(host.size()), local = view.local_index(rank);
  const bool direct = members_share_memory(request, host);
  const char* intra = direct ? "direct" : "ring";
  PhaseTracker tracker(request);

  BuildSpace inside = sp;
  inside.members = host;
  inside.self = local;
  inside.finalize = false;
  inside.tracker = &tracker;
  build_phase(inside, "reduce-scatter", intra,
              direct ? build_direct_allreduce_scatter_half : build_ring_allreduce_scatter_half);

  const int owned = direct ? direct_owned_segment(local, per_host) : ring_owned_segment(local, per_host);
  const Range segment = ring_segment(sp.count, per_host, owned);
  const RailChoice across = rail_algorithm(request, per_host, rail_of(view, local));
  BuildSpace rail = sp;
  rail.members = rail_of(view, local);
  rail.self = view.host_of(rank);
  rail.in = rail.out = sp.output(segment.offset);  // its residual share starts there too
  rail.count = segment.count;
  rail.tracker = &tracker;
  build_phase(rail, "compressed all-reduce", across.name, [&](BuildSpace& space) {
    if (space.count > 0) across.build(space);
  });

  inside.in = sp.output(0);
  build_phase(inside, "all-gather", intra, direct ? build_direct_allreduce_gather_half : build_ring_allreduce_gather_half);
}

Traffic hierarchical_compressed_allreduce_traffic(const PlanRequest& request, const std::vector<int>&) {
  const ClusterView& view = *request.cluster;
  Traffic inside(view);
  for (int h = 0; h < view.nhosts(); ++h) {
    const std::vector<int> host = view.ranks_on_host(h);
    inside.add_alongside(members_share_memory(request, host) ? direct_allreduce_traffic(request, host)
                                                             : ring_allreduce_traffic(request, host));
  }
  const int per_host = static_cast<int>(view.ranks_on_host(0).size());
  Traffic across(view);
  for (int i = 0; i < per_host; ++i) across.add_alongside(rail_algorithm(request, per_host, rail_of(view, i)).traffic);
  inside.add(across);
  return inside;
}

}  // namespace dc
