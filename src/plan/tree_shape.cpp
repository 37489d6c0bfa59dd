#include "src/plan/tree_shape.h"

#include <algorithm>
#include <functional>

namespace dc {

namespace {

// The longest chain through the tree, each edge (child position, parent position) costing `cost`:
// a member's partial result is ready once its children were folded one after another, and each
// member has the result one edge after its parent.
double longest_chain(const Tree& tree, const std::function<double(int, int)>& cost) {
  const int n = static_cast<int>(tree.parent.size());
  // Positions ordered so that children come before their parent.
  std::vector<int> order, stack{tree.root};
  while (!stack.empty()) {
    const int r = stack.back();
    stack.pop_back();
    order.push_back(r);
    for (int c : tree.children[r]) stack.push_back(c);
  }
  std::vector<double> up(n, 0.0), down(n, 0.0);
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    double at = 0;
    for (int c : tree.children[*it]) at = std::max(at, up[c]) + cost(c, *it);
    up[*it] = at;
  }
  double longest = up[tree.root];
  for (int r : order) {
    down[r] = r == tree.root ? up[r] : down[tree.parent[r]] + cost(r, tree.parent[r]);
    longest = std::max(longest, down[r]);
  }
  return longest;
}

// The largest cost of any edge.
double slowest_edge(const Tree& tree, const std::function<double(int, int)>& cost) {
  double slowest = 0;
  for (size_t r = 0; r < tree.parent.size(); ++r)
    if (tree.parent[r] >= 0) slowest = std::max(slowest, cost(static_cast<int>(r), tree.parent[r]));
  return slowest;
}

}  // namespace

Tree tree_from_parents(const std::vector<int>& parent) {
  const int n = static_cast<int>(parent.size());
  Tree t;
  t.parent = parent;
  t.children.resize(n);
  for (int r = 0; r < n; ++r) {
    if (parent[r] < 0) t.root = r;
    else t.children[parent[r]].push_back(r);
  }
  return t;
}

double tree_alpha_seconds(const ClusterView& view, const std::vector<int>& members, const Tree& tree, double chunks) {
  auto alpha = [&](int a, int b) { return view.tier_between(members[a], members[b]).latency_s; };
  return longest_chain(tree, alpha) + (chunks - 1) * slowest_edge(tree, alpha);
}

double edge_transfer_seconds(const ClusterView& view, int x, int y, double bytes) {
  // Over shared memory the receiver copies the bytes (read and write).
  const double rate = !view.same_host(x, y)  ? view.tier_between(x, y).bandwidth_Bps
                      : view.shared_memory() ? view.rank_memory_bandwidth() / 2
                                             : view.intra_host().bandwidth_Bps;
  return bytes / rate;
}

double tree_fill_seconds(const ClusterView& view, const std::vector<int>& members, const Tree& tree,
                         double chunk_bytes) {
  auto transfer = [&](int a, int b) { return edge_transfer_seconds(view, members[a], members[b], chunk_bytes); };
  return longest_chain(tree, transfer) - slowest_edge(tree, transfer);
}

}  // namespace dc
