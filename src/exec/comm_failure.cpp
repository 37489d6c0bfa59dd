#include "src/exec/comm_failure.h"

#include <array>
#include <cstring>

#include "base/log.h"
#include "src/exec/engine_call.h"
#include "src/exec/flat_board.h"
#include "src/exec/operation.h"
#include "src/exec/rma_channel.h"
#include "src/exec/signature.h"

namespace dc {

namespace {

constexpr uint64_t kControlSeq = 1ull << 62;  // apart from collectives and point-to-point

struct Notice {
  int32_t code;  // dcSuccess: an orderly leave
  uint32_t pad = 0;
  // A leave: how many collectives the leaving rank issued, and its send/receive counts with the
  // receiving rank, so that only operations it never joins fail.
  uint64_t collectives = 0;
  uint64_t sends_to_you = 0;
  uint64_t receives_from_you = 0;
  // A failure: the first collective it fails (the failing rank finished those before it).
  uint64_t failed_from = 0;
  char text[472];
};

// What a rank that left promised: every operation before these counts has its participation.
struct Departure {
  int peer;
  uint64_t collectives, sends_to_us, receives_from_us;
};

}  // namespace

struct ControlChannel {
  ExecComm* comm;                              // null once the communicator is gone
  std::vector<std::unique_ptr<Notice>> inbox;  // one posted receive per peer
  std::vector<int> gone;                       // peers whose connection closed without an orderly leave
  std::vector<Departure> left;                 // peers that destroyed the communicator in order
};

namespace {

Tag control_tag(const ExecComm* comm) { return Tag{comm->id, kControlSeq, 0}; }

// Sends every peer a notice: a failure, or (code dcSuccess) that this rank leaves in order.
void notify(ExecComm* comm, const Status& status) {
  for (int p = 0; p < comm->nranks; ++p) {
    if (p == comm->rank) continue;
    auto notice = std::make_shared<Notice>();
    notice->code = status.code;
    notice->collectives = comm->next_collective_seq;
    notice->sends_to_you = comm->next_send_seq[p];
    notice->receives_from_you = comm->next_recv_seq[p];
    notice->failed_from = comm->failed_from;
    std::snprintf(notice->text, sizeof notice->text, "%s", status.ok() ? "left" : status.message.c_str());
    // A peer that is gone cannot be told; its own connection failure tells the others.
    comm->peer(p)->send(control_tag(comm), notice.get(), sizeof(Notice), [notice](const Status&, size_t) {});
  }
}

// Fails comm when op needs a peer that left before joining it: the ranks made a different number
// of calls. Operations the peer did join (below its counts) completed their part with it.
bool fail_if_waiting_on(ExecComm* comm, const Operation& op, const Departure& d) {
  const int peer = d.peer;
  uint64_t joined = d.collectives;
  if (op.collective() == dcCollSend) joined = d.receives_from_us;
  if (op.collective() == dcCollRecv) joined = d.sends_to_us;
  if (op.sequence() < joined || !op.waits_on(peer)) return false;
  std::string call = op.signature() ? describe_signature(op.signature()) : std::string("a send/receive");
  fail_comm(
      comm,
      Status::failure(dcInvalidUsage, "DeepComm: ranks made a different number of calls: rank " + std::to_string(peer) +
                                          " destroyed the communicator while rank " + std::to_string(comm->rank) +
                                          " waits for it in operation #" + std::to_string(op.sequence()) + ", " + call),
      op.is_collective() ? op.sequence() : 0);
  return true;
}

// An orderly leave of a peer: fails the communicator only if an operation still needs it.
void peer_left(ExecComm* comm, const Departure& d) {
  comm->control->left.push_back(d);
  if (d.collectives < comm->flat_departure.load()) {
    comm->flat_departed_rank = d.peer;
    comm->flat_departure = d.collectives;
  }
  if (comm->board) comm->board->wake_all();
  for (const auto& op : comm->active_ops)
    if (fail_if_waiting_on(comm, *op, d)) return;
}

void post_control_receive(const std::shared_ptr<ControlChannel>& channel, int peer) {
  ExecComm* comm = channel->comm;
  Notice* box = channel->inbox[peer].get();
  comm->peer(peer)->recv(control_tag(comm), box, sizeof(Notice), [channel, peer, box](const Status& s, size_t) {
    ExecComm* c = channel->comm;
    if (!c) return;
    if (!s.ok()) {
      channel->gone.push_back(peer);
      // The first failure is logged by fail_comm; a later one is the clue
      // when a rank sees more ranks gone than died.
      if (c->failed) DC_INFO("DeepComm: rank %d is gone too: %s", peer, s.message.c_str());
      fail_comm(c, Status::failure(dcRemoteError, "DeepComm: rank " + std::to_string(peer) + " is gone: " + s.message));
      return;
    }
    // The peer destroyed its communicator in order: its connection closing
    // later is no failure (and no receive is posted for it any more). An
    // operation still waiting for it never completes: the ranks made a
    // different number of calls.
    if (box->code == dcSuccess)
      return peer_left(c, Departure{peer, box->collectives, box->sends_to_you, box->receives_from_you});
    std::string text(box->text, strnlen(box->text, sizeof box->text));
    const dcResult_t code = box->code == dcInvalidUsage ? dcInvalidUsage : dcRemoteError;
    fail_comm(c, Status::failure(code, text), box->failed_from);
  });
}

}  // namespace

void fail_comm(ExecComm* comm, const Status& status, uint64_t first_collective) {
  if (comm->failed) return;
  comm->failed = true;
  comm->failed_from = first_collective;
  comm->failure = status;
  comm->set_error(status.code, status.message);
  // A peer leaving after the last operation is normal shutdown; only failed work is worth a warning.
  if (comm->active_ops.empty()) DC_INFO("%s", status.message.c_str());
  else DC_WARN("%s", status.message.c_str());
  // Every rank passes its failure on, so a peer learns the first cause before this rank's
  // connections close (a rank that exits after a failure is not taken for the cause).
  notify(comm, status);
  auto ops = comm->active_ops;  // completing an operation removes it from the set
  for (const auto& op : ops)
    if (!op->is_collective() || op->sequence() >= first_collective) op->fail(status);
  if (comm->board) comm->board->wake_all();  // a flat operation waiting on the board sees it now
  if (comm->rma) comm->rma->fail(status);    // and so does a rank waiting for signals
}

void fail_comm_from_caller(ExecComm* comm, const Status& status) {
  call_on_engine(
      [comm, status] {
        fail_comm(comm, status);  // nothing when failed already
        auto ops = comm->active_ops;
        for (const auto& op : ops) op->fail(status);
      },
      comm->engine_timeout_ms, "failing the communicator");
}

void start_control_channel(ExecComm* comm) {
  auto channel = std::make_shared<ControlChannel>();
  channel->comm = comm;
  channel->inbox.resize(comm->nranks);
  comm->control = channel;
  for (int p = 0; p < comm->nranks; ++p) {
    if (p == comm->rank) continue;
    channel->inbox[p] = std::make_unique<Notice>();
    post_control_receive(channel, p);
  }
}

void announce_leave(ExecComm* comm) {
  if (!comm->failed) notify(comm, Status::success());
}

void check_departed_peers(ExecComm* comm, const Operation& op) {
  if (!comm->control) return;
  for (const Departure& d : comm->control->left)
    if (fail_if_waiting_on(comm, op, d)) return;
}

std::vector<int> gone_peers(ExecComm* comm) { return comm->control ? comm->control->gone : std::vector<int>{}; }

void stop_control_channel(ExecComm* comm) {
  if (comm->control) comm->control->comm = nullptr;
  if (comm->rma) comm->rma->stop();
}

}  // namespace dc
