// deepcomm-run's placement of ranks on hosts, and its command line for --netns/--ranks-per-host.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tools/launcher/options.h"
#include "tools/launcher/placement.h"

namespace dc::launcher {
namespace {

std::optional<std::vector<int>> counts(int nranks, int nhosts, std::vector<int> requested, std::string* error) {
  return ranks_per_host(nranks, nhosts, requested, error);
}

TEST(Placement, EvenSplitGivesTheFirstHostsTheRemainder) {
  std::string error;
  EXPECT_EQ(counts(8, 2, {}, &error), (std::vector<int>{4, 4}));
  EXPECT_EQ(counts(7, 3, {}, &error), (std::vector<int>{3, 2, 2}));
  EXPECT_EQ(counts(4, 4, {}, &error), (std::vector<int>{1, 1, 1, 1}));
}

TEST(Placement, ExplicitCounts) {
  std::string error;
  EXPECT_EQ(counts(0, 2, {3, 1}, &error), (std::vector<int>{3, 1}));
  EXPECT_EQ(counts(4, 2, {3, 1}, &error), (std::vector<int>{3, 1}));
  EXPECT_EQ(counts(0, 3, {2}, &error), (std::vector<int>{2, 2, 2}));
  EXPECT_EQ(counts(0, 2, {0, 2}, &error), (std::vector<int>{0, 2}));
}

TEST(Placement, CountsThatDoNotFitAreRefused) {
  std::string error;
  EXPECT_FALSE(counts(1, 2, {}, &error));
  EXPECT_NE(error.find("without a rank"), std::string::npos) << error;
  EXPECT_FALSE(counts(5, 2, {3, 1}, &error));
  EXPECT_NE(error.find("places 4 ranks but -n asks for 5"), std::string::npos) << error;
  EXPECT_FALSE(counts(0, 2, {3, 1, 2}, &error));
  EXPECT_NE(error.find("3 counts for 2 hosts"), std::string::npos) << error;
  EXPECT_FALSE(counts(0, 2, {0, 0}, &error));
}

TEST(Placement, BlocksInRankOrder) {
  auto places = block_placement({1, 2, 1});
  ASSERT_EQ(places.size(), 4u);
  const int host[] = {0, 1, 1, 2}, local[] = {0, 0, 1, 0}, local_n[] = {1, 2, 2, 1};
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(places[r].host, host[r]) << r;
    EXPECT_EQ(places[r].local_rank, local[r]) << r;
    EXPECT_EQ(places[r].local_nranks, local_n[r]) << r;
  }
}

std::optional<Options> parse(std::vector<std::string> args, std::string* error) {
  args.insert(args.begin(), "deepcomm-run");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  return parse_options(static_cast<int>(argv.size()), argv.data(), error);
}

TEST(PlacementOptions, NetnsAndRanksPerHost) {
  std::string error;
  auto o = parse({"--netns", "a,b", "--ranks-per-host", "3,1", "prog"}, &error);
  ASSERT_TRUE(o) << error;
  EXPECT_EQ(o->nranks, 4);
  EXPECT_EQ(o->netns, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(o->ranks_per_host, (std::vector<int>{3, 1}));

  o = parse({"-n", "3", "prog"}, &error);
  ASSERT_TRUE(o) << error;
  EXPECT_TRUE(o->netns.empty());
  EXPECT_EQ(o->ranks_per_host, (std::vector<int>{3}));
}

TEST(PlacementOptions, BadListsAreUsageErrors) {
  for (std::vector<std::string> args : {std::vector<std::string>{"--netns", "a,,b", "-n", "2", "prog"},
                                        {"--netns", "a,b", "--ranks-per-host", "3,x", "prog"},
                                        {"-n", "2", "--ranks-per-host", "1,1", "prog"},
                                        {"--netns", "a,b", "prog"},
                                        {"-n", "2", "--netns"}}) {
    std::string error;
    EXPECT_FALSE(parse(args, &error));
    EXPECT_FALSE(error.empty());
  }
}

}  // namespace
}  // namespace dc::launcher
