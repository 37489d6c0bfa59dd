// Direct all-gather and broadcast for ranks on shared memory: every rank takes each block straight
// from the rank that has it, as one message. Nothing is forwarded, so nothing waits on part of a
// block and chunking would only add rendezvous hand-offs; over cross-memory attach each block is one
// long copy by its receiver. The bytes through memory are those of the ring and the chain.
#include "src/plan/generators.h"
#include "src/plan/plan_build.h"

namespace dc {

using namespace plan_build;

void build_direct_allgather(const PlanRequest& request, Plan& plan) {
  const int n = request.nranks;
  const int r = request.rank;
  const uint64_t count = request.count;
  const uint32_t tag = make_tag(0, 1, 0);
  // In place the own block already is Input.
  add_copy(plan, request, input(0), output(static_cast<uint64_t>(r) * count), count);
  for (int i = 1; i < n; ++i) plan.add(send(wrap(r + i, n), tag, input(0), count));
  for (int i = 1; i < n; ++i) {
    const int from = wrap(r - i, n);
    plan.add(recv(from, tag, output(static_cast<uint64_t>(from) * count), count));
  }
}

void build_direct_broadcast(const PlanRequest& request, Plan& plan) {
  const int n = request.nranks;
  const int r = request.rank;
  const uint32_t tag = make_tag(0, 1, 0);
  if (r != request.root) {
    plan.add(recv(request.root, tag, output(0), request.count));
    return;
  }
  for (int i = 1; i < n; ++i) plan.add(send(wrap(r + i, n), tag, input(0), request.count));
  add_copy(plan, request, input(0), output(0), request.count);
}

}  // namespace dc
