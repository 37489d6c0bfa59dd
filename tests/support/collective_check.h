// Checking collectives, shared by the tests and the benchmarks' validation: typed inputs from a
// per-rank generator, a float64 reference, the tolerance of DESIGN.md (grows with ranks and the
// datatype's epsilon), and running one case on one rank's communicator with NCCL's in-place layouts.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "deepcomm/deepcomm.h"

namespace dctest {

struct Case {
  dcCollective_t collective = dcCollAllReduce;
  dcDataType_t datatype = dcFloat32;
  dcRedOp_t op = dcSum;  // reductions only
  size_t count = 0;
  bool in_place = false;
  int root = 0;  // rooted collectives; send/recv: the ring offset (peer = rank +- 1)

  std::string describe() const;
};

// Every collective x datatype x op x count x in-place for n ranks (roots rotate with the case).
std::vector<Case> full_matrix(int nranks, const std::vector<size_t>& counts);
// A deterministic sample of full_matrix: per_pair cases of every (collective, datatype).
std::vector<Case> sampled_matrix(int nranks, const std::vector<size_t>& counts, size_t per_pair);

// Runs one case on this rank and checks the result. Returns "" on success, else what was wrong
// (the first wrong element). digest (optional) receives a hash of the output bytes, to compare
// across ranks; wrong (optional) the number of wrong elements.
std::string run_case(dcComm_t comm, const Case& c, uint64_t* digest = nullptr, size_t* wrong = nullptr);

// Forks n processes, each running body(rank, id) with env applied; the parent (not a rank) made
// the id before forking. Returns "" when every rank exited 0 in time (the ranks in killed_ranks:
// died of SIGKILL), else a description.
std::string run_as_processes(int n, const std::vector<std::pair<std::string, std::string>>& env,
                             const std::function<int(int rank, int n, const dcUniqueId& id)>& body, int timeout_s,
                             const std::vector<int>& killed_ranks = {});

// Runs body(rank, comm) on n threads over communicators from dcCommInitAll. Returns "" or errors.
std::string run_as_threads(int n, const std::function<std::string(int rank, dcComm_t comm)>& body);

}  // namespace dctest
