// Static checks of the plans of all ranks of one operation. Each returns "" when the plans hold,
// else a description of the first violation.
#pragma once

#include <string>
#include <vector>

#include "src/plan/plan.h"

namespace dc::sim {

// Deps point backwards; places lie within the declared sizes; every send has exactly one receive
// on its peer with the same count (and the reverse); (peer, direction, tag) is unique per rank;
// out-of-place plans never write Input; non-root Reduce/Gather plans never touch Output; count 0
// plans have no steps; message steps appear only in compressed plans and their capacity is the
// spec's worst case for their elements.
std::string check_invariants(const std::vector<Plan>& plans);

// Within each rank, two steps that touch overlapping memory (in-place aliasing included), one of
// them writing, must be ordered by dependencies; so must the writer of a message's length slot
// (Encode, RecvMessage) and its readers (SendMessage, Decode), writer first. Quadratic: meant for
// small plans.
std::string check_hazards(const std::vector<Plan>& plans, size_t elem_size);

}  // namespace dc::sim
