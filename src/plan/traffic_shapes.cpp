// Traffic of the shapes several generators share: every member to every other, and a root to or
// from every member.
#include "src/plan/generators.h"

namespace dc {

Traffic all_pairs_traffic(const PlanRequest& request, const std::vector<int>& members) {
  Traffic t(*request.cluster);
  const double block = static_cast<double>(request.count * request.elem_size);
  for (int from : members)
    for (int to : members) t.transfer(from, to, block);
  // Each member takes n-1 whole blocks, one after another on its engine.
  t.hops(static_cast<int>(members.size()) - 1, members.front(), members.back());
  return t;
}

Traffic star_traffic(const PlanRequest& request, const std::vector<int>& members, bool toward_root, int hops) {
  Traffic t(*request.cluster);
  const int root = members[request.root];
  const double bytes = static_cast<double>(request.count * request.elem_size);
  for (int other : members) {
    if (toward_root) t.transfer(other, root, bytes);
    else t.transfer(root, other, bytes);
  }
  t.hops(hops, members.front(), members.back());
  return t;
}

}  // namespace dc
