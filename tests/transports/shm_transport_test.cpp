#include <stdlib.h>

#include <gtest/gtest.h>

#include <ostream>
#include <set>

#include "tests/support/process_state.h"
#include "tests/transports/scenarios.h"
#include "tests/transports/two_ranks.h"
#include "transports/common/message_channel.h"
#include "transports/shm/shm_channel.h"
#include "transports/transport.h"

namespace dc::test {
namespace {

TransportFactory shm() {
  return [](const TransportOptions& o) { return make_shm_transport(o); };
}

// Which rendezvous path the connection took, and that the segment's name is already gone.
std::string check_path_and_no_names(RankContext& ctx, bool single_copy) {
  auto& channel = dynamic_cast<ShmChannel&>(dynamic_cast<OwnedConnection&>(*ctx.conn).channel());
  const ShmChannel::Stats stats = channel.stats();
  if (single_copy) {
    SCENARIO_CHECK(ctx, stats.direct_copies > 0 && stats.slot_chunks == 0,
                   "direct " + std::to_string(stats.direct_copies) + ", slots " + std::to_string(stats.slot_chunks));
  } else {
    SCENARIO_CHECK(ctx, stats.direct_copies == 0 && stats.slot_chunks > 0,
                   "direct " + std::to_string(stats.direct_copies) + ", slots " + std::to_string(stats.slot_chunks));
  }
  char prefix[32];
  std::snprintf(prefix, sizeof prefix, "dc-%016llx", static_cast<unsigned long long>(ctx.session));
  for (const auto& name : dctest::dev_shm_names("dc-")) {
    SCENARIO_CHECK(ctx, name.rfind(prefix, 0) != 0, "segment left in /dev/shm: " + name);
  }
  return "";
}

struct ShmCase {
  RankMode mode;
  bool single_copy;  // false: DEEPCOMM_SHM_CMA=0 forces copy through shared memory
};

// Failures name the setting, not its bytes.
void PrintTo(const ShmCase& c, std::ostream* os) {
  *os << mode_name(c.mode) << (c.single_copy ? ", single copy" : ", copy through shared memory");
}

class ShmTwoRanks : public ::testing::TestWithParam<ShmCase> {
 protected:
  void SetUp() override {
    before_ = dctest::dev_shm_names("dc-");
    if (!GetParam().single_copy) setenv("DEEPCOMM_SHM_CMA", "0", 1);
  }
  void TearDown() override {
    unsetenv("DEEPCOMM_SHM_CMA");
    for (const auto& name : dctest::dev_shm_names("dc-")) {
      EXPECT_TRUE(before_.count(name)) << "left in /dev/shm: " << name;
    }
  }
  std::string run(const Scenario& scenario, RunOptions options = {}) {
    return run_two_ranks(GetParam().mode, shm(), scenario, options);
  }

 private:
  std::set<std::string> before_;
};

TEST_P(ShmTwoRanks, SizesBothWays) {
  const bool single_copy = GetParam().single_copy;
  EXPECT_EQ("", run([single_copy](RankContext& ctx) {
              std::string r = sizes_both_ways(ctx);
              return r.empty() ? check_path_and_no_names(ctx, single_copy) : r;
            }));
}
TEST_P(ShmTwoRanks, PiecesInOrder) { EXPECT_EQ("", run(pieces_in_order)); }
TEST_P(ShmTwoRanks, TagsMatchedNotOrder) { EXPECT_EQ("", run(reverse_tags)); }
TEST_P(ShmTwoRanks, UnexpectedMessages) { EXPECT_EQ("", run(unexpected_messages)); }
TEST_P(ShmTwoRanks, CancelledReceives) { EXPECT_EQ("", run(cancelled_receives)); }
TEST_P(ShmTwoRanks, LateMessagesOfACancelledOperation) { EXPECT_EQ("", run(late_messages_of_cancelled)); }
TEST_P(ShmTwoRanks, SentThenClosed) { EXPECT_EQ("", run(sent_then_closed, RunOptions{false, true})); }
TEST_P(ShmTwoRanks, ShortAndTooLong) { EXPECT_EQ("", run(short_and_too_long)); }
INSTANTIATE_TEST_SUITE_P(Ranks, ShmTwoRanks,
                         ::testing::Values(ShmCase{RankMode::Threads, true}, ShmCase{RankMode::Threads, false},
                                           ShmCase{RankMode::Processes, true}, ShmCase{RankMode::Processes, false}),
                         [](const auto& info) {
                           return std::string(mode_name(info.param.mode)) +
                                  (info.param.single_copy ? "SingleCopy" : "CopyThroughShm");
                         });

// Killing a rank needs the rank to be a process.
class ShmPeerKilled : public ShmTwoRanks {};

TEST_P(ShmPeerKilled, PendingOperationsFailFast) { EXPECT_EQ("", run(peer_killed, RunOptions{true})); }

INSTANTIATE_TEST_SUITE_P(Processes, ShmPeerKilled,
                         ::testing::Values(ShmCase{RankMode::Processes, true}, ShmCase{RankMode::Processes, false}),
                         [](const auto& info) {
                           return std::string(info.param.single_copy ? "SingleCopy" : "CopyThroughShm");
                         });

TEST(ShmTransport, ConnectDeadlines) {
  EXPECT_EQ("", connect_deadlines(shm(), std::string(32, 'b') + ":" + std::to_string(getpid()) + ":0"));
}

TEST(ShmTransport, WrongSessionIsRefused) { EXPECT_EQ("", wrong_session(shm())); }

}  // namespace
}  // namespace dc::test
