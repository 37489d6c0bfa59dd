// Pipelined chain broadcast: root -> root+1 -> ... -> root+n-1, chunk by chunk, so a rank forwards
// chunk k while it receives chunk k+1.
#include <vector>

#include "src/plan/generators.h"
#include "src/plan/plan_build.h"

namespace dc {

using namespace plan_build;

void build_pipeline_broadcast(const PlanRequest& request, Plan& plan) {
  const int n = request.nranks;
  const int r = request.rank;
  const int position = wrap(r - request.root, n);  // 0 = root, n-1 = end of the chain
  const std::vector<Range> chunks = split_chunks(request.count, chunk_elems(request));
  const uint64_t per_phase = chunks.size();

  if (position == 0) {
    for (size_t j = 0; j < chunks.size(); ++j) {
      plan.add(send(wrap(r + 1, n), make_tag(0, per_phase, j), input(chunks[j].offset),
                    chunks[j].count));
    }
    add_copy(plan, request, input(0), output(0), request.count);
    return;
  }
  for (size_t j = 0; j < chunks.size(); ++j) {
    const Range& c = chunks[j];
    const uint32_t got =
        plan.add(recv(wrap(r - 1, n), make_tag(0, per_phase, j), output(c.offset), c.count));
    if (position + 1 < n) {
      plan.add(send(wrap(r + 1, n), make_tag(0, per_phase, j), output(c.offset), c.count), {got});
    }
  }
}

}  // namespace dc
