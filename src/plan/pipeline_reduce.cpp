// Pipelined chain reduce toward the root: root+n-1 -> root+n-2 -> ... -> root, chunk by chunk.
// Each rank adds its input to the partial result it receives and forwards it; the root finalizes.
// Non-root members keep partial results in Scratch and never touch Output.
#include <vector>

#include "src/plan/generators.h"

namespace dc {

using namespace plan_build;

void build_pipeline_reduce(BuildSpace& sp) {
  const int n = sp.n();
  const int r = sp.self;
  const int position = wrap(r - sp.root, n);  // 0 = root, n-1 = start of the chain
  const int toward_root = sp.peer(r - 1);
  const int from_tail = sp.peer(r + 1);
  const uint64_t count = sp.count;
  const std::vector<Range> chunks = split_chunks(count, sp.chunk_elems());
  const uint64_t per_phase = chunks.size();

  if (position == n - 1) {
    for (size_t j = 0; j < chunks.size(); ++j) {
      sp.add(send(toward_root, sp.tag(0, per_phase, j), sp.input(chunks[j].offset), chunks[j].count));
    }
    return;
  }
  // Scratch: [0, count) stages received chunks; [count, 2*count) holds partial results.
  const bool root = position == 0;
  sp.reserve_scratch(root ? count : 2 * count);
  for (size_t j = 0; j < chunks.size(); ++j) {
    const Range& c = chunks[j];
    const uint32_t tag = sp.tag(0, per_phase, j);
    const BufRef dst = root ? sp.output(c.offset) : sp.scratch(count + c.offset);
    const uint32_t reduced =
        sp.add(recv_reduce(from_tail, tag, sp.input(c.offset), dst, sp.scratch(c.offset), c.count));
    if (root) {
      sp.add_finalize(dst, c.count, {reduced});
    } else {
      sp.add(send(toward_root, tag, dst, c.count), {reduced});
    }
  }
}

Traffic pipeline_reduce_traffic(const PlanRequest& request, const std::vector<int>& members) {
  return chain_traffic(request, members, true);
}

}  // namespace dc
