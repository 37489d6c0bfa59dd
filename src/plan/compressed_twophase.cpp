// Two-phase compressed all-reduce, for any spec (with a top-k spec it is the owner-partitioned
// sparse reduce-scatter followed by a sparse all-gather): member k owns block k of n balanced
// blocks.
//  1. Every member encodes each other block with that block's share of its residual (its error
//     feedback) and sends it to the block's owner.
//  2. The owner adds the peers' decoded blocks to its own input block, in a fixed peer order
//     (float32 sums; float16 and bfloat16 add in float32 and round per message, as the dense plans
//     do), finalizes (avg), and re-quantizes the sum with its own block's residual: the owner's
//     error feedback.
//  3. The owners' messages go around a ring, forwarded at the length received, and every member,
//     the owner too, writes each block as its decoded message: all ranks hold the same bits.
#include <optional>
#include <vector>

#include "src/plan/generators.h"
#include "src/plan/message_steps.h"

namespace dc {

using namespace plan_build;

void build_twophase_allreduce(BuildSpace& sp) {
  const int n = sp.n(), r = sp.self;
  const bool ef = sp.request->compression->error_feedback;
  auto block = [&](int k) { return ring_segment(sp.count, n, wrap(k, n)); };
  auto residual = [&](uint64_t at) { return ef ? std::optional<BufRef>(sp.residual(at)) : std::nullopt; };

  // 1. Blocks to their owners. In place, a block's input is overwritten in 3 after its encode.
  std::vector<std::optional<uint32_t>> input_read(n);
  for (int i = 1; i < n; ++i) {
    const int k = wrap(r + i, n);
    const Range b = block(k);
    if (b.count == 0) continue;
    const Message m = new_message(sp, b.count);
    input_read[k] = sp.add(encode(sp.input(b.offset), residual(b.offset), m));
    sp.add(send_message(sp.peer(k), sp.tag(0, 1, 0), m), after(input_read[k]));
  }

  // 2. The owner's sum, re-quantized.
  const Range own = block(r);
  std::optional<Message> own_message;
  std::optional<uint32_t> own_encoded;
  if (own.count > 0) {
    std::optional<uint32_t> sum = sp.add_copy(sp.input(own.offset), sp.output(own.offset), own.count);
    const Message staging = new_message(sp, own.count);  // one receive at a time uses it
    for (int i = 1; i < n; ++i)
      sum = sp.add(recv_decode(sp.peer(r - i), sp.tag(0, 1, 0), sp.output(own.offset), staging, false), after(sum));
    if (auto fin = sp.add_finalize(sp.output(own.offset), own.count, after(sum))) sum = fin;
    own_message = new_message(sp, own.count);
    own_encoded = sp.add(encode(sp.output(own.offset), residual(own.offset), *own_message), after(sum));
    input_read[r] = own_encoded;
  }

  // 3. Every block as its owner's decoded message.
  std::vector<uint64_t> counts(n);
  for (int k = 0; k < n; ++k) counts[k] = block(k).count;
  const GatheredMessages all = ring_gather_messages(sp, 1, counts, own_message, own_encoded);
  for (int k = 0; k < n; ++k) {
    if (counts[k] == 0) continue;
    std::vector<uint32_t> deps = after(all.ready[k]);
    if (input_read[k] && input_read[k] != all.ready[k]) deps.push_back(*input_read[k]);
    sp.add(decode(all.message[k], sp.output(block(k).offset), true), deps);
  }
}

}  // namespace dc
