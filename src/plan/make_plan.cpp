// make_plan: validation, logical buffer sizes, the selector's choice, and the chosen generator.
#include <limits>
#include <string>

#include "base/error.h"
#include "src/plan/generators.h"
#include "src/plan/plan.h"
#include "src/plan/plan_build.h"
#include "src/plan/select.h"

namespace dc {
namespace {

void validate(const PlanRequest& request) {
  const std::string what = std::string(collective_name(request.collective)) + " plan: ";
  if (request.collective < dcCollAllReduce || request.collective >= dcNumCollectives) {
    fail(dcInvalidArgument, "plan: unknown collective " + std::to_string(request.collective));
  }
  if (request.nranks < 1) {
    fail(dcInvalidArgument, what + "nranks must be at least 1, got " + std::to_string(request.nranks));
  }
  if (request.rank < 0 || request.rank >= request.nranks) {
    fail(dcInvalidArgument,
         what + "rank " + std::to_string(request.rank) + " is outside [0, " + std::to_string(request.nranks) + ")");
  }
  if (is_rooted(request.collective) && (request.root < 0 || request.root >= request.nranks)) {
    const char* role = is_point_to_point(request.collective) ? "peer " : "root ";
    fail(dcInvalidArgument,
         what + role + std::to_string(request.root) + " is outside [0, " + std::to_string(request.nranks) + ")");
  }
  if (request.elem_size == 0) fail(dcInvalidArgument, what + "element size must not be 0");
  if (request.compression &&
      (request.collective != dcCollAllReduce || (request.elem_size != 2 && request.elem_size != 4)))
    fail(dcInvalidArgument, what + "compression applies to all-reduces of 16- and 32-bit floats only");
  if (request.chunk_bytes == 0) fail(dcInvalidArgument, what + "chunk size must not be 0");
  if (request.cluster && request.cluster->nranks() != request.nranks) {
    fail(dcInvalidArgument, what + "the cluster view has " + std::to_string(request.cluster->nranks()) +
                                " ranks, the request " + std::to_string(request.nranks));
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

}  // namespace

Plan make_plan(const PlanRequest& asked) {
  validate(asked);
  PlanRequest request = asked;
  if (!request.cluster) request.cluster = ClusterView::one_host(request.nranks, false);
  Plan plan;
  plan.collective = request.collective;
  plan.nranks = request.nranks;
  plan.rank = request.rank;
  plan.root = is_rooted(request.collective) ? request.root : -1;
  plan.count = request.count;
  plan.in_place = request.in_place;
  plan.sizes = logical_sizes(request);
  plan.compression = request.compression;
  if (request.compression && request.compression->error_feedback) plan.sizes.residual = request.count;
  const bool p2p = is_point_to_point(request.collective);
  plan.algorithm = p2p ? "p2p" : "local";
  if (request.count == 0) return plan;
  if (p2p) {
    build_p2p(request, plan);
    return plan;
  }
  if (request.nranks == 1) {
    // One rank: every collective is the identity from Input to Output (avg divides by 1); a
    // compressed all-reduce of one rank sends nothing, so it compresses nothing either.
    BuildSpace space = whole_space(plan, request);
    space.add_copy(space.input(0), space.output(0), request.count);
    return plan;
  }
  const std::vector<PricedGenerator> candidates = price_candidates(request);
  plan.algorithm = candidates[0].generator->name;
  plan.predicted_seconds = candidates[0].seconds;
  plan.tuned = candidates[0].tuned;
  if (candidates.size() > 1) {
    plan.runner_up = candidates[1].generator->name;
    plan.runner_up_seconds = candidates[1].seconds;
  }
  BuildSpace space = whole_space(plan, request);
  candidates[0].generator->build(space);
  return plan;
}

PlanRequest::Key PlanRequest::key() const {
  return Key{collective,
             nranks,
             rank,
             root,
             count,
             elem_size,
             in_place,
             algorithms.canonical(),
             cluster ? cluster->hash() : 0,
             chunk_bytes,
             tree_threshold_bytes,
             compression ? compression->to_string() : std::string()};
}

PlanRequest make_request(const CommView& comm, dcCollective_t collective, uint64_t count, size_t elem_size, int root,
                         bool in_place, const std::optional<compression::Spec>& compression) {
  PlanRequest r;
  r.collective = collective;
  r.nranks = comm.nranks;
  r.rank = comm.rank;
  r.root = root;
  r.count = count;
  r.elem_size = elem_size;
  r.in_place = in_place;
  r.algorithms = comm.settings.algorithms;
  r.cluster = comm.cluster;
  r.chunk_bytes = comm.settings.chunk_bytes;
  r.tree_threshold_bytes = comm.settings.tree_threshold_bytes;
  r.compression = compression;
  return r;
}

}  // namespace dc
