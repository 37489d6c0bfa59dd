// The α-β cost model: per-message latency and per-byte time of one hop. The all-reduce algorithm
// choice and the estimated time of grouped operations (dcGroupSimulateEnd) both use it.
#pragma once

#include <cstddef>

#include "src/plan/plan.h"

namespace dc {

// 5 us and 10 GB/s put the n=8 tree/ring crossover near 94 KB, where host-memory rings start to win.
constexpr double kAlphaSeconds = 5e-6;
constexpr double kBetaSecondsPerByte = 1e-10;

// Time of the plan's longest dependency path: transfers cost α + β·bytes, local steps β·bytes.
double plan_time_seconds(const Plan& plan, size_t elem_size);

}  // namespace dc
