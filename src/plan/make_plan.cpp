// make_plan: validation, logical buffer sizes, and dispatch to the generators.
#include <limits>
#include <string>

#include "src/base/error.h"
#include "src/plan/generators.h"
#include "src/plan/plan.h"
#include "src/plan/plan_build.h"

namespace dc {
namespace {

bool is_rooted(dcCollective_t c) {
  return c == dcCollBroadcast || c == dcCollReduce || c == dcCollGather || c == dcCollScatter ||
         c == dcCollSend || c == dcCollRecv;
}

void validate(const PlanRequest& request) {
  const std::string what = std::string(collective_name(request.collective)) + " plan: ";
  if (request.collective < dcCollAllReduce || request.collective >= dcNumCollectives) {
    fail(dcInvalidArgument, "plan: unknown collective " + std::to_string(request.collective));
  }
  if (request.nranks < 1) {
    fail(dcInvalidArgument, what + "nranks must be at least 1, got " +
                                std::to_string(request.nranks));
  }
  if (request.rank < 0 || request.rank >= request.nranks) {
    fail(dcInvalidArgument, what + "rank " + std::to_string(request.rank) + " is outside [0, " +
                                std::to_string(request.nranks) + ")");
  }
  if (is_rooted(request.collective) && (request.root < 0 || request.root >= request.nranks)) {
    const char* role = (request.collective == dcCollSend || request.collective == dcCollRecv)
                           ? "peer "
                           : "root ";
    fail(dcInvalidArgument, what + role + std::to_string(request.root) + " is outside [0, " +
                                std::to_string(request.nranks) + ")");
  }
  if (request.elem_size == 0) fail(dcInvalidArgument, what + "element size must not be 0");
  if (request.chunk_bytes == 0) fail(dcInvalidArgument, what + "chunk size must not be 0");
  if (!request.algorithm.empty() && request.algorithm != "ring" && request.algorithm != "tree" &&
      request.algorithm != "direct") {
    fail(dcInvalidArgument, what + "unknown algorithm \"" + request.algorithm +
                                "\" (expected \"ring\", \"tree\" or \"direct\")");
  }
  const uint64_t limit = std::numeric_limits<uint64_t>::max() / request.elem_size;
  if (request.count > limit / static_cast<uint64_t>(request.nranks)) {
    fail(dcInvalidArgument, what + "count " + std::to_string(request.count) + " is too large");
  }
}

BufferSizes logical_sizes(const PlanRequest& request) {
  const uint64_t c = request.count;
  const uint64_t all = c * static_cast<uint64_t>(request.nranks);
  const bool root = request.rank == request.root;
  switch (request.collective) {
    case dcCollAllReduce:
    case dcCollBroadcast: return {c, c, 0};
    case dcCollReduce: return {c, root ? c : 0, 0};
    case dcCollAllGather: return {c, all, 0};
    case dcCollReduceScatter: return {all, c, 0};
    case dcCollAlltoAll: return {all, all, 0};
    case dcCollGather: return {c, root ? all : 0, 0};
    case dcCollScatter: return {root ? all : 0, c, 0};
    case dcCollSend: return {c, 0, 0};
    case dcCollRecv: return {0, c, 0};
    case dcNumCollectives: break;
  }
  fail(dcInvalidArgument, "plan: unknown collective");
}

// The algorithm each collective uses; all-reduce may be forced or chosen by the cost model. Over
// shared memory, all-gather and broadcast take each block from its source in one message (measured
// at 4 ranks, 64 MiB: 1.25x the ring's and the chain's busbw).
// "ring"/"tree" requests for collectives that have a single algorithm are ignored, as NCCL_ALGO is.
std::string algorithm_for(const PlanRequest& request) {
  switch (request.collective) {
    case dcCollAllReduce:
      if (!request.algorithm.empty()) return request.algorithm;
      return choose_allreduce_algorithm(request.nranks, request.count * request.elem_size,
                                        request.tree_threshold_bytes, request.shared_memory);
    case dcCollAllGather: return request.shared_memory ? "direct" : "ring";
    case dcCollReduceScatter: return "ring";
    case dcCollBroadcast: return request.shared_memory ? "direct" : "pipeline";
    case dcCollReduce: return "pipeline";
    case dcCollAlltoAll: return "pairwise";
    case dcCollGather:
    case dcCollScatter: return "direct";
    default: return "p2p";
  }
}

void build_steps(const PlanRequest& request, Plan& plan) {
  switch (request.collective) {
    case dcCollAllReduce:
      if (plan.algorithm == "tree") {
        build_tree_allreduce(request, plan);
      } else if (plan.algorithm == "direct") {
        build_direct_allreduce(request, plan);
      } else {
        build_ring_allreduce(request, plan);
      }
      return;
    case dcCollBroadcast:
      if (plan.algorithm == "direct") {
        build_direct_broadcast(request, plan);
      } else {
        build_pipeline_broadcast(request, plan);
      }
      return;
    case dcCollReduce: build_pipeline_reduce(request, plan); return;
    case dcCollAllGather:
      if (plan.algorithm == "direct") {
        build_direct_allgather(request, plan);
      } else {
        build_ring_allgather(request, plan);
      }
      return;
    case dcCollReduceScatter: build_ring_reduce_scatter(request, plan); return;
    case dcCollAlltoAll: build_pairwise_alltoall(request, plan); return;
    case dcCollGather: build_direct_gather(request, plan); return;
    case dcCollScatter: build_direct_scatter(request, plan); return;
    default: build_p2p(request, plan); return;
  }
}

}  // namespace

Plan make_plan(const PlanRequest& request) {
  validate(request);
  Plan plan;
  plan.collective = request.collective;
  plan.algorithm = algorithm_for(request);
  plan.nranks = request.nranks;
  plan.rank = request.rank;
  plan.root = is_rooted(request.collective) ? request.root : -1;
  plan.count = request.count;
  plan.in_place = request.in_place;
  plan.sizes = logical_sizes(request);
  if (request.count == 0) return plan;

  const bool p2p = request.collective == dcCollSend || request.collective == dcCollRecv;
  if (request.nranks == 1 && !p2p) {
    // One rank: every collective is the identity from Input to Output (avg divides by 1).
    plan.algorithm = "local";
    plan_build::add_copy(plan, request, plan_build::input(0), plan_build::output(0),
                         request.count);
    return plan;
  }
  build_steps(request, plan);
  return plan;
}

}  // namespace dc
