// The nccl-tests table (header, one row per size with out-of-place and in-place halves, footer)
// on rank 0, and nccl-tests' JSON output (-J).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "bench/collectives/perf_driver.h"
#include "bench/collectives/perf_options.h"

namespace dcbench {

struct Half {
  double seconds = 0;
  long long wrong = -1;  // -1: not checked
  bool skipped = false;
};

struct Row {
  size_t bytes = 0;
  size_t count = 0;
  dcDataType_t type = dcFloat32;
  dcRedOp_t op = dcSum;
  int root = -1;
  std::string algorithm;  // the out-of-place call's plan (dcCommPlanJson), "" where it has none
  Half half[2];           // out-of-place, in-place
};

class Report {
 public:
  Report(const CollectiveSpec& spec, const Options& options, dcComm_t comm, int rank, int nranks);
  void header();
  void row(const Row& row);
  // Prints the footer; returns false when any result was wrong.
  bool footer();

 private:
  double bus_bandwidth(const Row& row, int half) const;

  const CollectiveSpec& spec_;
  const Options& options_;
  dcComm_t comm_;
  int rank_, nranks_;
  std::vector<Row> rows_;
  double busbw_sum_ = 0;
  int busbw_count_ = 0;
  long long wrong_total_ = 0;
};

}  // namespace dcbench
