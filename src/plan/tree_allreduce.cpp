// Tree all-reduce for small messages: binomial-tree reduce to rank 0, which finalizes, then a
// binomial broadcast of the result. Only rank 0 computes the final value, so all ranks receive the
// same bytes. Each chunk runs through the tree independently, so chunks pipeline.
#include <optional>
#include <vector>

#include "src/plan/generators.h"
#include "src/plan/plan_build.h"

namespace dc {

using namespace plan_build;

void build_tree_allreduce(const PlanRequest& request, Plan& plan) {
  const int n = request.nranks;
  const int r = request.rank;
  // In the binomial tree rooted at 0, rank r's parent is r without its lowest set bit; its
  // children are r + m for the powers of two m below that bit (all of them for rank 0).
  int lowest_bit = 1;
  while (r != 0 && (r & lowest_bit) == 0) lowest_bit <<= 1;
  if (r == 0) {
    while (lowest_bit < n) lowest_bit <<= 1;
  }
  const int parent = r - lowest_bit;
  std::vector<int> children;
  for (int m = 1; m < lowest_bit && r + m < n; m <<= 1) children.push_back(r + m);

  const std::vector<Range> chunks = split_chunks(request.count, chunk_elems(request));
  const uint64_t per_phase = chunks.size();
  // Staging for children's partial results, one slot per chunk, reused child after child.
  plan.sizes.scratch = children.empty() ? 0 : request.count;

  // Reduce phase, children in increasing distance: the same order on every run.
  std::vector<uint32_t> up(chunks.size());  // send to the parent, or rank 0's finalize
  for (size_t j = 0; j < chunks.size(); ++j) {
    const Range& c = chunks[j];
    std::optional<uint32_t> partial;
    for (int child : children) {
      const BufRef operand = partial ? output(c.offset) : input(c.offset);
      partial = plan.add(recv_reduce(child, make_tag(0, per_phase, j), operand, output(c.offset),
                                     scratch(c.offset), c.count),
                         after(partial));
    }
    if (r == 0) {
      up[j] = plan.add(finalize(output(c.offset), c.count), after(partial));
    } else {
      const BufRef src = partial ? output(c.offset) : input(c.offset);
      up[j] = plan.add(send(parent, make_tag(0, per_phase, j), src, c.count), after(partial));
    }
  }

  // Broadcast phase, largest subtree first. The receive overwrites what was sent up.
  for (size_t j = 0; j < chunks.size(); ++j) {
    const Range& c = chunks[j];
    uint32_t have = up[j];
    if (r != 0) {
      have = plan.add(recv(parent, make_tag(1, per_phase, j), output(c.offset), c.count), {up[j]});
    }
    for (auto child = children.rbegin(); child != children.rend(); ++child) {
      plan.add(send(*child, make_tag(1, per_phase, j), output(c.offset), c.count), {have});
    }
  }
}

}  // namespace dc
