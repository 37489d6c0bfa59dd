// The shared-memory transport's channel: the framed message channel over a Unix socket (control,
// doorbell and death detector), with its own rendezvous payload paths:
//  - registered memory: a buffer inside a registered dcMemAlloc/ncclMemAlloc region is copied by
//    the receiver straight out of its mapping of that region (shm_regions.h), then FIN;
//  - single copy: the receiver copies straight from the sender's buffer (memcpy when both ranks are
//    one process, else cross-memory attach, process_vm_readv) and answers FIN;
//  - copy through shared memory when single copy is off (DEEPCOMM_SHM_CMA=0) or forbidden (the first
//    EPERM switches the connection over): the receiver answers CTS, the sender copies chunks into
//    free slots of the connection's segment and announces them; the receiver copies out and returns
//    the slot.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <deque>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "transports/common/message_channel.h"
#include "transports/shm/shm_regions.h"
#include "transports/shm/shm_segment.h"

namespace dc {

class ShmChannel : public MessageChannel {
 public:
  struct Stats {
    uint64_t direct_copies = 0;  // rendezvous messages received by single copy
    uint64_t slot_chunks = 0;    // chunks sent through the shared segment
    uint64_t mapped_copies = 0;  // rendezvous messages copied out of a mapped registered region
  };

  // peer_address: the peer transport's address (where its region socket listens).
  ShmChannel(boost::asio::io_context& io, Socket socket, int peer, pid_t peer_pid,
             std::shared_ptr<ShmSegment> segment, std::shared_ptr<ShmRegions> regions,
             std::string peer_address, bool dialer, bool single_copy);

  Stats stats() const { return {direct_copies_.load(), slot_chunks_.load(), mapped_copies_.load()}; }
  TransportCounters counters() const override;
  // This rank deregistered region id: tell the peer to unmap it if it was passed there.
  void withdraw_region(uint64_t id);

 protected:
  void describe_rendezvous(FrameHeader& rts, const void* buf, size_t len) override;
  void rendezvous_matched(const RecvPtr& op, const FrameHeader& rts) override;
  void clear_to_send(const SendPtr& op, const FrameHeader& cts) override;
  bool handle_extra_frame(const FrameHeader& h) override;
  void on_closed() override;

 private:
  struct SlotSend {
    SendPtr op;
    uint64_t receiver_id;
    size_t offset;
  };

  // Copies len bytes at the peer's address src into dst; on failure returns the errno.
  int copy_from_peer(void* dst, uint64_t src, size_t len);
  // Copies the peer's bytes piece by piece into a cache-sized buffer and hands each to the sink.
  int stream_from_peer(const PieceSink& sink, uint64_t src, size_t len);
  // Copies the message out of the sender's region mapped here; false if that is not possible.
  bool copy_from_region(const RecvPtr& op, const FrameHeader& rts);
  void send_fin(const FrameHeader& rts, bool failed);
  bool on_slot(const FrameHeader& h);
  void pump_slots();

  pid_t peer_pid_;
  std::shared_ptr<ShmSegment> segment_;
  std::shared_ptr<ShmRegions> regions_;
  std::string peer_address_;
  std::set<uint64_t> regions_passed_;  // our region ids the peer has been given
  int out_half_;
  int in_half_;
  bool single_copy_;

  std::deque<SlotSend> slot_sends_;
  std::vector<size_t> free_slots_;
  std::atomic<uint64_t> direct_copies_{0};
  std::atomic<uint64_t> slot_chunks_{0};
  std::atomic<uint64_t> mapped_copies_{0};
  std::atomic<uint64_t> staged_bytes_{0};
  std::atomic<uint64_t> mapped_bytes_{0};
};

}  // namespace dc
