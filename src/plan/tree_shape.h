// The shape of a reduction tree over member positions, and the time of its longest chain of
// messages: shared by the binomial tree and NCCL's double binary tree.
#pragma once

#include <cstdint>
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

// The time `bytes` take from rank x to rank y, on their tier's link or through memory.
double edge_transfer_seconds(const ClusterView& view, int x, int y, double bytes);

// What a pipelined all-reduce through the tree adds to its link loads, positions mapped to ranks
// by `members`, the message cut into `chunks` chunks:
// the α of the longest chain of messages for one chunk (a member folds its children one after
// another, then the result goes down, as materialized_traffic times a plan), and one α of the
// slowest edge per further chunk;
double tree_alpha_seconds(const ClusterView& view, const std::vector<int>& members, const Tree& tree, double chunks);
// the fill: a chunk of `chunk_bytes` crosses the chain's edges one after another, while the link
// loads count the busiest link's bytes once. With one chunk a tree over a slow link moves the
// message up it and then down it, twice the link's load; with many, about a chunk per edge.
double tree_fill_seconds(const ClusterView& view, const std::vector<int>& members, const Tree& tree,
                         double chunk_bytes);

}  // namespace dc
