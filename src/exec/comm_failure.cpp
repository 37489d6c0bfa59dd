#include "src/exec/comm_failure.h"

#include <array>
#include <cstring>

#include "src/core/log.h"
#include "src/exec/operation.h"

namespace dc {

namespace {

constexpr uint64_t kControlSeq = 1ull << 62;  // apart from collectives and point-to-point

struct Notice {
  int32_t code;
  char text[508];
};

}  // namespace

struct ControlChannel {
  dcComm* comm;  // null once the communicator is gone
  std::vector<std::unique_ptr<Notice>> inbox;  // one posted receive per peer
  std::vector<int> gone;  // peers whose connection closed without an orderly leave
};

namespace {

Tag control_tag(const dcComm* comm) { return Tag{comm->id, kControlSeq, 0}; }

void post_control_receive(const std::shared_ptr<ControlChannel>& channel, int peer) {
  dcComm* comm = channel->comm;
  Notice* box = channel->inbox[peer].get();
  comm->peer(peer)->recv(control_tag(comm), box, sizeof(Notice),
                         [channel, peer, box](const Status& s, size_t bytes) {
                           dcComm* c = channel->comm;
                           if (!c) return;
                           if (!s.ok()) {
                             channel->gone.push_back(peer);
                             fail_comm(c, Status::failure(dcRemoteError,
                                 "DeepComm: rank " + std::to_string(peer) + " is gone: " + s.message),
                                       false);
                             return;
                           }
                           (void)bytes;
                           // The peer destroyed its communicator in order: its connection closing
                           // later is no failure (and no receive is posted for it any more).
                           if (box->code == dcSuccess) return;
                           std::string text(box->text, strnlen(box->text, sizeof box->text));
                           const dcResult_t code = box->code == dcInvalidUsage ? dcInvalidUsage : dcRemoteError;
                           fail_comm(c, Status::failure(code, text), false);
                         });
}

// Sends every peer a notice: a failure, or (code dcSuccess) that this rank leaves in order.
void notify(dcComm* comm, const Status& status) {
  auto notice = std::make_shared<Notice>();
  notice->code = status.code;
  if (status.ok()) std::snprintf(notice->text, sizeof notice->text, "rank %d left", comm->rank);
  else std::snprintf(notice->text, sizeof notice->text, "%s (reported by rank %d)", status.message.c_str(), comm->rank);
  for (int p = 0; p < comm->nranks; ++p) {
    if (p == comm->rank) continue;
    // A peer that is gone cannot be told; its own connection failure tells the others.
    comm->peer(p)->send(control_tag(comm), notice.get(), sizeof(Notice), [notice](const Status&, size_t) {});
  }
}

}  // namespace

void fail_comm(dcComm* comm, const Status& status, bool notify_peers) {
  if (comm->failed) return;
  comm->failed = true;
  comm->failure = status;
  comm->set_error(status.code, status.message);
  // A peer leaving after the last operation is normal shutdown; only failed work is worth a warning.
  if (comm->active_ops.empty()) DC_INFO("%s", status.message.c_str());
  else DC_WARN("%s", status.message.c_str());
  if (notify_peers) notify(comm, status);
  auto ops = comm->active_ops;  // completing an operation removes it from the set
  for (const auto& op : ops) op->fail(status);
}

void start_control_channel(dcComm* comm) {
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

void announce_leave(dcComm* comm) {
  if (!comm->failed) notify(comm, Status::success());
}

std::vector<int> gone_peers(dcComm* comm) {
  return comm->control ? comm->control->gone : std::vector<int>{};
}

void stop_control_channel(dcComm* comm) {
  if (comm->control) comm->control->comm = nullptr;
}

}  // namespace dc
