// Hierarchical all-gather and reduce-scatter for hosts with any number of ranks. Each block
// crosses between two hosts once, so each host's link carries what it must and no more (all-gather:
// its ranks' blocks out to every other host, every other rank's block in; reduce-scatter the
// reverse), while everything else moves over shared memory inside the hosts.
//
// All-gather: every rank sends its block to one rank of every other host (HostLayout::holder),
// which hands it to the rest of its host; a chunk is handed on as soon as it arrived.
// Reduce-scatter: inside each host the ranks fold every block into one holder (the block's own
// rank on its host); the holders then send their host's partial sums to the block's rank, which
// folds them in host order and finalizes. A chunk leaves its host as soon as its host sum is done.
#include <algorithm>
#include <vector>

#include "src/plan/fan.h"
#include "src/plan/generators.h"
#include "src/plan/host_layout.h"

namespace dc {

using namespace plan_build;

namespace {

std::vector<int> others(const std::vector<int>& host, int except) {
  std::vector<int> out;
  for (int m : host)
    if (m != except) out.push_back(m);
  return out;
}

// How many blocks each member of host h holds for the others: its own and, as HostLayout::holder,
// those of other hosts' ranks.
std::vector<int> blocks_held(const HostLayout& L, int h) {
  const int r = static_cast<int>(L.hosts[h].size());
  std::vector<int> holds(r, 1);
  for (size_t d = 0; d < L.host_pos.size(); ++d)
    if (L.host_pos[d] != h) ++holds[L.local[d] % r];
  return holds;
}

uint64_t staging_slots(uint64_t folds, int senders) {
  return std::max<uint64_t>(1, std::min<uint64_t>(folds, 2 * static_cast<uint64_t>(std::max(senders, 1))));
}

}  // namespace

void build_hierarchical_allgather(BuildSpace& sp) {
  const HostLayout L(*sp.request->cluster);
  const int n = sp.n(), me = sp.self;
  const uint64_t c = sp.count, per = chunk_count(c, sp.chunk_elems());
  PhaseTracker tracker(*sp.request);
  sp.tracker = &tracker;
  build_phase(sp, {0, 2}, "all-gather between hosts", "direct", [&](BuildSpace& space) {
    space.add_copy(space.input(0), space.output(static_cast<uint64_t>(me) * c), c);
    for (int s = 0; s < n; ++s) {
      std::vector<int> receivers;
      for (int h = 0; h < L.nhosts(); ++h)
        if (h != L.host_pos[s]) receivers.push_back(L.holder(h, s));
      fan_out(space, s, receivers, space.input(0), space.output(static_cast<uint64_t>(s) * c), c,
              {static_cast<uint64_t>(s), per});
    }
  });
  build_phase(sp, {1, 2}, "all-gather in host", "direct", [&](BuildSpace& space) {
    const std::vector<int>& host = L.hosts[L.host_pos[me]];
    for (int s = 0; s < n; ++s) {
      const int holder = L.holder(L.host_pos[me], s);
      const BufRef block = space.output(static_cast<uint64_t>(s) * c);
      fan_out(space, holder, others(host, holder), holder == s ? space.input(0) : block, block, c,
              {static_cast<uint64_t>(s), per});
    }
  });
}

void build_hierarchical_reduce_scatter(BuildSpace& sp) {
  const HostLayout L(*sp.request->cluster);
  const int n = sp.n(), me = sp.self;
  const uint64_t c = sp.count, chunk = sp.chunk_elems(), per = chunk_count(c, chunk);
  const int my_host = L.host_pos[me];
  const std::vector<int>& host = L.hosts[my_host];
  const int r = static_cast<int>(host.size());
  auto block = [&](int d) { return sp.input(static_cast<uint64_t>(d) * c); };
  // This rank's host sums of other hosts' blocks, one after another in scratch.
  std::vector<int> acc_index(n, -1);
  int held = 0;
  for (int d = 0; d < n; ++d)
    if (r > 1 && L.host_pos[d] != my_host && L.holder(my_host, d) == me) acc_index[d] = held++;
  sp.reserve_scratch(static_cast<uint64_t>(held) * c);
  const uint64_t acc_base = sp.scratch_base;
  auto acc = [&](int d) { return BufRef{BufId::Scratch, acc_base + static_cast<uint64_t>(acc_index[d]) * c}; };
  // Where the host's sum of block d is on its holder (the block itself when the host has one rank).
  auto host_sum = [&](int d, int host_size) {
    if (host_size == 1) return block(d);
    return d == me ? sp.output(0) : acc(d);
  };
  PhaseTracker tracker(*sp.request);
  sp.tracker = &tracker;

  build_phase(sp, {0, 2}, "reduce-scatter in host", "direct", [&](BuildSpace& space) {
    if (r == 1) return;
    const uint64_t folds = static_cast<uint64_t>(held + 1) * per * (r - 1);
    Staging staging(space, staging_slots(folds, r - 1), std::min(chunk, c));
    for (int d = 0; d < n; ++d) {
      const int holder = L.holder(my_host, d);
      fan_in(space, holder, others(host, holder), block(d), host_sum(d, r), block(d), c,
             {static_cast<uint64_t>(d), per}, &staging);
    }
  });
  build_phase(sp, {1, 2}, "reduce-scatter between hosts", "direct", [&](BuildSpace& space) {
    std::vector<int> senders;
    for (int h = 0; h < L.nhosts(); ++h)
      if (h != my_host) senders.push_back(L.holder(h, me));
    // As the block's rank: fold every other host's sum into the own host's.
    Staging staging(space, staging_slots(per * senders.size(), static_cast<int>(senders.size())), std::min(chunk, c));
    for (int d = 0; d < n; ++d) {
      const int dh = L.host_pos[d];
      std::vector<int> from;
      for (int h = 0; h < L.nhosts(); ++h)
        if (h != dh) from.push_back(L.holder(h, d));
      const int own_size = static_cast<int>(L.hosts[dh].size());
      const std::vector<uint32_t> done = fan_in(space, d, from, host_sum(d, own_size), space.output(0), host_sum(d, r),
                                                c, {static_cast<uint64_t>(d), per}, &staging);
      if (d != me) continue;
      for (size_t j = 0; j < done.size(); ++j) {
        const uint64_t at = j * chunk;
        space.add_finalize(space.output(at), std::min(chunk, c - at), {done[j]});
      }
    }
  });
}

Traffic hierarchical_allgather_traffic(const PlanRequest& request, const std::vector<int>&) {
  const ClusterView& view = *request.cluster;
  const HostLayout L(view);
  Traffic t(view);
  const double block = static_cast<double>(request.count * request.elem_size);
  // Every block is a message of its own: one to each other host, then one to each other rank there.
  for (int s = 0; s < view.nranks(); ++s) {
    const ClusterView::Reach& reach = view.reach(view.host_of(s));
    for (int tier = 0; tier < view.network_tiers(); ++tier) {
      t.rank_link(s, tier, reach.hosts[tier] * block, 0);
      t.message_ends(view.host_of(s), reach.hosts[tier]);
    }
  }
  int widest = 1;
  for (int h = 0; h < L.nhosts(); ++h) {
    const std::vector<int>& host = L.hosts[h];
    const int r = static_cast<int>(host.size());
    widest = std::max(widest, r);
    const ClusterView::Reach& reach = view.reach(view.host_of(host[0]));
    for (int tier = 0; tier < view.network_tiers(); ++tier) {
      t.host_link(view.host_of(host[0]), tier, 0, reach.ranks[tier] * block);
      t.message_ends(view.host_of(host[0]), reach.ranks[tier]);
    }
    // Inside: each member hands the blocks it holds (its own and those it received) to the others.
    const std::vector<int> holds = blocks_held(L, h);
    for (int a = 0; a < r; ++a)
      for (int b = 0; b < r; ++b) t.transfer(host[a], host[b], holds[a] * block, false, holds[a]);
  }
  t.hops(L.nhosts() - 1, view.network_tier(view.network_tiers() - 1).latency_s);
  t.hops(widest - 1, view.intra_host().latency_s);
  return t;
}

Traffic hierarchical_reduce_scatter_traffic(const PlanRequest& request, const std::vector<int>&) {
  const ClusterView& view = *request.cluster;
  const HostLayout L(view);
  Traffic t(view);
  const double block = static_cast<double>(request.count * request.elem_size);
  int widest = 1;
  for (int h = 0; h < L.nhosts(); ++h) {
    const std::vector<int>& host = L.hosts[h];
    const int r = static_cast<int>(host.size());
    widest = std::max(widest, r);
    // Inside: each member folds the others' copies of the blocks it holds.
    const std::vector<int> holds = blocks_held(L, h);
    for (int a = 0; a < r; ++a)
      for (int b = 0; b < r; ++b) t.transfer(host[b], host[a], holds[a] * block, true, holds[a]);
    // Between hosts: the holders send one sum per rank of every other host; each rank takes one
    // from every other host and folds it in.
    const ClusterView::Reach& reach = view.reach(view.host_of(host[0]));
    for (int tier = 0; tier < view.network_tiers(); ++tier) {
      t.host_link(view.host_of(host[0]), tier, reach.ranks[tier] * block, 0);
      t.message_ends(view.host_of(host[0]), reach.ranks[tier]);
      for (int d : host) {
        t.rank_link(d, tier, 0, reach.hosts[tier] * block);
        t.message_ends(view.host_of(d), reach.hosts[tier]);
        t.memory(d, 2 * reach.hosts[tier] * block);
      }
    }
  }
  t.hops(L.nhosts() - 1, view.network_tier(view.network_tiers() - 1).latency_s);
  t.hops(widest - 1, view.intra_host().latency_s);
  return t;
}

}  // namespace dc
