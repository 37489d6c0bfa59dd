// Plans on fake clusters: 1-16 hosts with 1-8 ranks each (uneven), ranks placed in blocks or
// scattered over the hosts, one network tier or two (fast groups of hosts). A fixed sample of that
// space, so the test's time stays small: every collective's chosen and hierarchical plans are
// simulated on all ranks (results, races, deadlocks); the generators' analytical traffic is held
// against the traffic read off the materialized plans; hierarchical phases pipeline.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "kernels/reduce.h"
#include "src/plan/cost_model.h"
#include "src/plan/generators.h"
#include "src/plan/select.h"
#include "tests/plan/plan_check.h"
#include "tests/plan/plan_invariants.h"

namespace dc {
namespace {

struct FakeCluster {
  std::vector<int> ranks_per_host;
  bool scattered = false;
  int group_size = 0;  // hosts per fast group; 0: one network tier
  bool per_rail = false;
  std::shared_ptr<const ClusterView> view;

  std::string describe() const {
    std::string out = "ranks per host";
    for (int r : ranks_per_host) out += " " + std::to_string(r);
    out += scattered ? ", scattered" : ", blocks";
    if (group_size) out += ", groups of " + std::to_string(group_size) + " hosts";
    if (per_rail) out += ", per-rail tier";
    return out + ": " + view->describe();
  }
};

topo::Tier tier(const std::string& name, double gbps, double latency_us, bool per_rail) {
  topo::Tier t;
  t.name = name;
  t.bandwidth_gbps = gbps;
  t.latency_us = latency_us;
  t.per_rail = per_rail;
  return t;
}

// Tiers: with group_size, a fast one inside groups of group_size consecutive hosts and a slow one
// between them; else one tier. With per_rail the first tier is per rail, and every host has two.
topo::TopologyFile tiers_file(int hosts, int group_size, bool per_rail) {
  topo::TopologyFile file;
  file.source = "fake";
  if (group_size > 0) {
    topo::Tier fast = tier("fast", 100, 2, per_rail);
    for (int first = 0; first < hosts; first += group_size)
      fast.groups.push_back(
          {"", {topo::HostRef{"", static_cast<uint32_t>(first), static_cast<uint32_t>(group_size), 0}}, 0});
    file.tiers = {fast, tier("slow", 10, 20, false)};
  } else {
    file.tiers = {tier("net", 25, 5, per_rail)};
  }
  if (per_rail) {
    topo::HostEntry all;
    all.name = "*";
    for (int rail = 0; rail < 2; ++rail) {
      topo::SummaryNic nic;
      nic.name = "nic" + std::to_string(rail);
      nic.rail = rail;
      all.node.nics.push_back(nic);
    }
    file.hosts.push_back(all);
  }
  return file;
}

FakeCluster make_cluster(std::vector<int> ranks_per_host, bool scattered, int group_size, bool per_rail,
                         std::mt19937& rng) {
  FakeCluster c{std::move(ranks_per_host), scattered, group_size, per_rail, nullptr};
  ClusterInputs in;
  for (size_t h = 0; h < c.ranks_per_host.size(); ++h)
    in.host_ids.insert(in.host_ids.end(), c.ranks_per_host[h], "host" + std::to_string(h));
  // Hosts are numbered by first rank: keep host 0 first so the groups stay as drawn.
  if (scattered) std::shuffle(in.host_ids.begin() + 1, in.host_ids.end(), rng);
  const topo::TopologyFile file = tiers_file(static_cast<int>(c.ranks_per_host.size()), group_size, per_rail);
  in.file = group_size || per_rail ? &file : nullptr;
  c.view = ClusterView::build(in);
  return c;
}

// 1-16 hosts, 1-8 ranks each, at most max_ranks in all.
FakeCluster random_cluster(std::mt19937& rng, int max_ranks) {
  const int hosts = std::uniform_int_distribution<int>(1, 16)(rng);
  const int most = std::max(1, std::min(8, max_ranks / hosts));
  std::vector<int> per_host(hosts);
  for (int& r : per_host) r = std::uniform_int_distribution<int>(1, most)(rng);
  const bool scattered = rng() % 3 == 0;
  const int group_size = rng() % 2 ? std::uniform_int_distribution<int>(1, std::max(1, hosts / 2))(rng) : 0;
  return make_cluster(per_host, scattered, group_size, rng() % 4 == 0, rng);
}

// The layouts the formula/plan agreement tests walk: min_hosts..max_hosts hosts of 1-4 ranks (few
// enough to build every rank's plan); scattering, two tiers and rails vary with the sample number.
FakeCluster sample_cluster(std::mt19937& rng, int sample, int min_hosts, int max_hosts) {
  std::vector<int> per_host(std::uniform_int_distribution<int>(min_hosts, max_hosts)(rng));
  for (int& r : per_host) r = std::uniform_int_distribution<int>(1, 4)(rng);
  return make_cluster(per_host, sample % 3 == 0, sample % 2 ? 2 : 0, sample % 4 == 1, rng);
}

std::vector<int> all_members(int n) {
  std::vector<int> members(n);
  for (int r = 0; r < n; ++r) members[r] = r;
  return members;
}

const dcCollective_t kCollectives[] = {dcCollAllReduce, dcCollAllGather, dcCollReduceScatter, dcCollBroadcast,
                                       dcCollReduce,    dcCollAlltoAll,  dcCollGather,        dcCollScatter};

std::vector<std::string> algorithms_for(dcCollective_t c) {
  if (c == dcCollAllReduce) return {"", "hierarchical", "ring", "dbtree", "tree", "doubling"};
  if (c == dcCollAllGather || c == dcCollReduceScatter || c == dcCollBroadcast || c == dcCollReduce)
    return {"", "hierarchical"};
  return {""};
}

TEST(FakeClusters, EveryCollectiveSimulates) {
  std::mt19937 rng(20261201);
  const TypeOp types[] = {{dcFloat32, dcSum}, {dcInt32, dcMax}, {dcFloat64, dcAvg}};
  uint64_t seed = 1;
  for (int sample = 0; sample < 24; ++sample) {
    const FakeCluster cluster = random_cluster(rng, 40);
    SCOPED_TRACE(cluster.describe());
    const int n = cluster.view->nranks();
    for (dcCollective_t c : kCollectives) {
      for (const std::string& algorithm : algorithms_for(c)) {
        PlanRequest q;
        q.collective = c;
        q.nranks = n;
        q.root = is_rooted(c) ? static_cast<int>(rng() % n) : -1;
        const uint64_t counts[] = {1, 7, 13, 97};
        q.count = counts[rng() % (n > 24 ? 3 : 4)];
        q.in_place = rng() % 2;
        q.chunk_bytes = rng() % 2 ? 16 : 1 << 20;
        q.algorithms = algorithm.empty() ? AlgorithmFilter{} : AlgorithmFilter::only(algorithm);
        q.cluster = cluster.view;
        TypeOp to = types[rng() % 3];
        if (c != dcCollAllReduce && c != dcCollReduce && c != dcCollReduceScatter) to = {dcFloat64, dcSum};
        q.elem_size = datatype_size(to.type);
        simulate_and_check(q, to, seed++);
        if (testing::Test::HasFatalFailure()) return;
      }
    }
  }
}

// Bytes per (tier, host, direction), and per rail where `rails` is set.
std::map<Traffic::Link, double> links(const Traffic& t, bool rails) {
  std::map<Traffic::Link, double> out;
  for (const auto& [link, bytes] : t.link_bytes()) {
    auto key = link;
    if (!rails) std::get<2>(key) = 0;
    out[key] += bytes;
  }
  return out;
}

void expect_same_links(const std::map<Traffic::Link, double>& a, const std::map<Traffic::Link, double>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (const auto& [link, bytes] : a) {
    auto it = b.find(link);
    ASSERT_NE(it, b.end()) << "tier " << std::get<0>(link) << " host " << std::get<1>(link);
    EXPECT_NEAR(it->second, bytes, 1e-6 * bytes) << "tier " << std::get<0>(link) << " host " << std::get<1>(link)
                                                 << " rail " << std::get<2>(link) << " out " << std::get<3>(link);
  }
}

TEST(FakeClusters, AnalyticalTrafficMatchesTheMaterializedPlans) {
  std::mt19937 rng(7);
  for (int sample = 0; sample < 16; ++sample) {
    const FakeCluster cluster = sample_cluster(rng, sample, 2, 6);
    SCOPED_TRACE(cluster.describe());
    const int n = cluster.view->nranks();
    const std::vector<int> everyone = all_members(n);
    for (dcCollective_t c : kCollectives) {
      if (c == dcCollGather || c == dcCollScatter) continue;
      for (const Generator& g : generator_registry()) {
        PlanRequest q;
        q.collective = c;
        q.nranks = n;
        q.root = is_rooted(c) ? n - 1 : -1;
        q.count = 840 * 840;         // every level's segments equal: the formulas' even split is exact
        q.chunk_bytes = 1ull << 30;  // one chunk: the latencies are the formulas' too
        q.cluster = cluster.view;
        // Dense requests only: compressed plans are checked in compressed_plan_test.
        if (g.collective != c || g.compressed) continue;
        if (!g.applicable(q, everyone)) q.count = 840;  // small all-reduces only (doubling)
        if (!g.applicable(q, everyone)) continue;
        SCOPED_TRACE(std::string(collective_name(c)) + " " + g.name);
        q.algorithms = AlgorithmFilter::only(g.name);
        const Traffic formula = g.traffic(q, everyone);
        const Traffic plans = materialized_traffic(make_plans(q), q);
        // Generators that name each message's ranks match rail by rail; those priced by host
        // (ClusterView::reach) match per host and tier.
        const std::string name = g.name;
        const bool by_rank = c == dcCollAllReduce || c == dcCollBroadcast || c == dcCollReduce || name == "ring";
        expect_same_links(links(formula, by_rank), links(plans, by_rank));
        // One chunk: every message of the plans is one the formula counts.
        EXPECT_FALSE(plans.host_message_ends().empty());
        EXPECT_EQ(formula.host_message_ends(), plans.host_message_ends());
        // The trees' formulas, recursive doubling's (when each member's partial is ready), and the
        // ring all-gather's (a block travels n-1 edges), walk the dependencies exactly. The ring's
        // reductions are paced by the slowest edge at every step; the plans let steps over faster
        // edges run up to a step ahead, so the formula may be slower, never faster.
        const bool exact = name == "dbtree" || name == "doubling" || (name == "ring" && c == dcCollAllGather);
        if (exact) EXPECT_NEAR(formula.latency_seconds(), plans.latency_seconds(), 1e-9);
        else if (name == "ring") {
          EXPECT_GE(formula.latency_seconds(), plans.latency_seconds() - 1e-9);
          EXPECT_LE(formula.latency_seconds(), 1.5 * plans.latency_seconds());
        }
        if (testing::Test::HasFatalFailure()) return;
      }
    }
  }
}

// The per-message CPU price counts what the plans send: with fewer elements than ranks, parts
// left empty send nothing.
TEST(FakeClusters, AllReduceMessageCountsMatchThePlansForFewElements) {
  std::mt19937 rng(11);
  for (int sample = 0; sample < 12; ++sample) {
    const FakeCluster cluster = sample_cluster(rng, sample, 1, 5);
    SCOPED_TRACE(cluster.describe());
    const int n = cluster.view->nranks();
    const std::vector<int> everyone = all_members(n);
    for (uint64_t count : {uint64_t{1}, uint64_t{3}, uint64_t{7}, uint64_t{13}}) {
      for (const Generator& g : generator_registry()) {
        PlanRequest q;
        q.collective = dcCollAllReduce;
        q.nranks = n;
        q.count = count;
        q.chunk_bytes = 1ull << 30;
        q.cluster = cluster.view;
        if (g.collective != dcCollAllReduce || g.compressed || !g.applicable(q, everyone)) continue;
        SCOPED_TRACE(std::string(g.name) + " count " + std::to_string(count));
        q.algorithms = AlgorithmFilter::only(g.name);
        EXPECT_EQ(g.traffic(q, everyone).host_message_ends(),
                  materialized_traffic(make_plans(q), q).host_message_ends());
        if (testing::Test::HasFailure()) return;
      }
    }
  }
}

TEST(FakeClusters, PricingScalesTo32kRanks) {
  // 4096 hosts x 8 ranks in two tiers: every all-reduce candidate prices in well under a second.
  const topo::TopologyFile file = tiers_file(4096, 32, true);
  const auto view = ClusterView::blocks(4096, 8, true, &file);
  PlanRequest q;
  q.collective = dcCollAllReduce;
  q.nranks = view->nranks();
  q.count = 1 << 28;
  q.cluster = view;
  const auto started = std::chrono::steady_clock::now();
  const std::vector<PricedGenerator> priced = price_candidates(q);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  EXPECT_EQ(priced.front().generator->name, std::string("hierarchical"));
  EXPECT_LT(seconds, 10.0 * DC_TEST_TIME_SCALE);
}

// A hierarchical plan's rounds, as this rank's phases show them: each round opens with the
// reduce-scatter inside its host; per round, the first message of its all-reduce across hosts.
struct Rounds {
  std::vector<size_t> first_phase;              // of each round
  std::vector<std::optional<uint32_t>> across;  // first send across hosts in each round
};

Rounds rounds_of_plan(const Plan& plan) {
  Rounds rounds;
  for (size_t p = 0; p < plan.phases.size(); ++p) {
    const PlanPhase& phase = plan.phases[p];
    if (phase.name == "reduce-scatter in host") {
      rounds.first_phase.push_back(p);
      rounds.across.emplace_back();
    }
    if (phase.name != "all-reduce" || rounds.across.empty() || rounds.across.back()) continue;
    for (uint32_t i = phase.first_step; i < phase.end_step; ++i)
      if (plan.steps[i].kind == StepKind::Send) {
        rounds.across.back() = i;
        break;
      }
  }
  return rounds;
}

bool depends_directly(const Plan& plan, uint32_t step, uint32_t on) {
  const Step& s = plan.steps[step];
  return std::find(plan.deps.begin() + s.dep_begin, plan.deps.begin() + s.dep_begin + s.dep_count, on) !=
         plan.deps.begin() + s.dep_begin + s.dep_count;
}

// One network tier of `gbps` between every two hosts.
topo::TopologyFile one_tier(double gbps) {
  topo::TopologyFile file;
  file.source = "fake";
  file.tiers = {tier("net", gbps, 60, false)};
  return file;
}

// A large dense all-reduce over slow links runs in rounds, each the whole hierarchical all-reduce
// of its part of the buffer, and a round's reduce-scatter inside its host starts only once this
// rank's all-reduce across hosts two rounds earlier sent its first message: the hosts' sums stay a
// bounded distance ahead of the links instead of taking every core at the start.
TEST(HierarchicalRounds, AllReducesOverSlowLinksRunInRoundsPacedByThem) {
  const topo::TopologyFile gigabit = one_tier(1);
  for (const auto& cluster : {ClusterView::blocks(2, 4, true, &gigabit), ClusterView::blocks(4, 2, true, &gigabit),
                              ClusterView::layout({3, 5}, true, &gigabit)}) {
    SCOPED_TRACE(cluster->describe());
    PlanRequest q;
    q.collective = dcCollAllReduce;
    q.nranks = cluster->nranks();
    q.count = (64 << 20) / 4;
    q.algorithms = AlgorithmFilter::only("hierarchical");
    q.cluster = cluster;
    for (int rank = 0; rank < q.nranks; ++rank) {
      q.rank = rank;
      const Plan plan = make_plan(q);
      const Rounds rounds = rounds_of_plan(plan);
      ASSERT_EQ(rounds.first_phase.size(), 32u) << "rank " << rank;
      for (size_t r = 0; r < rounds.first_phase.size(); ++r) {
        ASSERT_TRUE(rounds.across[r]) << "round " << r << " of rank " << rank << " sends nothing across hosts";
        EXPECT_FALSE(cluster->same_host(rank, plan.steps[*rounds.across[r]].peer));
        const PlanPhase& scatter = plan.phases[rounds.first_phase[r]];
        for (uint32_t i = scatter.first_step; i < scatter.end_step; ++i) {
          if (r >= 2) {
            EXPECT_TRUE(depends_directly(plan, i, *rounds.across[r - 2]))
                << "rank " << rank << ", round " << r << ": step " << i << " does not wait for round " << r - 2;
          }
          for (size_t earlier = 0; earlier < r; ++earlier)
            if (earlier + 2 != r) EXPECT_FALSE(depends_directly(plan, i, *rounds.across[earlier]));
        }
      }
    }
  }
}

// Rounds cost messages and waits, so their number follows the links' time: one per 4 ms of the
// busiest link (at most 32), each owning at least 128 KiB per host member.
TEST(HierarchicalRounds, TheLinksTimeSetsHowManyRounds) {
  const topo::TopologyFile gigabit = one_tier(1), fast = one_tier(100);
  struct Case {
    const topo::TopologyFile* file;
    uint64_t bytes;
    size_t rounds;
  };
  // 2 hosts x 4: each host sends the buffer's size across; 64 MiB take 537 ms at 1 Gbit/s, 54 ms at
  // the default 10 Gbit/s, 5.4 ms at 100 Gbit/s.
  for (const Case& c : {Case{&gigabit, 64 << 20, 32}, Case{nullptr, 64 << 20, 13}, Case{&fast, 64 << 20, 1},
                        Case{&gigabit, 2 << 20, 4}, Case{&gigabit, 512 << 10, 1}}) {
    PlanRequest q;
    q.collective = dcCollAllReduce;
    q.cluster = ClusterView::blocks(2, 4, true, c.file);
    q.nranks = 8;
    q.count = c.bytes / 4;
    q.algorithms = AlgorithmFilter::only("hierarchical");
    EXPECT_EQ(rounds_of_plan(make_plan(q)).first_phase.size(), c.rounds)
        << c.bytes << " bytes over " << (c.file ? c.file->tiers[0].bandwidth_gbps : 10) << " Gbit/s";
  }
}

TEST(HierarchicalRounds, RoundsGiveTheSameResultsInEveryOrder) {
  const TypeOp types[] = {{dcFloat32, dcSum}, {dcFloat64, dcAvg}};
  const topo::TopologyFile gigabit = one_tier(1);
  uint64_t seed = 1;
  for (const auto& cluster : {ClusterView::blocks(2, 4, true, &gigabit), ClusterView::blocks(4, 2, true, &gigabit),
                              ClusterView::layout({3, 5}, true, &gigabit)}) {
    SCOPED_TRACE(cluster->describe());
    for (const TypeOp& to : types) {
      for (bool in_place : {false, true}) {
        PlanRequest q;
        q.collective = dcCollAllReduce;
        q.nranks = cluster->nranks();
        q.elem_size = datatype_size(to.type);
        q.count = (2 << 20) / q.elem_size + 3;  // rounds of uneven parts
        q.chunk_bytes = 1 << 20;                // few steps: the hazard check is quadratic in them
        q.in_place = in_place;
        q.algorithms = AlgorithmFilter::only("hierarchical");
        q.cluster = cluster;
        q.rank = 0;
        ASSERT_GT(rounds_of_plan(make_plan(q)).first_phase.size(), 1u);
        // Rounds share one scratch region: every use of it is ordered after the last one's.
        ASSERT_EQ(sim::check_hazards(make_plans(q), q.elem_size), "");
        simulate_and_check(q, to, seed++);
        if (testing::Test::HasFatalFailure()) return;
      }
    }
  }
}

}  // namespace
}  // namespace dc
