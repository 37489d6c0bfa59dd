#include <string>

#include "src/plan/generators.h"

namespace dc {

bool any_members(const PlanRequest&, const std::vector<int>&) { return true; }

bool members_share_memory(const PlanRequest& request, const std::vector<int>& members) {
  return request.cluster->shares_memory(members);
}

bool members_span_hosts(const PlanRequest& request, const std::vector<int>& members) {
  for (int m : members)
    if (!request.cluster->same_host(m, members.front())) return true;
  return false;
}

const std::vector<Generator>& generator_registry() {
  // Within a collective, ties go to the earlier entry: the ring before the direct all-reduce (one
  // plan at two ranks), the direct all-gather and broadcast before the ring and the chain, the flat
  // plans before the hierarchical ones.
  static const std::vector<Generator> registry = {
      {"ring", dcCollAllReduce, any_members, build_ring_allreduce, ring_allreduce_traffic},
      {"direct", dcCollAllReduce, members_share_memory, build_direct_allreduce, direct_allreduce_traffic},
      {"tree", dcCollAllReduce, any_members, build_tree_allreduce, tree_allreduce_traffic},
      {"doubling", dcCollAllReduce, doubling_allreduce_applicable, build_doubling_allreduce,
       doubling_allreduce_traffic},
      {"halving", dcCollAllReduce, halving_allreduce_applicable, build_halving_allreduce, halving_allreduce_traffic},
      {"dbtree", dcCollAllReduce, members_span_hosts, build_dbtree_allreduce, dbtree_allreduce_traffic},
      {"hierarchical", dcCollAllReduce, hierarchical_allreduce_applicable, build_hierarchical_allreduce,
       hierarchical_allreduce_traffic},
      {"direct", dcCollAllGather, members_share_memory, build_direct_allgather, direct_allgather_traffic},
      {"ring", dcCollAllGather, any_members, build_ring_allgather, ring_allgather_traffic},
      {"hierarchical", dcCollAllGather, hierarchical_applicable, build_hierarchical_allgather,
       hierarchical_allgather_traffic},
      {"ring", dcCollReduceScatter, any_members, build_ring_reduce_scatter, ring_reduce_scatter_traffic},
      {"hierarchical", dcCollReduceScatter, hierarchical_applicable, build_hierarchical_reduce_scatter,
       hierarchical_reduce_scatter_traffic},
      {"direct", dcCollBroadcast, members_share_memory, build_direct_broadcast, direct_broadcast_traffic},
      {"pipeline", dcCollBroadcast, any_members, build_pipeline_broadcast, pipeline_broadcast_traffic},
      {"hierarchical", dcCollBroadcast, hierarchical_applicable, build_hierarchical_broadcast,
       hierarchical_broadcast_traffic},
      {"pipeline", dcCollReduce, any_members, build_pipeline_reduce, pipeline_reduce_traffic},
      {"hierarchical", dcCollReduce, hierarchical_applicable, build_hierarchical_reduce, hierarchical_reduce_traffic},
      {"pairwise", dcCollAlltoAll, any_members, build_pairwise_alltoall, pairwise_alltoall_traffic},
      {"direct", dcCollGather, any_members, build_direct_gather, direct_gather_traffic},
      {"direct", dcCollScatter, any_members, build_direct_scatter, direct_scatter_traffic},
      // Compressed all-reduces: the only candidates of a request with a compression spec.
      {"twophase", dcCollAllReduce, any_members, build_twophase_allreduce, twophase_allreduce_traffic, true},
      {"sparsegather", dcCollAllReduce, any_members, build_sparse_allgather_allreduce,
       sparse_allgather_allreduce_traffic, true},
      {"hiercompressed", dcCollAllReduce, hierarchical_allreduce_applicable, build_hierarchical_allreduce,
       hierarchical_allreduce_traffic, true},
  };
  return registry;
}

const Generator* find_generator(dcCollective_t collective, const std::string& name) {
  for (const Generator& g : generator_registry())
    if (g.collective == collective && name == g.name) return &g;
  return nullptr;
}

}  // namespace dc
