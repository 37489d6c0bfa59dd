// Pipelined chain reduce toward the root: root+n-1 -> root+n-2 -> ... -> root, chunk by chunk.
// Each rank adds its input to the partial result it receives and forwards it; the root finalizes.
// Non-root ranks keep partial results in Scratch and never touch Output.
#include <vector>

#include "src/plan/generators.h"
#include "src/plan/plan_build.h"

namespace dc {

using namespace plan_build;

void build_pipeline_reduce(const PlanRequest& request, Plan& plan) {
  const int n = request.nranks;
  const int r = request.rank;
  const int position = wrap(r - request.root, n);  // 0 = root, n-1 = start of the chain
  const int toward_root = wrap(r - 1, n);
  const int from_tail = wrap(r + 1, n);
  const uint64_t count = request.count;
  const std::vector<Range> chunks = split_chunks(count, chunk_elems(request));
  const uint64_t per_phase = chunks.size();

  if (position == n - 1) {
    for (size_t j = 0; j < chunks.size(); ++j) {
      plan.add(send(toward_root, make_tag(0, per_phase, j), input(chunks[j].offset),
                    chunks[j].count));
    }
    return;
  }
  // Scratch: [0, count) stages received chunks; [count, 2*count) holds partial results.
  const bool root = position == 0;
  plan.sizes.scratch = root ? count : 2 * count;
  for (size_t j = 0; j < chunks.size(); ++j) {
    const Range& c = chunks[j];
    const uint32_t tag = make_tag(0, per_phase, j);
    const BufRef dst = root ? output(c.offset) : scratch(count + c.offset);
    const uint32_t reduced =
        plan.add(recv_reduce(from_tail, tag, input(c.offset), dst, scratch(c.offset), c.count));
    if (root) {
      plan.add(finalize(dst, c.count), {reduced});
    } else {
      plan.add(send(toward_root, tag, dst, c.count), {reduced});
    }
  }
}

}  // namespace dc
