// The signature ring's edges that plans carry (src/plan/opening_messages.h): both ends of an edge
// decide alike for every generator, the tree's leaf-to-parent messages count, and nothing counts
// above the size limit or where a plan waits before its message.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "src/plan/opening_messages.h"
#include "src/plan/plan.h"
#include "tests/plan/plan_check.h"

namespace dc {
namespace {

PlanRequest request(dcCollective_t collective, int n, uint64_t count, const std::string& algorithm) {
  PlanRequest q;
  q.collective = collective;
  q.nranks = n;
  q.count = count;
  q.elem_size = 4;
  q.algorithms = algorithm.empty() ? AlgorithmFilter{} : AlgorithmFilter::only(algorithm);
  return q;
}

std::vector<OpeningMessages> every_rank(PlanRequest q) {
  std::vector<OpeningMessages> edges;
  for (q.rank = 0; q.rank < q.nranks; ++q.rank) edges.push_back(ring_opening_messages(q));
  return edges;
}

// Rank r's message to r - 1 is left out of the ring exactly when r - 1 stops waiting for it.
void expect_ends_agree(const PlanRequest& q, const std::string& what) {
  const std::vector<OpeningMessages> edges = every_rank(q);
  const int n = q.nranks;
  for (int r = 0; r < n; ++r)
    EXPECT_EQ(edges[r].to_previous, edges[(r + n - 1) % n].from_next)
        << what << ": edge " << r << " -> " << (r + n - 1) % n;
}

TEST(OpeningMessages, BothEndsOfEveryEdgeDecideAlike) {
  const std::vector<std::pair<dcCollective_t, std::vector<std::string>>> cases = {
      {dcCollAllReduce, {"", "ring", "tree", "doubling", "direct", "hierarchical"}},
      {dcCollBroadcast, {""}},
      {dcCollReduce, {""}},
      {dcCollAllGather, {""}},
      {dcCollReduceScatter, {""}},
      {dcCollAlltoAll, {""}},
      {dcCollGather, {""}},
      {dcCollScatter, {""}}};
  for (const auto& [collective, algorithms] : cases) {
    for (const std::string& algorithm : algorithms) {
      for (int n : {2, 3, 4, 5, 8}) {
        for (uint64_t count : {uint64_t{1}, uint64_t{1031}}) {
          for (bool shared_memory : {false, true}) {
            PlanRequest q = request(collective, n, count, algorithm);
            q.root = is_rooted(collective) ? n - 1 : -1;
            q.cluster = ClusterView::one_host(n, shared_memory);
            if (algorithm == "hierarchical") {
              if (n % 2) continue;
              q.cluster = ClusterView::blocks(2, n / 2, shared_memory);
            }
            expect_ends_agree(q, std::string(collective_name(collective)) + " " + algorithm +
                                     " n=" + std::to_string(n) + " count=" + std::to_string(count));
          }
        }
      }
    }
  }
}

// The binomial tree opens with each odd rank's send to its parent one below it, which the parent
// receives first: those edges ride on the plan, the others (an even rank to the odd one below)
// keep the ring's message, but the closing edge (0 to 7), since rank 7 receives the result.
TEST(OpeningMessages, TreeLeavesCarryTheirEdge) {
  const std::vector<OpeningMessages> edges = every_rank(request(dcCollAllReduce, 8, 2, "tree"));
  for (int r = 0; r < 8; ++r) {
    EXPECT_EQ(edges[r].to_previous, r % 2 == 1 || r == 0) << "rank " << r;
    EXPECT_EQ(edges[r].from_next, r % 2 == 0 || r == 7) << "rank " << r;
  }
}

// A ring all-reduce sends forward (to r + 1) and so carries none of the ring's backward edges but
// at two ranks, where the one peer is both neighbours; the closing edge goes (every rank receives).
TEST(OpeningMessages, ForwardRingCarriesNoBackwardEdge) {
  const std::vector<OpeningMessages> four = every_rank(request(dcCollAllReduce, 4, 1024, "ring"));
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(four[r].to_previous, r == 0) << "rank " << r;
    EXPECT_EQ(four[r].from_next, r == 3) << "rank " << r;
  }
  for (const OpeningMessages& e : every_rank(request(dcCollAllReduce, 2, 1024, "ring"))) {
    EXPECT_TRUE(e.to_previous);
    EXPECT_TRUE(e.from_next);
  }
}

// The closing edge stays where the last rank's plan only sends (a broadcast from it): without the
// ring's message its call could end though no other rank made one. From another root it receives.
TEST(OpeningMessages, ClosingEdgeStaysWhereTheLastRankOnlySends) {
  for (int n : {2, 3, 4, 8}) {
    PlanRequest q = request(dcCollBroadcast, n, 1031, "");
    q.root = n - 1;
    std::vector<OpeningMessages> edges = every_rank(q);
    EXPECT_FALSE(edges[n - 1].from_next) << "n=" << n << ", the root last";
    EXPECT_FALSE(edges[0].to_previous) << "n=" << n << ", the root last";
    q.root = 0;
    edges = every_rank(q);
    EXPECT_TRUE(edges[n - 1].from_next) << "n=" << n << ", root 0";
    EXPECT_TRUE(edges[0].to_previous) << "n=" << n << ", root 0";
  }
}

TEST(OpeningMessages, NothingAboveTheSizeLimitOrAlone) {
  const uint64_t limit_elems = kOpeningMessagesMaxBytes / 4;
  EXPECT_TRUE(ring_opening_messages(request(dcCollAllReduce, 2, limit_elems, "tree")).from_next);
  EXPECT_FALSE(ring_opening_messages(request(dcCollAllReduce, 2, limit_elems + 1, "tree")).from_next);
  const OpeningMessages alone = ring_opening_messages(request(dcCollAllReduce, 1, 8, ""));
  EXPECT_FALSE(alone.to_previous || alone.from_next);
}

}  // namespace
}  // namespace dc
