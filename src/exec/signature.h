// An operation's signature (collective, count, datatype, op, root) packed into the 64-bit check of
// its transport tags, so that ranks calling different operations get an error naming both calls
// instead of a hang or corrupted data.
#pragma once

#include <cstdint>
#include <string>

#include "src/exec/operation.h"

namespace dc {

// Nonzero for collectives; 0 (not checked) for point-to-point operations.
uint64_t operation_signature(const OpArgs& args);
// "AllReduce(count=1024, float, sum)", from a signature (counts beyond 2^35 are shown modulo).
std::string describe_signature(uint64_t signature);

}  // namespace dc
