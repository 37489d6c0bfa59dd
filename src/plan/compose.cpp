#include "src/plan/compose.h"

#include <algorithm>
#include <string>

#include "base/error.h"

namespace dc {

using namespace plan_build;

std::vector<PhaseTracker::Access> PhaseTracker::accesses(const Step& s) const {
  std::vector<Access> out;
  const bool ef = request_.compression && request_.compression->error_feedback;
  for (const StepAccess& a : step_accesses(s, ef)) {
    const Place p = canonical_place(request_, a.place);
    out.push_back(Access{p.memory, p.offset, p.offset + a.size, a.write});
  }
  return out;
}

void PhaseTracker::depend(const Step& step, std::vector<uint32_t>& deps) const {
  for (const Access& a : accesses(step)) {
    const Segments& segments = memory_[a.memory];
    auto it = segments.upper_bound(a.begin);
    if (it != segments.begin()) --it;
    for (; it != segments.end() && it->first < a.end; ++it) {
      if (it->second.end <= a.begin) continue;
      if (it->second.writer) deps.push_back(*it->second.writer);
      if (a.write) deps.insert(deps.end(), it->second.readers.begin(), it->second.readers.end());
    }
  }
  std::sort(deps.begin(), deps.end());
  deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
}

void PhaseTracker::record(uint32_t index, const Step& step) { pending_.emplace_back(index, step); }

void PhaseTracker::split_at(Segments& segments, uint64_t at) {
  auto it = segments.upper_bound(at);
  if (it == segments.begin()) return;
  --it;
  if (it->first == at || it->second.end <= at) return;
  Segment tail = it->second;
  it->second.end = at;
  segments.emplace(at, std::move(tail));
}

void PhaseTracker::apply(uint32_t index, const Access& a) {
  if (a.begin == a.end) return;
  Segments& segments = memory_[a.memory];
  split_at(segments, a.begin);
  split_at(segments, a.end);
  // Fill the gaps of [begin, end) with fresh segments, then update every segment inside.
  uint64_t at = a.begin;
  auto it = segments.lower_bound(a.begin);
  while (at < a.end) {
    if (it == segments.end() || it->first > at) {
      const uint64_t gap_end = it == segments.end() ? a.end : std::min(a.end, it->first);
      it = segments.emplace_hint(it, at, Segment{gap_end, std::nullopt, {}});
    }
    Segment& s = it->second;
    if (a.write) {
      s.writer = index;
      s.readers.clear();
    } else {
      s.readers.push_back(index);
    }
    at = s.end;
    ++it;
  }
}

void PhaseTracker::end_phase() {
  // Steps in index order: a later conflicting step of the phase is ordered after an earlier one by
  // the generator, so the last write in index order is the last write in time.
  for (const auto& [index, step] : pending_)
    for (const Access& a : accesses(step)) apply(index, a);
  pending_.clear();
}

uint64_t BuildSpace::longest_segment() const {
  if (segments.empty()) return plan_build::ring_segment(count, n(), 0).count;
  uint64_t longest = 0;
  for (const plan_build::Range& s : segments) longest = std::max(longest, s.count);
  return longest;
}

void BuildSpace::reserve_scratch(uint64_t elems) {
  scratch_base = plan->sizes.scratch;
  plan->sizes.scratch += elems;
}

BufRef BuildSpace::reserve_bytes(uint64_t bytes) {
  const BufRef at{BufId::Bytes, plan->sizes.bytes};
  plan->sizes.bytes += bytes;
  return at;
}

uint32_t BuildSpace::new_length_slot() { return plan->length_slots++; }

uint32_t BuildSpace::tag(uint64_t phase, uint64_t chunks_per_phase, uint64_t chunk) const {
  const uint32_t local = make_tag(phase, chunks_per_phase, chunk);
  if (tag_span != 0 && local >= tag_span)
    fail(dcInvalidArgument,
         "plan phase needs more than " + std::to_string(tag_span) + " message tags; use a larger chunk size");
  return tag_base + local;
}

uint32_t BuildSpace::add(Step step, const std::vector<uint32_t>& after) {
  std::vector<uint32_t> deps = after;
  deps.insert(deps.end(), start_after.begin(), start_after.end());
  if (!tracker) return plan->add(step, deps);
  tracker->depend(step, deps);
  const uint32_t index = plan->add(step, deps);
  tracker->record(index, step);
  return index;
}

std::optional<uint32_t> BuildSpace::add_copy(BufRef src, BufRef dst, uint64_t n_elems,
                                             const std::vector<uint32_t>& after) {
  if (n_elems == 0 || same_place(*request, src, dst)) return std::nullopt;
  return add(copy(src, dst, n_elems), after);
}

std::optional<uint32_t> BuildSpace::add_finalize(BufRef dst, uint64_t n_elems, const std::vector<uint32_t>& after) {
  if (!finalize || n_elems == 0) return std::nullopt;
  return add(plan_build::finalize(dst, n_elems), after);
}

BuildSpace topology_ordered(const BuildSpace& sp) {
  BuildSpace out = sp;
  out.members = sp.request->cluster->topology_order(sp.members);
  const int me = sp.members[sp.self];
  out.self = static_cast<int>(std::find(out.members.begin(), out.members.end(), me) - out.members.begin());
  return out;
}

std::vector<int> ring_blocks(const BuildSpace& original, const BuildSpace& ordered) {
  std::vector<int> index_of(original.request->nranks, -1);
  for (int i = 0; i < original.n(); ++i) index_of[original.members[i]] = i;
  std::vector<int> blocks;
  for (int m : ordered.members) blocks.push_back(index_of[m]);
  return blocks;
}

BuildSpace whole_space(Plan& plan, const PlanRequest& request) {
  BuildSpace space;
  space.plan = &plan;
  space.request = &request;
  for (int r = 0; r < request.nranks; ++r) space.members.push_back(r);
  space.self = request.rank;
  space.in = {BufId::Input, 0};
  space.out = {BufId::Output, 0};
  space.count = request.count;
  space.root = request.root;
  return space;
}

}  // namespace dc
