// Ring all-gather: step s forwards block r-s to the next rank and receives block r-s-1 from the
// previous one, chunk by chunk; chunk j of step s waits only for chunk j of step s-1.
#include <vector>

#include "src/plan/generators.h"
#include "src/plan/plan_build.h"

namespace dc {

using namespace plan_build;

void build_ring_allgather(const PlanRequest& request, Plan& plan) {
  const int n = request.nranks;
  const int r = request.rank;
  const uint64_t count = request.count;
  const std::vector<Range> chunks = split_chunks(count, chunk_elems(request));
  const uint64_t per_step = chunks.size();
  auto block = [&](int k) { return static_cast<uint64_t>(wrap(k, n)) * count; };

  // In place the own block already is Input.
  add_copy(plan, request, input(0), output(block(r)), count);

  std::vector<uint32_t> received(chunks.size());
  for (int s = 0; s + 1 < n; ++s) {
    for (size_t j = 0; j < chunks.size(); ++j) {
      const Range& c = chunks[j];
      if (s == 0) {
        plan.add(send(wrap(r + 1, n), make_tag(s, per_step, j), input(c.offset), c.count));
      } else {
        plan.add(send(wrap(r + 1, n), make_tag(s, per_step, j), output(block(r - s) + c.offset),
                      c.count),
                 {received[j]});
      }
    }
    for (size_t j = 0; j < chunks.size(); ++j) {
      const Range& c = chunks[j];
      received[j] = plan.add(recv(wrap(r - 1, n), make_tag(s, per_step, j),
                                  output(block(r - s - 1) + c.offset), c.count));
    }
  }
}

}  // namespace dc
