// Building blocks of the hierarchical plans: one member receiving a buffer from several and
// folding it in (fan-in), one member sending a buffer to several (fan-out), chunk by chunk. Every
// member of the space calls them alike; each adds the steps of its own role. Internal to src/plan/.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "src/plan/compose.h"

namespace dc {

// Scratch slots of one chunk each that received chunks land in before they are folded, reused
// round-robin (a slot's next receive waits for the fold that read it).
class Staging {
 public:
  // Reserves `slots` slots of `slot_elems` elements in the space's plan.
  Staging(BuildSpace& space, uint64_t slots, uint64_t slot_elems);
  // The next slot, and the steps its new user must follow.
  BufRef take(std::vector<uint32_t>& deps);
  // The fold that used the slot take() returned last.
  void used_by(uint32_t step);

 private:
  uint64_t base_ = 0;
  uint64_t slot_elems_ = 0;
  std::vector<std::optional<uint32_t>> last_;
  uint64_t next_ = 0;
};

// Where one fan's chunk j travels: tags sp.tag(phase, per_phase, j).
struct FanTags {
  uint64_t phase = 0;
  uint64_t per_phase = 1;
};

// Member `to` folds `count` elements from each member of `from` (in that order) into dst, starting
// from its own operand `own` (dst = own op from[0] op from[1] ...). The senders send from `src`.
// `own`, `dst` and `staging` are read only on `to`, `src` only on a sender. Returns, on `to`, the
// step that finished each chunk (empty when `from` is empty), and nothing elsewhere.
std::vector<uint32_t> fan_in(BuildSpace& sp, int to, const std::vector<int>& from, BufRef own, BufRef dst, BufRef src,
                             uint64_t count, FanTags tags, Staging* staging);

// Member `from` sends `count` elements at src to each member of `to`, which receive them at dst.
void fan_out(BuildSpace& sp, int from, const std::vector<int>& to, BufRef src, BufRef dst, uint64_t count,
             FanTags tags);

}  // namespace dc
