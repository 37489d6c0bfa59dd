// The shape of a reduction tree over member positions, and the α of its longest chain of
// messages: shared by the binomial tree and NCCL's double binary tree.
#pragma once

#include <vector>

#include "topology/cluster_view.h"

namespace dc {

struct Tree {
  std::vector<int> parent;                 // per position, -1 at the root
  std::vector<std::vector<int>> children;  // per position, ascending
  int root = 0;
};

// The tree whose position r has parent[r] (-1 for the root).
Tree tree_from_parents(const std::vector<int>& parent);

// The longest chain of messages through the tree for one chunk, positions mapped to ranks by
// `members`: a member folds its children one after another, then the result goes down (as
// materialized_traffic times a plan).
double tree_latency(const ClusterView& view, const std::vector<int>& members, const Tree& tree);

// The largest α of any edge of the tree: later chunks follow the first one step behind on it.
double slowest_edge_latency(const ClusterView& view, const std::vector<int>& members, const Tree& tree);

}  // namespace dc
