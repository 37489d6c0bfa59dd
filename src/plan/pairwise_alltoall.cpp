// Pairwise all-to-all: in round i (1..n-1) rank r sends block r+i to rank r+i and receives block
// r-i from rank r-i; the own block is copied locally. In place, every outgoing block is first saved
// to Scratch, because the block received in round i overwrites the one sent in round n-i.
#include <vector>

#include "src/plan/generators.h"
#include "src/plan/plan_build.h"

namespace dc {

using namespace plan_build;

void build_pairwise_alltoall(const PlanRequest& request, Plan& plan) {
  const int n = request.nranks;
  const int r = request.rank;
  const uint64_t count = request.count;
  // Out of place nothing waits on a part of a block, so each block is one message: fewer
  // rendezvous hand-offs, and one long copy per block over shared memory. In place, chunks let the
  // saving copies overlap the sends.
  const std::vector<Range> chunks = split_chunks(count, request.in_place ? chunk_elems(request) : count);
  const uint64_t per_round = chunks.size();
  auto block = [&](int k) { return static_cast<uint64_t>(wrap(k, n)) * count; };
  auto saved_at = [&](int round) { return static_cast<uint64_t>(round - 1) * count; };

  add_copy(plan, request, input(block(r)), output(block(r)), count);

  // saved[i][j]: the copy of chunk j of the block sent in round i (in place only).
  std::vector<std::vector<uint32_t>> saved(n);
  if (request.in_place) {
    plan.sizes.scratch = static_cast<uint64_t>(n - 1) * count;
    for (int i = 1; i < n; ++i) {
      for (const Range& c : chunks) {
        saved[i].push_back(
            plan.add(copy(input(block(r + i) + c.offset), scratch(saved_at(i) + c.offset),
                          c.count)));
      }
    }
  }
  for (int i = 1; i < n; ++i) {
    for (size_t j = 0; j < chunks.size(); ++j) {
      const Range& c = chunks[j];
      const uint32_t tag = make_tag(0, per_round, j);
      if (request.in_place) {
        plan.add(send(wrap(r + i, n), tag, scratch(saved_at(i) + c.offset), c.count),
                 {saved[i][j]});
        // Block r-i is the one sent in round n-i; its copy must be taken first.
        plan.add(recv(wrap(r - i, n), tag, output(block(r - i) + c.offset), c.count),
                 {saved[n - i][j]});
      } else {
        plan.add(send(wrap(r + i, n), tag, input(block(r + i) + c.offset), c.count));
        plan.add(recv(wrap(r - i, n), tag, output(block(r - i) + c.offset), c.count));
      }
    }
  }
}

}  // namespace dc
