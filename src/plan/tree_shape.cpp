#include "src/plan/tree_shape.h"

#include <algorithm>

namespace dc {

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

double tree_latency(const ClusterView& view, const std::vector<int>& members, const Tree& tree) {
  const int n = static_cast<int>(members.size());
  auto alpha = [&](int a, int b) { return view.tier_between(members[a], members[b]).latency_s; };
  // Positions ordered so that children come before their parent.
  std::vector<int> order, stack{tree.root};
  while (!stack.empty()) {
    const int r = stack.back();
    stack.pop_back();
    order.push_back(r);
    for (int c : tree.children[r]) stack.push_back(c);
  }
  // up: when a member's partial result is ready (its children folded one after another);
  // down: when it has the result (its parent's, one message later).
  std::vector<double> up(n, 0.0), down(n, 0.0);
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    double at = 0;
    for (int c : tree.children[*it]) at = std::max(at, up[c]) + alpha(c, *it);
    up[*it] = at;
  }
  double longest = up[tree.root];
  for (int r : order) {
    down[r] = r == tree.root ? up[r] : down[tree.parent[r]] + alpha(tree.parent[r], r);
    longest = std::max(longest, down[r]);
  }
  return longest;
}

double slowest_edge_latency(const ClusterView& view, const std::vector<int>& members, const Tree& tree) {
  double slowest = 0;
  for (size_t r = 0; r < members.size(); ++r)
    if (tree.parent[r] >= 0)
      slowest = std::max(slowest, view.tier_between(members[r], members[tree.parent[r]]).latency_s);
  return slowest;
}

}  // namespace dc
