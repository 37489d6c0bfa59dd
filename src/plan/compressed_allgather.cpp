// Sparse all-gather all-reduce, for few ranks: every member encodes its whole buffer once, with its
// whole residual; the messages go around a ring (forwarded at the length received); every member
// then decodes all n messages into its output in member order, the first one overwriting. No
// message is decoded and re-encoded on the way, so a top-k's kept elements arrive as they were
// quantized once; the price is n-1 whole messages into every member, against about 2(n-1)/n of
// them for the two-phase plan, which the cost model weighs.
#include <optional>
#include <vector>

#include "src/plan/generators.h"
#include "src/plan/message_steps.h"

namespace dc {

using namespace plan_build;

void build_sparse_allgather_allreduce(BuildSpace& sp) {
  const int n = sp.n();
  const bool ef = sp.request->compression->error_feedback;
  const Message own = new_message(sp, sp.count);
  const uint32_t encoded = sp.add(encode(sp.input(0), ef ? std::optional<BufRef>(sp.residual(0)) : std::nullopt, own));
  const GatheredMessages all = ring_gather_messages(sp, 0, std::vector<uint64_t>(n, sp.count), own, encoded);
  // In place, the first decode overwrites the input the encode read.
  std::optional<uint32_t> last = encoded;
  for (int j = 0; j < n; ++j) {
    std::vector<uint32_t> deps = after(all.ready[j]);
    if (last != all.ready[j]) deps.push_back(*last);
    last = sp.add(decode(all.message[j], sp.output(0), j == 0), deps);
  }
  sp.add_finalize(sp.output(0), sp.count, after(last));
}

}  // namespace dc
