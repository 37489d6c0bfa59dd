// All-reduce algorithm selection with an alpha-beta cost model.
#include <cstdint>
#include <string>

#include "src/plan/cost_model.h"
#include "src/plan/plan.h"

namespace dc {
namespace {

int ceil_log2(int n) {
  int depth = 0;
  while ((1 << depth) < n) ++depth;
  return depth;
}

// The α-β choice between tree and ring.
std::string tree_or_ring(int nranks, uint64_t bytes, uint64_t tree_threshold_bytes) {
  if (tree_threshold_bytes != 0) return bytes < tree_threshold_bytes ? "tree" : "ring";
  if (nranks < 2) return "ring";
  const double b = static_cast<double>(bytes);
  const double n = nranks;
  // Tree: reduce up and broadcast down a binomial tree, each the whole message per level.
  const double tree = 2.0 * ceil_log2(nranks) * (kAlphaSeconds + kBetaSecondsPerByte * b);
  // Ring: reduce-scatter then all-gather, 2(n-1) steps of one n-th of the message.
  const double ring = 2.0 * (n - 1) * (kAlphaSeconds + kBetaSecondsPerByte * b / n);
  return tree < ring ? "tree" : "ring";
}

}  // namespace

// Over shared memory the ring's partial sums cross memory once per step: 5(n-1)S bytes in all
// against the direct plan's (3n-1)S. Both take the same hops, so α-β cannot tell them apart; at 2
// ranks they are the same plan.
std::string choose_allreduce_algorithm(int nranks, uint64_t bytes, uint64_t tree_threshold_bytes,
                                       bool shared_memory) {
  const std::string choice = tree_or_ring(nranks, bytes, tree_threshold_bytes);
  return choice == "ring" && shared_memory && nranks > 2 ? "direct" : choice;
}

}  // namespace dc
