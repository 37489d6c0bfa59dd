// A plan is flat data: for one rank of one operation, the ordered steps over logical buffers
// (input, output, scratch) with element offsets, peers and dependencies. Generators produce plans;
// one executor runs them; tests and the simulator read them. No closures.
//
// Compressed plans add messages whose length is known only at run time: an Encode step writes one
// into byte-addressed scratch (Bytes) and records its length in a length slot; a receive posts
// the codec's worst case as its capacity and records the real length; a step that forwards the
// message sends the length in its slot. Residual is the error-feedback state of the buffer
// (float32, indexed like the operation's elements), which outlives the call.
#pragma once

#include <compare>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "compression/form/spec.h"
#include "deepcomm/deepcomm.h"
#include "src/plan/algorithm_filter.h"
#include "topology/cluster_view.h"

namespace dc {

// Input, Output and Scratch are addressed in elements of the operation's datatype, Bytes in bytes,
// Residual in float32 elements (one per element of the operation).
enum class BufId : uint8_t { Input = 0, Output = 1, Scratch = 2, Bytes = 3, Residual = 4 };

enum class StepKind : uint8_t {
  Send = 0,        // send count elements at src to peer
  Recv = 1,        // receive count elements from peer into dst
  RecvReduce = 2,  // receive count elements from peer into aux, then dst = src op aux
  Copy = 3,        // dst = src (local)
  Reduce = 4,      // dst = src op aux (local)
  Finalize = 5,    // apply the op's final step to dst (avg: divide by nranks; other ops: nothing)
  // Compressed messages (the plan's spec). A message carries `count` elements; its bytes live in
  // Bytes, at most `bytes` of them (the spec's worst case for count); its length is in `slot`.
  Encode = 6,       // slot := length of encode(count elements at src, residual at aux if ef) written at dst
  SendMessage = 7,  // send the slot's length of bytes at src to peer
  RecvMessage = 8,  // receive at most `bytes` from peer into dst; slot := the length received
  Decode = 9,       // dst (count elements) += decode(the slot's message at src); = when overwrite
  RecvDecode = 10,  // receive at most `bytes` from peer and decode them into dst as they arrive
                    // (+=, or = when overwrite); aux: staging of `bytes` for the message
};

// A place in a logical buffer, in elements of the operation's datatype.
struct BufRef {
  BufId buf = BufId::Input;
  uint64_t offset = 0;
};

struct Step {
  StepKind kind = StepKind::Copy;
  int32_t peer = -1;       // Send/Recv/RecvReduce: comm rank of the peer
  uint32_t tag = 0;        // Send/Recv/RecvReduce: matches the peer's step with the same tag
  uint64_t count = 0;      // elements
  BufRef src;              // Send, RecvReduce (local operand), Copy, Reduce
  BufRef dst;              // Recv, RecvReduce, Copy, Reduce, Finalize
  BufRef aux;              // RecvReduce: staging for received data; Reduce: second operand
  uint32_t dep_begin = 0;  // deps[dep_begin, dep_begin + dep_count) must complete first
  uint32_t dep_count = 0;
  uint64_t bytes = 0;      // Encode, RecvMessage, RecvDecode: the message's capacity
  uint32_t slot = 0;       // Encode, SendMessage, RecvMessage, Decode: its run-time length slot
  bool overwrite = false;  // Decode, RecvDecode: dst = decoded instead of dst += decoded
};

// Sizes of the logical buffers in elements, as this rank's plan uses them.
struct BufferSizes {
  uint64_t input = 0;
  uint64_t output = 0;
  uint64_t scratch = 0;
  uint64_t bytes = 0;     // Bytes, in bytes
  uint64_t residual = 0;  // float32 elements of error-feedback state (compressed plans with ef)
};

// A composed plan is phases built by generators over subgroups (e.g. intra-host reduce-scatter,
// inter-host all-reduce, intra-host all-gather): steps [first_step, end_step) belong to the phase.
struct PlanPhase {
  std::string name;          // "reduce-scatter", "all-reduce", ...
  std::string algorithm;     // the generator that built it
  std::vector<int> members;  // comm ranks taking part, in the generator's order
  uint32_t first_step = 0;
  uint32_t end_step = 0;
};

struct Plan {
  dcCollective_t collective = dcCollAllReduce;
  std::string algorithm;  // "ring", "tree", "pipeline", "pairwise", "direct", "hierarchical", ...
  int nranks = 1;
  int rank = 0;
  int root = -1;       // rooted collectives; peer for send/recv
  uint64_t count = 0;  // the API's count argument
  bool in_place = false;
  BufferSizes sizes;
  std::vector<Step> steps;
  std::vector<uint32_t> deps;
  std::vector<PlanPhase> phases;                 // empty: one phase over every rank
  std::optional<compression::Spec> compression;  // compressed plans: what Encode steps do
  uint32_t length_slots = 0;                     // run-time message lengths the steps use
  // The selector's choice: the cost model's time for this plan, and the next cheapest candidate.
  double predicted_seconds = 0;
  bool tuned = false;     // chosen by a tuning rule (src/plan/tuning.h), not as the cheapest
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
  // A compressed all-reduce (float32, float16 or bfloat16; sum or avg): only the compressed
  // generators apply, and their messages are this spec's.
  std::optional<compression::Spec> compression;

  // Every input above, the way the plan cache compares them (built on each call: no formatting).
  struct Key {
    dcCollective_t collective;
    int nranks, rank, root;
    uint64_t count;
    size_t elem_size;
    bool in_place;
    std::string algorithms;  // the filter's canonical text ("auto" when none)
    uint64_t cluster;        // the cluster view's digest (0: none)
    uint64_t chunk_bytes, tree_threshold_bytes;
    std::string compression;  // the spec's text ("" when none)
    auto operator<=>(const Key&) const = default;
  };
  Key key() const;
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

// The one place a request is made: the communicator's view plus one operation's shape (and, for
// a compressed all-reduce, its spec).
PlanRequest make_request(const CommView& comm, dcCollective_t collective, uint64_t count, size_t elem_size, int root,
                         bool in_place, const std::optional<compression::Spec>& compression = std::nullopt);

// Builds the plan for one rank. Throws dc::Error(dcInvalidArgument) on an impossible request.
Plan make_plan(const PlanRequest& request);

// The memory a step reads and writes: `size` units of its place's buffer (elements, or bytes in
// Bytes). Plan invariants, phase dependencies and the simulator's hazard check all use it.
struct StepAccess {
  BufRef place;
  uint64_t size = 0;
  bool write = false;
};
std::vector<StepAccess> step_accesses(const Step& step, bool error_feedback);
bool is_transfer(StepKind kind);
bool is_receive(StepKind kind);

std::string plan_to_json(const Plan& plan);
const char* collective_name(dcCollective_t c);
// Send or receive: matched by peer and order, not by a plan of the whole communicator.
bool is_point_to_point(dcCollective_t c);
// Takes a root (or, point-to-point, a peer) in OpArgs::root.
bool is_rooted(dcCollective_t c);
// Combines values with a reduction op.
bool is_reduction(dcCollective_t c);
const char* step_kind_name(StepKind k);

}  // namespace dc
