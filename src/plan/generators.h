// The generator registry: one entry per algorithm of a collective, with whether it applies to a
// set of member ranks, how it builds a rank's plan over a BuildSpace, and its analytical traffic
// (the cost model prices that). make_plan validates the request and handles count 0, single-rank
// plans and point-to-point; a generator then appends the steps over its space. Spaces reaching a
// generator have at least 2 members and a count of at least 1.
#pragma once

#include <string>
#include <vector>

#include "src/plan/compose.h"
#include "src/plan/cost_model.h"
#include "src/plan/plan.h"

namespace dc {

struct Generator {
  const char* name;
  dcCollective_t collective;
  // Whether the generator builds a correct plan for these members (comm ranks) of the request.
  bool (*applicable)(const PlanRequest& request, const std::vector<int>& members);
  void (*build)(BuildSpace& space);
  // What the plan of every member together moves, for the request's count.
  Traffic (*traffic)(const PlanRequest& request, const std::vector<int>& members);
  // Builds a compressed all-reduce: applies exactly to requests with a compression spec.
  bool compressed = false;
};

// Every generator, in preference order: the selector takes the first of equally cheap ones.
const std::vector<Generator>& generator_registry();
const Generator* find_generator(dcCollective_t collective, const std::string& name);

bool any_members(const PlanRequest& request, const std::vector<int>& members);
// All members on one host, exchanging bytes through shared memory.
bool members_share_memory(const PlanRequest& request, const std::vector<int>& members);
// Members on two hosts or more (NCCL's double binary tree runs between nodes).
bool members_span_hosts(const PlanRequest& request, const std::vector<int>& members);

void build_ring_allreduce(BuildSpace& space);
void build_direct_allreduce(BuildSpace& space);
void build_tree_allreduce(BuildSpace& space);
void build_doubling_allreduce(BuildSpace& space);
void build_halving_allreduce(BuildSpace& space);
void build_dbtree_allreduce(BuildSpace& space);
void build_hierarchical_allreduce(BuildSpace& space);
void build_hierarchical_allgather(BuildSpace& space);
void build_hierarchical_reduce_scatter(BuildSpace& space);
void build_hierarchical_broadcast(BuildSpace& space);
void build_hierarchical_reduce(BuildSpace& space);
void build_ring_allgather(BuildSpace& space);
void build_direct_allgather(BuildSpace& space);
void build_direct_broadcast(BuildSpace& space);
void build_ring_reduce_scatter(BuildSpace& space);
void build_pipeline_broadcast(BuildSpace& space);
void build_pipeline_reduce(BuildSpace& space);
void build_pairwise_alltoall(BuildSpace& space);
void build_direct_gather(BuildSpace& space);
void build_direct_scatter(BuildSpace& space);

// The halves of the all-reduces, as phases of a composed plan over a region of `count` elements
// in n balanced segments: after the reduce-scatter half member i holds segment owned_segment(i)
// reduced over the members (not finalized); the all-gather half sends each member's segment to all.
void build_ring_allreduce_scatter_half(BuildSpace& space);
void build_ring_allreduce_gather_half(BuildSpace& space);
void build_direct_allreduce_scatter_half(BuildSpace& space);
void build_direct_allreduce_gather_half(BuildSpace& space);
int ring_owned_segment(int member, int n);
int direct_owned_segment(int member, int n);

Traffic ring_allreduce_traffic(const PlanRequest& request, const std::vector<int>& members);
Traffic direct_allreduce_traffic(const PlanRequest& request, const std::vector<int>& members);
Traffic tree_allreduce_traffic(const PlanRequest& request, const std::vector<int>& members);
Traffic doubling_allreduce_traffic(const PlanRequest& request, const std::vector<int>& members);
// Recursive doubling sends the whole vector in every round: past this size its rounds cost more
// than the tree's extra hops (4 ranks on 2 cores: even with the tree at 32-64 KiB; at 128-256 KiB
// up to 1.34 times the time of the plan chosen without it; docs/performance.md), though the cost
// model, which prices a message's CPU by count alone, would still pick it.
constexpr uint64_t kDoublingMaxBytes = 32 << 10;
bool doubling_allreduce_applicable(const PlanRequest& request, const std::vector<int>& members);
// Recursive halving and doubling applies to a power of two of members on one host that exchange
// bytes over a transport (TCP, UCX), when each member's final segment (count / n) is from
// kHalvingMinSegmentBytes to kHalvingMaxSegmentBytes: 256 KiB-1 MiB at 4 ranks, 512 KiB-2 MiB at
// 8. There it measured 0.72-0.96 of the ring's time over TCP and over UCX's shared memory. Beyond,
// over TCP, the ring's steady streams won (a 2 MiB all-reduce at 4 ranks took 1.12 times as long
// halved); below, the trees. Where the transport receives in place (UCX over cross-memory attach:
// ClusterView::receives_in_place) it also won up to kHalvingMaxBytesInPlace, the largest vector
// measured (2-64 MiB: 0.80-0.93 of the ring's time at 4 ranks, 0.85-0.97 at 8). Between hosts and
// over DeepComm's shared memory it has not been measured against the plans chosen there.
// docs/performance.md.
constexpr uint64_t kHalvingMinSegmentBytes = 64 << 10;
constexpr uint64_t kHalvingMaxSegmentBytes = 256 << 10;
constexpr uint64_t kHalvingMaxBytesInPlace = 64 << 20;
bool halving_allreduce_applicable(const PlanRequest& request, const std::vector<int>& members);
Traffic halving_allreduce_traffic(const PlanRequest& request, const std::vector<int>& members);
Traffic dbtree_allreduce_traffic(const PlanRequest& request, const std::vector<int>& members);
Traffic hierarchical_allreduce_traffic(const PlanRequest& request, const std::vector<int>& members);
bool hierarchical_allreduce_applicable(const PlanRequest& request, const std::vector<int>& members);
Traffic hierarchical_allgather_traffic(const PlanRequest& request, const std::vector<int>& members);
Traffic hierarchical_reduce_scatter_traffic(const PlanRequest& request, const std::vector<int>& members);
Traffic hierarchical_broadcast_traffic(const PlanRequest& request, const std::vector<int>& members);
Traffic hierarchical_reduce_traffic(const PlanRequest& request, const std::vector<int>& members);
// Several hosts, one of them with several ranks, and every rank taking part (host_layout.cpp).
bool hierarchical_applicable(const PlanRequest& request, const std::vector<int>& members);
// The halves' traffic over members where member j ends with owned_bytes[j] (scatter: reduced;
// gather: sent to all), as hierarchical plans use them.
Traffic ring_half_traffic(const PlanRequest& request, const std::vector<int>& members,
                          const std::vector<double>& owned_bytes, bool scatter);
Traffic direct_half_traffic(const PlanRequest& request, const std::vector<int>& members,
                            const std::vector<double>& owned_bytes, bool scatter);
// α of one step of a ring: every edge carries a message at each step, so the slowest edge sets
// the pace.
double ring_step_latency(const ClusterView& view, const std::vector<int>& ring);
Traffic ring_allgather_traffic(const PlanRequest& request, const std::vector<int>& members);
Traffic direct_allgather_traffic(const PlanRequest& request, const std::vector<int>& members);
Traffic direct_broadcast_traffic(const PlanRequest& request, const std::vector<int>& members);
Traffic ring_reduce_scatter_traffic(const PlanRequest& request, const std::vector<int>& members);
// Every member sends a block to every other.
Traffic all_pairs_traffic(const PlanRequest& request, const std::vector<int>& members);
// The root sends a block to every member (toward_root: every member to the root), `hops` messages
// one after another on the critical path.
Traffic star_traffic(const PlanRequest& request, const std::vector<int>& members, bool toward_root, int hops);
// A chain from the root to the last member (reduce: toward the root), chunk by chunk.
Traffic chain_traffic(const PlanRequest& request, const std::vector<int>& members, bool reduce);
Traffic pipeline_broadcast_traffic(const PlanRequest& request, const std::vector<int>& members);
Traffic pipeline_reduce_traffic(const PlanRequest& request, const std::vector<int>& members);
Traffic pairwise_alltoall_traffic(const PlanRequest& request, const std::vector<int>& members);
Traffic direct_gather_traffic(const PlanRequest& request, const std::vector<int>& members);
Traffic direct_scatter_traffic(const PlanRequest& request, const std::vector<int>& members);

// Send and Recv (also with nranks 1, where the peer is the rank itself).
void build_p2p(const PlanRequest& request, Plan& plan);

// Compressed all-reduces (compressed_*.cpp).
void build_twophase_allreduce(BuildSpace& space);
void build_sparse_allgather_allreduce(BuildSpace& space);
Traffic twophase_allreduce_traffic(const PlanRequest& request, const std::vector<int>& members);
Traffic sparse_allgather_allreduce_traffic(const PlanRequest& request, const std::vector<int>& members);

}  // namespace dc
