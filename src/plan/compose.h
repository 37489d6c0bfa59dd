// What a generator builds over, so that generators compose: a list of member ranks, regions of
// the logical buffers, a tag range and scratch from the plan's arena. A hierarchical plan is
// phases built by the simple generators over subgroups; its PhaseTracker orders each step after
// exactly the earlier phases' steps that touch the same memory (a chunk's second phase waits for
// that chunk's first phase only, so phases pipeline instead of running one after another).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "src/plan/plan.h"
#include "src/plan/plan_build.h"

namespace dc {

// Cross-phase dependencies by memory: which step last wrote, and which read since, each range.
class PhaseTracker {
 public:
  explicit PhaseTracker(const PlanRequest& request) : request_(request) {}
  // Adds to deps the earlier phases' steps that `step` must follow (read after write, write after
  // read or write).
  void depend(const Step& step, std::vector<uint32_t>& deps) const;
  // Records a step of the phase being built; it becomes visible to later phases at end_phase().
  void record(uint32_t index, const Step& step);
  void end_phase();

 private:
  struct Access {
    int memory;
    uint64_t begin, end;
    bool write;
  };
  struct Segment {
    uint64_t end = 0;
    std::optional<uint32_t> writer;
    std::vector<uint32_t> readers;
  };
  using Segments = std::map<uint64_t, Segment>;  // by begin; disjoint

  std::vector<Access> accesses(const Step& step) const;
  void split_at(Segments& segments, uint64_t at);
  void apply(uint32_t index, const Access& access);

  const PlanRequest& request_;
  Segments memory_[5];  // Input (or the one in-place memory), Output, Scratch, Bytes, Residual
  std::vector<std::pair<uint32_t, Step>> pending_;
};

struct BuildSpace {
  Plan* plan = nullptr;
  const PlanRequest* request = nullptr;
  std::vector<int> members;  // comm ranks, in the generator's order
  int self = 0;              // this rank's index in members
  BufRef in;                 // start of the generator's input region
  BufRef out;                // start of its output region
  uint64_t count = 0;        // the collective's count for the generator (as PlanRequest::count)
  int root = -1;             // member index of the root (rooted collectives)
  uint32_t tag_base = 0;
  uint32_t tag_span = 0;  // tags used: [tag_base, tag_base + tag_span); 0 = up to 2^32
  bool finalize = true;   // its reduction finishes the operation (avg divides here)
  PhaseTracker* tracker = nullptr;
  uint64_t scratch_base = 0;
  // The n segments the all-reduce halves cut the region into (ring: segment k+1 ends at member k;
  // direct: segment k at member k); empty: n balanced segments. Hierarchical plans give each
  // member of a host the segments it owns when hosts hold different numbers of ranks.
  std::vector<plan_build::Range> segments;
  // The ring all-reduce that each block feeds after a reduce-scatter half (a hierarchical plan's
  // ring across hosts: host u's members are its member u): the direct half finishes each block's
  // chunks in the order that ring consumes them (plan_build::ring_feed_order). 1 member: no ring.
  int feeds_ring_member = 0;
  int feeds_ring_members = 1;
  // Steps that every step of this generator also follows (a paced phase waits for a later
  // phase's progress in an earlier round: hierarchical_allreduce.cpp).
  std::vector<uint32_t> start_after;

  int n() const { return static_cast<int>(members.size()); }
  plan_build::Range segment(int k) const {
    return segments.empty() ? plan_build::ring_segment(count, n(), k) : segments[k];
  }
  uint64_t longest_segment() const;
  int peer(int index) const { return members[plan_build::wrap(index, n())]; }
  BufRef input(uint64_t offset) const { return {in.buf, in.offset + offset}; }
  BufRef output(uint64_t offset) const { return {out.buf, out.offset + offset}; }
  BufRef scratch(uint64_t offset) const { return {BufId::Scratch, scratch_base + offset}; }
  // Error-feedback state of the element at `offset` of the input region (compressed plans).
  BufRef residual(uint64_t offset) const { return {BufId::Residual, in.offset + offset}; }
  uint64_t chunk_elems() const { return plan_build::chunk_elems(*request); }

  // Takes `elems` of the plan's scratch for this generator (scratch(0) is their start).
  void reserve_scratch(uint64_t elems);
  // Takes `bytes` of the plan's byte scratch (compressed messages); returns where they start.
  BufRef reserve_bytes(uint64_t bytes);
  // A new run-time length slot (compressed messages).
  uint32_t new_length_slot();
  uint32_t tag(uint64_t phase, uint64_t chunks_per_phase, uint64_t chunk) const;
  uint32_t add(Step step, const std::vector<uint32_t>& after = {});
  // dst = src unless both are one memory; the step, when one was added.
  std::optional<uint32_t> add_copy(BufRef src, BufRef dst, uint64_t count, const std::vector<uint32_t>& after = {});
  // The op's final step on dst when this generator finishes the operation.
  std::optional<uint32_t> add_finalize(BufRef dst, uint64_t count, const std::vector<uint32_t>& after = {});
};

// The space of a plan over every rank of the request: members 0..n-1, Input and Output whole.
BuildSpace whole_space(Plan& plan, const PlanRequest& request);
// The same space with its members in the cluster's topology order (ClusterView::topology_order),
// for generators whose result does not depend on the members' order (no custom segments).
BuildSpace topology_ordered(const BuildSpace& space);
// For each member of `ordered` (topology_ordered(original)), its index in original: the block it
// contributes or receives when blocks follow the original order.
std::vector<int> ring_blocks(const BuildSpace& original, const BuildSpace& ordered);

// A composed plan cuts its tags into `slots` equal ranges, one per phase (or per rail of a phase),
// numbered alike on every rank whether or not it takes part, so phases never match each other's
// messages.
struct TagSlot {
  uint32_t slot = 0;
  uint32_t slots = 1;
};

// Builds one phase of a composed plan through `build`, recording it in plan.phases.
template <class Build>
void build_phase(BuildSpace space, TagSlot tags, const std::string& name, const std::string& algorithm, Build build) {
  Plan& plan = *space.plan;
  const uint32_t first = static_cast<uint32_t>(plan.steps.size());
  space.tag_span = static_cast<uint32_t>((uint64_t{1} << 32) / tags.slots);
  space.tag_base = tags.slot * space.tag_span;
  build(space);
  plan.phases.push_back(PlanPhase{name, algorithm, space.members, first, static_cast<uint32_t>(plan.steps.size())});
  if (space.tracker) space.tracker->end_phase();
}

}  // namespace dc
