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

// Suspend's release of the copy-through segment (ShmChannel::release_idle_memory): once no slot
// holds a chunk its pages go (held_bytes drops to 0), and the next message makes them again,
// intact. With single copy there is no segment to release.
std::string segment_released_and_made_again(RankContext& ctx, bool single_copy) {
  constexpr size_t kBytes = 3 << 20;  // six slots' worth
  for (int round = 0; round < 2; ++round) {
    char* out = ctx.buffer(kBytes);
    char* in = ctx.buffer(kBytes);
    for (size_t i = 0; i < kBytes; ++i) out[i] = static_cast<char>(i * 13 + ctx.rank * 7 + round);
    const uint64_t seq = static_cast<uint64_t>(round);
    PendingOp recv = ctx.recv(Tag{21, seq, static_cast<uint64_t>(ctx.peer)}, in, kBytes);
    PendingOp send = ctx.send(Tag{21, seq, static_cast<uint64_t>(ctx.rank)}, out, kBytes);
    SCENARIO_CHECK(ctx, recv.wait().status.ok() && send.wait().status.ok(), "round " + std::to_string(round));
    for (size_t i = 0; i < kBytes; ++i) {
      SCENARIO_CHECK(ctx, in[i] == static_cast<char>(i * 13 + ctx.peer * 7 + round), "byte " + std::to_string(i));
    }
    // The peer sends its acknowledgement after it returned every slot: once it arrived, no slot of
    // ours holds a chunk.
    char ack = 1, peer_ack = 0;
    PendingOp ack_in = ctx.recv(Tag{22, seq, static_cast<uint64_t>(ctx.peer)}, &peer_ack, 1);
    PendingOp ack_out = ctx.send(Tag{22, seq, static_cast<uint64_t>(ctx.rank)}, &ack, 1);
    SCENARIO_CHECK(ctx, ack_in.wait().status.ok() && ack_out.wait().status.ok(), "acknowledgement");
    size_t held = 0, released = 0, held_after = 0, released_again = 0;
    ctx.io->call([&] {
      held = ctx.conn->held_bytes();
      released = ctx.conn->release_idle_memory();
      held_after = ctx.conn->held_bytes();
      released_again = ctx.conn->release_idle_memory();
    });
    const size_t segment = single_copy ? 0 : ShmSegment::kBytes;
    SCENARIO_CHECK(ctx, held == segment && released == segment && held_after == 0 && released_again == 0,
                   "held " + std::to_string(held) + ", released " + std::to_string(released) + ", then held " +
                       std::to_string(held_after) + ", released " + std::to_string(released_again));
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
TEST_P(ShmTwoRanks, SegmentReleasedAndMadeAgain) {
  const bool single_copy = GetParam().single_copy;
  EXPECT_EQ("", run([single_copy](RankContext& ctx) { return segment_released_and_made_again(ctx, single_copy); }));
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
