// A plan is flat data: for one rank of one operation, the ordered steps over logical buffers
// (input, output, scratch) with element offsets, peers and dependencies. Generators produce plans;
// one executor runs them; tests and the simulator read them. No closures.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "deepcomm/deepcomm.h"
#include "src/plan/algorithm_filter.h"
#include "topology/cluster_view.h"

namespace dc {

enum class BufId : uint8_t { Input = 0, Output = 1, Scratch = 2 };

enum class StepKind : uint8_t {
  Send = 0,        // send count elements at src to peer
  Recv = 1,        // receive count elements from peer into dst
  RecvReduce = 2,  // receive count elements from peer into aux, then dst = src op aux
  Copy = 3,        // dst = src (local)
  Reduce = 4,      // dst = src op aux (local)
  Finalize = 5,    // apply the op's final step to dst (avg: divide by nranks; other ops: nothing)
};

// A place in a logical buffer, in elements of the operation's datatype.
struct BufRef {
  BufId buf = BufId::Input;
  uint64_t offset = 0;
};

struct Step {
  StepKind kind = StepKind::Copy;
  int32_t peer = -1;    // Send/Recv/RecvReduce: comm rank of the peer
  uint32_t tag = 0;     // Send/Recv/RecvReduce: matches the peer's step with the same tag
  uint64_t count = 0;   // elements
  BufRef src;           // Send, RecvReduce (local operand), Copy, Reduce
  BufRef dst;           // Recv, RecvReduce, Copy, Reduce, Finalize
  BufRef aux;           // RecvReduce: staging for received data; Reduce: second operand
  uint32_t dep_begin = 0;  // deps[dep_begin, dep_begin + dep_count) must complete first
  uint32_t dep_count = 0;
};

// Sizes of the logical buffers in elements, as this rank's plan uses them.
struct BufferSizes {
  uint64_t input = 0;
  uint64_t output = 0;
  uint64_t scratch = 0;
};

// A composed plan is phases built by generators over subgroups (e.g. intra-host reduce-scatter,
// inter-host all-reduce, intra-host all-gather): steps [first_step, end_step) belong to the phase.
struct PlanPhase {
  std::string name;       // "reduce-scatter", "all-reduce", ...
  std::string algorithm;  // the generator that built it
  std::vector<int> members;  // comm ranks taking part, in the generator's order
  uint32_t first_step = 0;
  uint32_t end_step = 0;
};

struct Plan {
  dcCollective_t collective = dcCollAllReduce;
  std::string algorithm;  // "ring", "tree", "pipeline", "pairwise", "direct", "hierarchical", ...
  int nranks = 1;
  int rank = 0;
  int root = -1;        // rooted collectives; peer for send/recv
  uint64_t count = 0;   // the API's count argument
  bool in_place = false;
  BufferSizes sizes;
  std::vector<Step> steps;
  std::vector<uint32_t> deps;
  std::vector<PlanPhase> phases;  // empty: one phase over every rank
  // The selector's choice: the cost model's time for this plan, and the next cheapest candidate.
  double predicted_seconds = 0;
  std::string runner_up;  // "" when no other algorithm applied
  double runner_up_seconds = 0;

  // Appends a step that depends on the given earlier steps; returns its index.
  uint32_t add(Step step, std::initializer_list<uint32_t> after = {});
  uint32_t add(Step step, const std::vector<uint32_t>& after);
};

// Inputs that shape a plan; identical on all ranks (agreed at init) except rank. Built in one place
// (make_request); the plan cache is keyed on all of it (key()).
struct PlanRequest {
  dcCollective_t collective = dcCollAllReduce;
  int nranks = 1;
  int rank = 0;
  int root = -1;
  uint64_t count = 0;
  size_t elem_size = 4;
  // In place, Input and Output are one memory as NCCL defines it: all-reduce, broadcast, reduce at
  // the same start; all-gather Input = Output + rank*count; reduce-scatter Output = Input +
  // rank*count; all-to-all, gather, scatter: Input = Output. The plan must be correct then too.
  bool in_place = false;
  AlgorithmFilter algorithms;  // DEEPCOMM_ALGO / NCCL_ALGO
  // Where the ranks are and what links join them; null means one host whose ranks talk over
  // sockets (ClusterView::one_host(nranks, false)).
  std::shared_ptr<const ClusterView> cluster;
  uint64_t chunk_bytes = 1 << 20;     // pipelining unit
  uint64_t tree_threshold_bytes = 0;  // all-reduce below this uses the tree when not forced

  std::string key() const;
};

// The plan-shaping settings of a communicator, agreed by all its ranks.
struct PlanSettings {
  AlgorithmFilter algorithms;
  uint64_t chunk_bytes = 1 << 20;
  uint64_t tree_threshold_bytes = 0;
};

// The planner's read-only view of a communicator.
struct CommView {
  int rank = 0;
  int nranks = 1;
  std::shared_ptr<const ClusterView> cluster;
  PlanSettings settings;
};

// The one place a request is made: the communicator's view plus one operation's shape.
PlanRequest make_request(const CommView& comm, dcCollective_t collective, uint64_t count, size_t elem_size,
                         int root, bool in_place);

// Builds the plan for one rank. Throws dc::Error(dcInvalidArgument) on an impossible request.
Plan make_plan(const PlanRequest& request);

std::string plan_to_json(const Plan& plan);
const char* collective_name(dcCollective_t c);
const char* step_kind_name(StepKind k);

}  // namespace dc
