// Driver shared by the nccl-tests-compatible benchmarks: nccl-tests' flags, table and JSON output,
// on host memory, ranks started by deepcomm-run, mpirun or srun (dcCommInitFromEnv).
#pragma once

#include <cstddef>

#include "deepcomm/deepcomm.h"

namespace dcbench {

// How one collective maps the table's "size" onto counts and buffers (nccl-tests' conventions).
struct CollectiveSpec {
  const char* name;  // "all_reduce"
  dcCollective_t collective;
  bool has_op;    // prints the redop column's value
  bool has_root;  // prints the root column's value
  // Elements per rank in the send and receive buffers, and the count argument, for `size` bytes.
  void (*counts)(size_t size, size_t elem, int nranks, size_t* send_elems, size_t* recv_elems, size_t* param_count);
  double (*bus_factor)(int nranks);
};

int run(int argc, char** argv, const CollectiveSpec& spec);

}  // namespace dcbench
