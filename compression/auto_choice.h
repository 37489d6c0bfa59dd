// The automatic mode: dense q8 or sampled top-k for one buffer, from statistics of a
// deterministic sample of a = input + residual, with the reason in words.
#pragma once

#include <cstdint>
#include <string>

#include "compression/codec_isa.h"
#include "compression/form/spec.h"

namespace dc::compression {

struct AutoChoice {
  bool sparse = false;
  double top_energy = 0;  // share of the sample's energy in its largest 1% of magnitudes
  double q8_entropy = 0;  // bits per element of the sample's q8 symbols (one scale for the sample)
  std::string reason;
};

// Sparsify when the magnitudes are concentrated (the top 1% hold at least half the energy: little
// is lost by sending only the largest), or, with error feedback, when q8 would hardly compress
// (entropy of 6 bits or more: a flat distribution; the residual carries what top-k delays).
// Otherwise q8.
AutoChoice choose_auto(const AccumulatedView& in, uint64_t count, const Spec& spec);

}  // namespace dc::compression
