// In-process plan simulator: runs the plans of all ranks of one operation together on real
// buffers. Sends are matched with the peer's receives by (source, destination, tag) and a pair
// executes only when both sides are ready; among ready steps the next one is picked at random, so a
// missing dependency shows up as a wrong result. Nothing ready while steps remain is a deadlock.
// Compressed plans run the real codecs: Encode encodes (with the rank's residual, which persists
// in RankMemory from run to run), a message travels at the length its slot got and must fit the
// receive's capacity, and RecvDecode decodes it through compression::PieceDecoder in pieces of
// random sizes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "deepcomm/deepcomm.h"
#include "src/plan/plan.h"

namespace dc::sim {

// One rank's memory. In place Input and Output are views into `shared` at the offsets the
// PlanRequest comment defines; out of place they are separate vectors.
struct RankMemory {
  bool in_place = false;
  std::vector<std::byte> input;
  std::vector<std::byte> output;
  std::vector<std::byte> shared;
  uint64_t input_base = 0;   // elements, into shared
  uint64_t output_base = 0;  // elements, into shared
  std::vector<std::byte> scratch;
  std::vector<std::byte> bytes;  // compressed messages, addressed in bytes
  std::vector<float> residual;   // error feedback, kept across runs
};

// Allocates memory for the plan of one rank (Input/Output per plan.sizes, aliased in place).
RankMemory allocate(const Plan& plan, size_t elem_size);

// Where a logical place lives: which memory (0 input, 1 output, 2 shared, 3 scratch, 4 bytes,
// 5 residual) and the offset in it (elements; bytes in bytes). Used for execution and for the
// static hazard check.
struct Location {
  int memory = 0;
  uint64_t offset = 0;
};
Location locate(const RankMemory& memory, BufRef ref);
std::byte* address(RankMemory& memory, BufRef ref, size_t elem_size);

// Runs plans[r] on memories[r] for every rank. Returns "" on success, else what went wrong
// (unmatched message, out-of-bounds place, deadlock).
std::string run(const std::vector<Plan>& plans, std::vector<RankMemory>& memories, dcDataType_t datatype, dcRedOp_t op,
                uint64_t seed);

}  // namespace dc::sim
