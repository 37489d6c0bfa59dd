#include "src/plan/message_steps.h"

#include "compression/form/message_form.h"

namespace dc::plan_build {

Message new_message(BuildSpace& space, uint64_t count) {
  Message m;
  m.count = count;
  m.capacity = compression::max_message_bytes(*space.request->compression, count);
  m.at = space.reserve_bytes(m.capacity);
  m.slot = space.new_length_slot();
  return m;
}

namespace {

Step message_step(StepKind kind, const Message& m) {
  Step s;
  s.kind = kind;
  s.count = m.count;
  s.bytes = m.capacity;
  s.slot = m.slot;
  return s;
}

}  // namespace

Step encode(BufRef src, std::optional<BufRef> residual, const Message& m) {
  Step s = message_step(StepKind::Encode, m);
  s.src = src;
  s.dst = m.at;
  if (residual) s.aux = *residual;
  return s;
}

Step send_message(int peer, uint32_t tag, const Message& m) {
  Step s = message_step(StepKind::SendMessage, m);
  s.peer = peer;
  s.tag = tag;
  s.src = m.at;
  return s;
}

Step recv_message(int peer, uint32_t tag, const Message& m) {
  Step s = message_step(StepKind::RecvMessage, m);
  s.peer = peer;
  s.tag = tag;
  s.dst = m.at;
  return s;
}

Step decode(const Message& m, BufRef dst, bool overwrite) {
  Step s = message_step(StepKind::Decode, m);
  s.src = m.at;
  s.dst = dst;
  s.overwrite = overwrite;
  return s;
}

Step recv_decode(int peer, uint32_t tag, BufRef dst, const Message& staging, bool overwrite) {
  Step s = message_step(StepKind::RecvDecode, staging);
  s.peer = peer;
  s.tag = tag;
  s.dst = dst;
  s.aux = staging.at;
  s.overwrite = overwrite;
  return s;
}

GatheredMessages ring_gather_messages(BuildSpace& sp, uint64_t phase, const std::vector<uint64_t>& counts,
                                      const std::optional<Message>& own, std::optional<uint32_t> own_ready) {
  const int n = sp.n(), r = sp.self;
  GatheredMessages g;
  g.message.resize(n);
  g.ready.resize(n);
  if (own) {
    g.message[r] = *own;
    g.ready[r] = own_ready;
  }
  for (int s = 0; s + 1 < n; ++s) {
    const int forwarded = wrap(r - s, n), received = wrap(r - 1 - s, n);
    const uint32_t tag = sp.tag(phase + s, 1, 0);
    if (counts[forwarded] > 0)
      sp.add(send_message(sp.peer(r + 1), tag, g.message[forwarded]), after(g.ready[forwarded]));
    if (counts[received] > 0) {
      g.message[received] = new_message(sp, counts[received]);
      g.ready[received] = sp.add(recv_message(sp.peer(r - 1), tag, g.message[received]));
    }
  }
  return g;
}

}  // namespace dc::plan_build
