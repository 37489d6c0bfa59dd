// nccl-tests' command-line flags.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "deepcomm/deepcomm.h"

namespace dcbench {

struct Options {
  size_t min_bytes = 32 * 1024 * 1024;  // -b
  size_t max_bytes = 32 * 1024 * 1024;  // -e
  double step_factor = 1;               // -f
  size_t step_bytes = 1024 * 1024;      // -i (used when -f is not given)
  bool use_factor = false;
  int iters = 20;                              // -n
  int warmup = 5;                              // -w
  int check = 1;                               // -c
  std::vector<dcDataType_t> types{dcFloat32};  // -d
  std::vector<dcRedOp_t> ops{dcSum};           // -o
  int root = 0;                                // -r (-1: every root)
  int blocking = 1;                            // -z (host calls always complete on return)
  int average = 1;                             // -a 0 rank 0, 1 average, 2 min, 3 max
  int graph_iters = 0;                         // -G (no CUDA graphs on host memory; printed as given)
  int local_register = 0;                      // -R 1: buffers registered with dcCommRegister
  std::string json_path;                       // -J
};

// Parses argv; on a bad flag prints usage to stderr and returns false.
bool parse_options(int argc, char** argv, Options* options);

const char* type_name(dcDataType_t t);
const char* op_name(dcRedOp_t op);

}  // namespace dcbench
