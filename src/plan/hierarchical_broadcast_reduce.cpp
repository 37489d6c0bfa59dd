// Hierarchical broadcast and reduce for hosts with any number of ranks. One rank per host — the
// root on its own host, elsewhere the rank HostLayout::holder names for the root — forms a chain
// between the hosts (the pipelined chain generator over those leaders, hosts in topology order);
// inside each host the leader sends to, or folds from, the others over shared memory. Chunks
// pipeline across the two phases: a leader hands on chunk j as soon as it has it.
#include <vector>

#include "src/plan/fan.h"
#include "src/plan/generators.h"
#include "src/plan/host_layout.h"

namespace dc {

using namespace plan_build;

namespace {

std::vector<int> leaders_of(const HostLayout& L, int root) {
  std::vector<int> leaders;
  for (int h = 0; h < L.nhosts(); ++h) leaders.push_back(L.holder(h, root));
  return leaders;
}

std::vector<int> followers(const std::vector<int>& host, int leader) {
  std::vector<int> out;
  for (int m : host)
    if (m != leader) out.push_back(m);
  return out;
}

// The chain between hosts over the leaders, as a sub-space (this rank's index in it, if any).
BuildSpace chain_space(const BuildSpace& sp, const HostLayout& L, const std::vector<int>& leaders) {
  BuildSpace chain = sp;
  chain.members = leaders;
  chain.self = L.host_pos[sp.self];
  chain.root = L.host_pos[sp.root];
  return chain;
}

}  // namespace

void build_hierarchical_broadcast(BuildSpace& sp) {
  const HostLayout L(*sp.request->cluster);
  const int me = sp.self, root = sp.root;
  const std::vector<int> leaders = leaders_of(L, root);
  const int leader = leaders[L.host_pos[me]];
  const uint64_t per = chunk_count(sp.count, sp.chunk_elems());
  PhaseTracker tracker(*sp.request);
  sp.tracker = &tracker;
  if (me == leader)
    build_phase(chain_space(sp, L, leaders), {0, 2}, "broadcast between hosts", "pipeline", build_pipeline_broadcast);
  build_phase(sp, {1, 2}, "broadcast in host", "direct", [&](BuildSpace& space) {
    fan_out(space, leader, followers(L.hosts[L.host_pos[me]], leader), me == root ? space.input(0) : space.output(0),
            space.output(0), space.count, {0, per});
  });
}

void build_hierarchical_reduce(BuildSpace& sp) {
  const HostLayout L(*sp.request->cluster);
  const int me = sp.self, root = sp.root;
  const std::vector<int> leaders = leaders_of(L, root);
  const std::vector<int>& host = L.hosts[L.host_pos[me]];
  const int leader = leaders[L.host_pos[me]];
  const uint64_t c = sp.count, chunk = sp.chunk_elems(), per = chunk_count(c, chunk);
  const bool alone = host.size() == 1;
  // A leader's host sum: in Output on the root, in scratch on the others.
  BufRef sum = sp.output(0);
  if (me == leader && me != root && !alone) {
    sp.reserve_scratch(c);
    sum = sp.scratch(0);
  }
  PhaseTracker tracker(*sp.request);
  sp.tracker = &tracker;
  build_phase(sp, {0, 2}, "reduce in host", "direct", [&](BuildSpace& space) {
    if (alone) return;
    Staging staging(space, me == leader ? std::min<uint64_t>(per * (host.size() - 1), 2 * (host.size() - 1)) : 1,
                    me == leader ? std::min(chunk, c) : 0);
    fan_in(space, leader, followers(host, leader), space.input(0), sum, space.input(0), c, {0, per}, &staging);
  });
  if (me != leader) return;
  BuildSpace chain = chain_space(sp, L, leaders);
  if (!alone) chain.in = sum;
  build_phase(chain, {1, 2}, "reduce between hosts", "pipeline", build_pipeline_reduce);
}

Traffic hierarchical_broadcast_traffic(const PlanRequest& request, const std::vector<int>&) {
  const ClusterView& view = *request.cluster;
  const HostLayout L(view);
  const std::vector<int> leaders = leaders_of(L, request.root);
  PlanRequest chain = request;
  chain.root = L.host_pos[request.root];
  Traffic t = chain_traffic(chain, leaders, false);
  const double bytes = static_cast<double>(request.count * request.elem_size);
  for (int h = 0; h < L.nhosts(); ++h)
    for (int m : followers(L.hosts[h], leaders[h])) t.transfer(leaders[h], m, bytes);
  t.hops(1, view.intra_host().latency_s);
  return t;
}

Traffic hierarchical_reduce_traffic(const PlanRequest& request, const std::vector<int>&) {
  const ClusterView& view = *request.cluster;
  const HostLayout L(view);
  const std::vector<int> leaders = leaders_of(L, request.root);
  PlanRequest chain = request;
  chain.root = L.host_pos[request.root];
  Traffic t = chain_traffic(chain, leaders, true);
  const double bytes = static_cast<double>(request.count * request.elem_size);
  int widest = 1;
  for (int h = 0; h < L.nhosts(); ++h) {
    widest = std::max(widest, static_cast<int>(L.hosts[h].size()));
    for (int m : followers(L.hosts[h], leaders[h])) t.transfer(m, leaders[h], bytes, true);
  }
  t.hops(widest - 1, view.intra_host().latency_s);
  return t;
}

}  // namespace dc
