// Direct all-gather and broadcast for members on shared memory: every member takes each block
// straight from the member that has it, as one message. Nothing is forwarded, so nothing waits on
// part of a block and chunking would only add rendezvous hand-offs; over cross-memory attach each
// block is one long copy by its receiver. The bytes through memory are those of the ring and the
// chain.
#include "src/plan/generators.h"

namespace dc {

using namespace plan_build;

void build_direct_allgather(BuildSpace& sp) {
  const int n = sp.n();
  const int r = sp.self;
  const uint64_t count = sp.count;
  const uint32_t tag = sp.tag(0, 1, 0);
  // In place the own block already is Input.
  sp.add_copy(sp.input(0), sp.output(static_cast<uint64_t>(r) * count), count);
  for (int i = 1; i < n; ++i) sp.add(send(sp.peer(r + i), tag, sp.input(0), count));
  for (int i = 1; i < n; ++i) {
    const int from = wrap(r - i, n);
    sp.add(recv(sp.peer(from), tag, sp.output(static_cast<uint64_t>(from) * count), count));
  }
}

void build_direct_broadcast(BuildSpace& sp) {
  const int n = sp.n();
  const int r = sp.self;
  const uint32_t tag = sp.tag(0, 1, 0);
  if (r != sp.root) {
    sp.add(recv(sp.peer(sp.root), tag, sp.output(0), sp.count));
    return;
  }
  for (int i = 1; i < n; ++i) sp.add(send(sp.peer(r + i), tag, sp.input(0), sp.count));
  sp.add_copy(sp.input(0), sp.output(0), sp.count);
}

Traffic direct_allgather_traffic(const PlanRequest& request, const std::vector<int>& members) {
  return all_pairs_traffic(request, members);
}

Traffic direct_broadcast_traffic(const PlanRequest& request, const std::vector<int>& members) {
  return star_traffic(request, members, false, 1);
}

}  // namespace dc
