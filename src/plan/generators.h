// One generator per algorithm. make_plan validates the request, fills the plan's header and the
// logical input/output sizes, and handles count 0 and single-rank plans; a generator then appends
// the steps, sets the scratch size and names its algorithm. Requests reaching a generator have
// nranks >= 2 and count >= 1.
#pragma once

#include "src/plan/plan.h"

namespace dc {

void build_ring_allreduce(const PlanRequest& request, Plan& plan);
void build_direct_allreduce(const PlanRequest& request, Plan& plan);
void build_tree_allreduce(const PlanRequest& request, Plan& plan);
void build_ring_allgather(const PlanRequest& request, Plan& plan);
void build_direct_allgather(const PlanRequest& request, Plan& plan);
void build_direct_broadcast(const PlanRequest& request, Plan& plan);
void build_ring_reduce_scatter(const PlanRequest& request, Plan& plan);
void build_pipeline_broadcast(const PlanRequest& request, Plan& plan);
void build_pipeline_reduce(const PlanRequest& request, Plan& plan);
void build_pairwise_alltoall(const PlanRequest& request, Plan& plan);
void build_direct_gather(const PlanRequest& request, Plan& plan);
void build_direct_scatter(const PlanRequest& request, Plan& plan);
// Send and Recv (also with nranks 1, where the peer is the rank itself).
void build_p2p(const PlanRequest& request, Plan& plan);

}  // namespace dc
