// Pairwise all-to-all: in round i (1..n-1) member r sends block r+i to member r+i and receives
// block r-i from member r-i; the own block is copied locally. In place, every outgoing block is first saved
// to Scratch, because the block received in round i overwrites the one sent in round n-i.
#include <vector>

#include "src/plan/generators.h"

namespace dc {

using namespace plan_build;

void build_pairwise_alltoall(BuildSpace& sp) {
  const int n = sp.n();
  const int r = sp.self;
  const uint64_t count = sp.count;
  const bool in_place = sp.request->in_place;
  // Out of place nothing waits on a part of a block, so each block is one message: fewer
  // rendezvous hand-offs, and one long copy per block over shared memory. In place, chunks let the
  // saving copies overlap the sends.
  const std::vector<Range> chunks = split_chunks(count, in_place ? sp.chunk_elems() : count);
  const uint64_t per_round = chunks.size();
  auto block = [&](int k) { return static_cast<uint64_t>(wrap(k, n)) * count; };
  auto saved_at = [&](int round) { return static_cast<uint64_t>(round - 1) * count; };

  sp.add_copy(sp.input(block(r)), sp.output(block(r)), count);

  // saved[i][j]: the copy of chunk j of the block sent in round i (in place only).
  std::vector<std::vector<uint32_t>> saved(n);
  if (in_place) {
    sp.reserve_scratch(static_cast<uint64_t>(n - 1) * count);
    for (int i = 1; i < n; ++i) {
      for (const Range& c : chunks) {
        saved[i].push_back(
            sp.add(copy(sp.input(block(r + i) + c.offset), sp.scratch(saved_at(i) + c.offset), c.count)));
      }
    }
  }
  for (int i = 1; i < n; ++i) {
    for (size_t j = 0; j < chunks.size(); ++j) {
      const Range& c = chunks[j];
      const uint32_t tag = sp.tag(0, per_round, j);
      if (in_place) {
        sp.add(send(sp.peer(r + i), tag, sp.scratch(saved_at(i) + c.offset), c.count), {saved[i][j]});
        // Block r-i is the one sent in round n-i; its copy must be taken first.
        sp.add(recv(sp.peer(r - i), tag, sp.output(block(r - i) + c.offset), c.count), {saved[n - i][j]});
      } else {
        sp.add(send(sp.peer(r + i), tag, sp.input(block(r + i) + c.offset), c.count));
        sp.add(recv(sp.peer(r - i), tag, sp.output(block(r - i) + c.offset), c.count));
      }
    }
  }
}

Traffic pairwise_alltoall_traffic(const PlanRequest& request, const std::vector<int>& members) {
  const ClusterView& view = *request.cluster;
  Traffic t(view);
  const double block = static_cast<double>(request.count * request.elem_size);
  // Inside each host pair by pair; between hosts by tier (ClusterView::reach), so that the price
  // of n ranks grows with n, not n².
  for (int h = 0; h < view.nhosts(); ++h)
    for (int from : view.ranks_on_host(h))
      for (int to : view.ranks_on_host(h)) t.transfer(from, to, block);
  for (int from : members) {
    const ClusterView::Reach& reach = view.reach(view.host_of(from));
    for (int tier = 0; tier < view.network_tiers(); ++tier) {
      const double bytes = reach.ranks[tier] * block;
      t.rank_link(from, tier, bytes, bytes);
      t.message_ends(view.host_of(from), 2 * reach.ranks[tier]);  // a block to and from each
    }
  }
  t.hops(static_cast<int>(members.size()) - 1, members.front(), members.back());
  return t;
}

}  // namespace dc
