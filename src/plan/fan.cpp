#include "src/plan/fan.h"

#include <algorithm>

namespace dc {

using namespace plan_build;

Staging::Staging(BuildSpace& space, uint64_t slots, uint64_t slot_elems) : slot_elems_(slot_elems), last_(slots) {
  space.reserve_scratch(slots * slot_elems);
  base_ = space.scratch_base;
}

BufRef Staging::take(std::vector<uint32_t>& deps) {
  const uint64_t slot = next_ % last_.size();
  if (last_[slot]) deps.push_back(*last_[slot]);
  return {BufId::Scratch, base_ + slot * slot_elems_};
}

void Staging::used_by(uint32_t step) { last_[next_++ % last_.size()] = step; }

std::vector<uint32_t> fan_in(BuildSpace& sp, int to, const std::vector<int>& from, BufRef own, BufRef dst, BufRef src,
                             uint64_t count, FanTags tags, Staging* staging) {
  const int me = sp.self;
  const uint64_t chunk = sp.chunk_elems();
  std::vector<uint32_t> finished;
  if (me != to && std::find(from.begin(), from.end(), me) == from.end()) return finished;
  for (const Range& c : split_chunks(count, chunk)) {
    const uint64_t j = c.offset / chunk;
    const uint32_t tag = sp.tag(tags.phase, tags.per_phase, j);
    if (me != to) {
      sp.add(send(sp.peer(to), tag, {src.buf, src.offset + c.offset}, c.count));
      continue;
    }
    std::optional<uint32_t> partial;
    for (int m : from) {
      std::vector<uint32_t> deps = after(partial);
      const BufRef slot = staging->take(deps);
      const BufRef operand = partial ? BufRef{dst.buf, dst.offset + c.offset} : BufRef{own.buf, own.offset + c.offset};
      partial = sp.add(recv_reduce(sp.peer(m), tag, operand, {dst.buf, dst.offset + c.offset}, slot, c.count), deps);
      staging->used_by(*partial);
    }
    if (partial) finished.push_back(*partial);
  }
  return finished;
}

void fan_out(BuildSpace& sp, int from, const std::vector<int>& to, BufRef src, BufRef dst, uint64_t count,
             FanTags tags) {
  const int me = sp.self;
  const uint64_t chunk = sp.chunk_elems();
  const bool receiver = std::find(to.begin(), to.end(), me) != to.end();
  if (me != from && !receiver) return;
  for (const Range& c : split_chunks(count, chunk)) {
    const uint32_t tag = sp.tag(tags.phase, tags.per_phase, c.offset / chunk);
    if (me == from) {
      for (int m : to) sp.add(send(sp.peer(m), tag, {src.buf, src.offset + c.offset}, c.count));
    } else {
      sp.add(recv(sp.peer(from), tag, {dst.buf, dst.offset + c.offset}, c.count));
    }
  }
}

}  // namespace dc
