// Hierarchical all-reduce over levels of the cluster: hosts, then fast groups (when the topology
// file declares two network tiers), then the slow links between groups. At each level the members
// fall into units (the ranks of a host; the hosts of a group). The buffer is cut into K segments,
// K the most members a unit has; in a unit of r members, member j owns a contiguous run of about
// K/r of them, so units of any size fit (3 ranks on one host and 5 on another; a rank alone owns
// every segment and skips its unit's phases). Each unit reduce-scatters its owned runs inside;
// for each segment, its owners — one per unit, in topology order — all-reduce it at the next level
// (recursively), ending with a flat ring, tree or double binary tree, whichever the cost model
// prices cheapest; each unit then all-gathers. Inside a host the direct halves run over shared
// memory and the ring halves over sockets; across hosts the ring halves.
//
// A request with a compression spec (the `hiercompressed` generator) ends with a compressed
// all-reduce instead — two-phase or sparse all-gather, whichever is cheaper — so only the last
// level, the slowest links, carries compressed messages and every other level stays dense. Its
// result is the same bits on every member of the last level, which the dense all-gathers then copy,
// so every rank ends with the same bits. Each compressed phase takes the residual of its segment.
//
// The phase tracker orders each step after exactly the earlier phases' steps that touch its
// memory, so a chunk crosses hosts as soon as its host's sum is done. Which levels to use (hosts
// and groups, or only one of them) is priced too; every rank computes the same choice. A large
// dense buffer is cut into rounds, each all of the above over its part, paced so that the sums
// inside a host stay a bounded distance ahead of the slow links (rounds_of below).
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "src/plan/generators.h"

namespace dc {

using namespace plan_build;

namespace {

enum class Level { Hosts, Groups };

using Units = std::vector<std::vector<int>>;

// The units members fall into at a level, in order of their first member; each lists its
// members in the members' order.
Units units_of(const ClusterView& view, const std::vector<int>& members, Level level) {
  std::map<int, size_t> index;
  Units units;
  for (int m : members) {
    const int key = level == Level::Hosts ? view.host_of(m) : view.group_of(view.host_of(m));
    auto [it, fresh] = index.emplace(key, units.size());
    if (fresh) units.emplace_back();
    units[it->second].push_back(m);
  }
  return units;
}

bool splits(const Units& units) {
  if (units.size() < 2) return false;
  for (const auto& u : units)
    if (u.size() >= 2) return true;
  return false;
}

size_t widest(const Units& units) {
  size_t most = 0;
  for (const auto& u : units) most = std::max(most, u.size());
  return most;
}

// The levels a plan goes through, and each level's segment count K.
struct Shape {
  std::vector<Level> levels;
  std::vector<int> width;
};

uint32_t slots_from(const Shape& shape, size_t l) {
  if (l == shape.levels.size()) return 1;
  return 2 + static_cast<uint32_t>(shape.width[l]) * slots_from(shape, l + 1);
}

// The shapes that apply: every level must split its members (two units or more, one of them
// with two members or more). A level's members are one per unit of the level before.
std::vector<Shape> shapes(const ClusterView& view, const std::vector<int>& members) {
  const std::vector<std::vector<Level>> candidates = {{Level::Hosts, Level::Groups}, {Level::Hosts}, {Level::Groups}};
  std::vector<Shape> out;
  for (const auto& levels : candidates) {
    Shape shape{levels, {}};
    std::vector<int> at = members;
    bool fits = true;
    for (Level level : levels) {
      const Units units = units_of(view, at, level);
      if (!splits(units)) {
        fits = false;
        break;
      }
      shape.width.push_back(static_cast<int>(widest(units)));
      at.clear();
      for (const auto& u : units) at.push_back(u.front());
    }
    if (fits) out.push_back(shape);
  }
  return out;
}

// Segment k of K over count elements, and the run of segments member j of r members owns.
Range owned_run(uint64_t count, int K, int r, int j) {
  const Range segments = ring_segment(static_cast<uint64_t>(K), r, j);
  const uint64_t begin = ring_segment(count, K, static_cast<int>(segments.offset)).offset;
  const uint64_t end = segments.offset + segments.count == static_cast<uint64_t>(K)
                           ? count
                           : ring_segment(count, K, static_cast<int>(segments.offset + segments.count)).offset;
  return {begin, end - begin};
}

int owner_of(int K, int r, int k) {
  for (int j = 0; j < r; ++j) {
    const Range segments = ring_segment(static_cast<uint64_t>(K), r, j);
    if (static_cast<uint64_t>(k) < segments.offset + segments.count) return j;
  }
  return r - 1;
}

std::vector<int> rail_of_segment(const Units& units, int K, int k) {
  std::vector<int> rail;
  for (const auto& u : units) rail.push_back(u[owner_of(K, static_cast<int>(u.size()), k)]);
  return rail;
}

struct FlatChoice {
  const char* name;
  void (*build)(BuildSpace&);
  Traffic traffic;
};

// The last level: the cheapest flat all-reduce of `count` elements over one member per unit
// (compressed ones for a compressed request).
FlatChoice flat_choice(const PlanRequest& request, const std::vector<int>& members, uint64_t count) {
  PlanRequest priced = request;
  priced.count = count;
  std::vector<FlatChoice> choices;
  if (request.compression)
    choices = {{"twophase", build_twophase_allreduce, twophase_allreduce_traffic(priced, members)},
               {"sparsegather", build_sparse_allgather_allreduce, sparse_allgather_allreduce_traffic(priced, members)}};
  else
    choices = {{"ring", build_ring_allreduce, ring_allreduce_traffic(priced, members)},
               {"dbtree", build_dbtree_allreduce, dbtree_allreduce_traffic(priced, members)},
               {"tree", build_tree_allreduce, tree_allreduce_traffic(priced, members)}};
  size_t best = 0;
  for (size_t i = 1; i < choices.size(); ++i)
    if (choices[i].traffic.seconds() < choices[best].traffic.seconds()) best = i;
  return choices[best];
}

bool direct_inside(const PlanRequest& request, Level level, const std::vector<int>& unit) {
  return level == Level::Hosts && members_share_memory(request, unit);
}

// The owned runs of a unit's members, as the halves' segments: the direct halves end with
// segment j at member j, the ring halves with segment j+1.
std::vector<Range> half_segments(uint64_t count, int K, int r, bool direct) {
  std::vector<Range> segments(r);
  for (int j = 0; j < r; ++j) segments[direct ? j : (j + 1) % r] = owned_run(count, K, r, j);
  return segments;
}

Traffic level_traffic(const PlanRequest& request, const Shape& shape, size_t l, const std::vector<int>& members,
                      uint64_t count) {
  if (l == shape.levels.size()) return flat_choice(request, members, count).traffic;
  const ClusterView& view = *request.cluster;
  const Units units = units_of(view, members, shape.levels[l]);
  const int K = shape.width[l];
  Traffic scatter(view), inner(view), gather(view);
  for (const auto& unit : units) {
    const int r = static_cast<int>(unit.size());
    if (r < 2) continue;
    std::vector<double> owned(r);
    for (int j = 0; j < r; ++j) owned[j] = static_cast<double>(owned_run(count, K, r, j).count * request.elem_size);
    const bool direct = direct_inside(request, shape.levels[l], unit);
    scatter.add_alongside(direct ? direct_half_traffic(request, unit, owned, true)
                                 : ring_half_traffic(request, unit, owned, true));
    gather.add_alongside(direct ? direct_half_traffic(request, unit, owned, false)
                                : ring_half_traffic(request, unit, owned, false));
  }
  for (int k = 0; k < K; ++k) {
    const Range segment = ring_segment(count, K, k);
    if (segment.count == 0) continue;
    inner.add_alongside(level_traffic(request, shape, l + 1, rail_of_segment(units, K, k), segment.count));
  }
  scatter.add(inner);
  scatter.add(gather);
  return scatter;
}

// The cheapest shape and its traffic.
std::pair<Shape, Traffic> best_shape(const PlanRequest& request, const std::vector<int>& members) {
  const std::vector<int> ordered = request.cluster->topology_order(members);
  std::pair<Shape, Traffic> best{Shape{}, Traffic(*request.cluster)};
  double best_seconds = 0;
  for (const Shape& shape : shapes(*request.cluster, ordered)) {
    Traffic t = level_traffic(request, shape, 0, ordered, request.count);
    if (best.first.levels.empty() || t.seconds() < best_seconds) {
      best_seconds = t.seconds();
      best = {shape, std::move(t)};
    }
  }
  return best;
}

// The rounds a dense plan is cut into. Each round is the whole hierarchical all-reduce of its part
// of the buffer, and round r + kRoundsAhead reduces inside its hosts only once this rank's
// all-reduce across them in round r sent its first message: the sums inside a host then run a
// bounded distance ahead of the slow links instead of all at once at the start, where on
// oversubscribed cores they took the CPU the first transfers needed. A round costs its messages
// and a pacing wait, so rounds are cut only where the links carry a long transfer: one round per
// kRoundLinkSeconds of the busiest link's time, each owning at least kRoundBlockBytes per host
// member, at most kMaxRounds. 2 hosts x 4 ranks on 2 cores (docs/performance.md, "Hierarchy by
// default"): at 1 Gbit/s, 64 MiB took 1.12x the slow-link bound in one round, 1.01x in 32; over an
// unlimited veth (~30 Gbit/s) 32 rounds made 64 MiB 5% and 16 MiB 47% slower.
constexpr double kRoundLinkSeconds = 4e-3;
constexpr uint64_t kRoundBlockBytes = 128 * 1024;
constexpr uint64_t kMaxRounds = 32;
constexpr int kRoundsAhead = 2;

// `whole`: the traffic of the buffer in one round.
int rounds_of(const PlanRequest& request, const Shape& shape, const Traffic& whole) {
  if (request.compression) return 1;  // a compressed all-reduce codes each segment once, whole
  const uint64_t blocks =
      request.count * request.elem_size / (static_cast<uint64_t>(shape.width[0]) * kRoundBlockBytes);
  const auto by_link = static_cast<uint64_t>(whole.network_seconds() / kRoundLinkSeconds);
  // Every round takes its own tag slots: each phase keeps at least 2^16 message tags.
  const uint64_t by_tags = (uint64_t{1} << 16) / slots_from(shape, 0);
  return static_cast<int>(std::clamp<uint64_t>(std::min({blocks, by_link, by_tags}), 1, kMaxRounds));
}

// Whether the level after l is a flat ring over one member per unit (then the reduce-scatter
// inside unit u finishes its chunks in the order ring member u consumes them). The segments'
// rings are priced alike; the first one's choice stands for all.
bool next_level_rings(const PlanRequest& request, const Shape& shape, size_t l, const Units& units, int K,
                      uint64_t count) {
  if (l + 1 != shape.levels.size()) return false;
  const Range segment = ring_segment(count, K, 0);
  return std::string(flat_choice(request, rail_of_segment(units, K, 0), segment.count).name) == "ring";
}

void build_level(BuildSpace sp, const Shape& shape, size_t l, uint32_t slot, uint32_t slots) {
  const PlanRequest& request = *sp.request;
  if (l == shape.levels.size()) {
    const FlatChoice choice = flat_choice(request, sp.members, sp.count);
    build_phase(sp, {slot, slots}, request.compression ? "compressed all-reduce" : "all-reduce", choice.name,
                [&](BuildSpace& space) {
                  if (space.count > 0) choice.build(space);
                });
    return;
  }
  const Units units = units_of(*request.cluster, sp.members, shape.levels[l]);
  const int me = sp.members[sp.self];
  int u = 0;
  while (std::find(units[u].begin(), units[u].end(), me) == units[u].end()) ++u;
  const std::vector<int>& unit = units[u];
  const int r = static_cast<int>(unit.size());
  const int j = static_cast<int>(std::find(unit.begin(), unit.end(), me) - unit.begin());
  const int K = shape.width[l];
  const bool direct = direct_inside(request, shape.levels[l], unit);
  const char* level_name = shape.levels[l] == Level::Hosts ? " in host" : " in group";

  BuildSpace local = sp;
  local.start_after.clear();
  local.members = unit;
  local.self = j;
  local.finalize = false;
  local.segments = half_segments(sp.count, K, r, direct);
  if (direct && next_level_rings(request, shape, l, units, K, sp.count)) {
    local.feeds_ring_member = u;
    local.feeds_ring_members = static_cast<int>(units.size());
  }
  if (r > 1) {
    BuildSpace paced = local;
    paced.start_after = sp.start_after;
    build_phase(paced, {slot, slots}, std::string("reduce-scatter") + level_name, direct ? "direct" : "ring",
                direct ? build_direct_allreduce_scatter_half : build_ring_allreduce_scatter_half);
  }

  const uint32_t inner_slots = slots_from(shape, l + 1);
  for (int k = 0; k < K; ++k) {
    const Range segment = ring_segment(sp.count, K, k);
    if (owner_of(K, r, k) != j || segment.count == 0) continue;
    BuildSpace inner = sp;
    inner.start_after.clear();
    inner.members = rail_of_segment(units, K, k);
    inner.self = u;
    // A member alone in its unit takes its own data; the others their unit's sum.
    inner.in = r > 1 ? sp.output(segment.offset) : sp.input(segment.offset);
    inner.out = sp.output(segment.offset);
    inner.count = segment.count;
    inner.segments.clear();
    build_level(inner, shape, l + 1, slot + 1 + static_cast<uint32_t>(k) * inner_slots, slots);
  }

  if (r > 1)
    build_phase(local, {slot + 1 + static_cast<uint32_t>(K) * inner_slots, slots},
                std::string("all-gather") + level_name, direct ? "direct" : "ring",
                direct ? build_direct_allreduce_gather_half : build_ring_allreduce_gather_half);
}

// The first message of each all-reduce across units that this rank built since `first_phase`.
std::vector<uint32_t> first_sends_across(const Plan& plan, size_t first_phase) {
  std::vector<uint32_t> sends;
  for (size_t p = first_phase; p < plan.phases.size(); ++p) {
    if (plan.phases[p].name != "all-reduce") continue;
    for (uint32_t i = plan.phases[p].first_step; i < plan.phases[p].end_step; ++i)
      if (plan.steps[i].kind == StepKind::Send) {
        sends.push_back(i);
        break;
      }
  }
  return sends;
}

}  // namespace

bool hierarchical_allreduce_applicable(const PlanRequest& request, const std::vector<int>& members) {
  if (static_cast<int>(members.size()) != request.cluster->nranks()) return false;
  return !shapes(*request.cluster, request.cluster->topology_order(members)).empty();
}

void build_hierarchical_allreduce(BuildSpace& sp) {
  const auto [shape, whole] = best_shape(*sp.request, sp.members);
  PhaseTracker tracker(*sp.request);
  BuildSpace top = topology_ordered(sp);
  top.tracker = &tracker;
  Plan& plan = *sp.plan;
  const uint32_t slots = slots_from(shape, 0);
  const int rounds = rounds_of(*sp.request, shape, whole);
  // Rounds reuse one scratch region: the tracker orders a round's use of it after the last one's.
  const uint64_t scratch_start = plan.sizes.scratch;
  uint64_t scratch_end = scratch_start;
  std::vector<std::vector<uint32_t>> started(rounds);
  for (int r = 0; r < rounds; ++r) {
    const Range part = ring_segment(sp.count, rounds, r);
    BuildSpace round = top;
    round.in = top.input(part.offset);
    round.out = top.output(part.offset);
    round.count = part.count;
    if (r >= kRoundsAhead) round.start_after = started[r - kRoundsAhead];
    plan.sizes.scratch = scratch_start;
    const size_t first_phase = plan.phases.size();
    build_level(round, shape, 0, static_cast<uint32_t>(r) * slots, static_cast<uint32_t>(rounds) * slots);
    scratch_end = std::max(scratch_end, plan.sizes.scratch);
    started[r] = first_sends_across(plan, first_phase);
  }
  plan.sizes.scratch = scratch_end;
}

Traffic hierarchical_allreduce_traffic(const PlanRequest& request, const std::vector<int>& members) {
  auto [shape, whole] = best_shape(request, members);
  const int rounds = rounds_of(request, shape, whole);
  if (rounds == 1) return whole;
  // The rounds' parts come in two sizes (ring_segment): copies of each.
  const std::vector<int> ordered = request.cluster->topology_order(members);
  const uint64_t larger = request.count % static_cast<uint64_t>(rounds);
  Traffic priced(*request.cluster);
  for (uint64_t extra : {uint64_t{1}, uint64_t{0}}) {
    const int copies = static_cast<int>(extra ? larger : rounds - larger);
    if (copies == 0) continue;
    PlanRequest round = request;
    round.count = request.count / static_cast<uint64_t>(rounds) + extra;
    Traffic t = level_traffic(round, shape, 0, ordered, round.count);
    t.repeat(copies);
    priced.add_alongside(t);
  }
  return priced;
}

}  // namespace dc
