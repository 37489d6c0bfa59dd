// The shared-memory transport's channel: the framed message channel over a Unix socket (control,
// doorbell, death detector, and the way descriptors travel), with its own rendezvous payload paths:
//  - registered memory: a buffer inside a registered dcMemAlloc/ncclMemAlloc region is copied by
//    the receiver straight out of its mapping of that region (shm_regions.h), then FIN;
//  - single copy: the receiver copies straight from the sender's buffer (memcpy when both ranks are
//    one process, else cross-memory attach, process_vm_readv, on the pid the kernel vouched for with
//    SO_PEERCRED) and answers FIN;
//  - copy through shared memory when single copy is off (DEEPCOMM_SHM_CMA=0) or forbidden (the first
//    EPERM switches the connection over): the receiver answers CTS, the sender copies chunks into
//    free slots of its segment (shm_segment.h) and announces them; the receiver copies out and
//    returns the slot.
// Memory crosses as sealed memfds in Memory frames (frame.h): the receiver takes the descriptor that
// came with the frame, checks its seals and size before mapping it, and never lets a later notice
// replace a live mapping. A Memory frame without its descriptor, with a wrong one, or repeating a
// key is a protocol error, as are slot frames out of order or naming slots not in use.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "base/memfd.h"
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
  // Largest memfd a peer may pass, and how many boards may wait to be taken.
  static constexpr uint64_t kMaxMemoryBytes = uint64_t(1) << 40;
  static constexpr size_t kMaxWaitingBoards = 16;

  // peer_pid: the peer process as SO_PEERCRED reported it (and its card said).
  ShmChannel(boost::asio::io_context& io, std::unique_ptr<FrameStream> stream, int peer, pid_t peer_pid,
             std::shared_ptr<ShmRegions> regions, bool single_copy);
  ~ShmChannel() override;

  Stats stats() const { return {direct_copies_.load(), slot_chunks_.load(), mapped_copies_.load()}; }
  TransportCounters counters() const override;
  // Our copy-through segment while its pages are held (the peer's, mapped here, is counted by the
  // peer).
  size_t held_bytes() const override { return segment_bytes_.load(); }
  // Our segment's pages, when no slot holds a chunk.
  size_t release_idle_memory() override;
  // This rank deregistered region id: tell the peer to unmap it if it was passed there.
  void withdraw_region(uint64_t id);
  // Connection::pass_memory / receive_memory (the flat board).
  bool pass_memory(uint64_t key, int fd, size_t bytes);
  void receive_memory(uint64_t key, size_t bytes, std::function<void(int fd)> done);

 protected:
  void describe_rendezvous(FrameHeader& rts, const void* buf, size_t len) override;
  void rendezvous_matched(const RecvPtr& op, const FrameHeader& rts) override;
  void clear_to_send(const SendPtr& op, const FrameHeader& cts) override;
  bool handle_extra_frame(const FrameHeader& h) override;
  // The peer may be copying an announced message out of this process's memory already: a
  // cancelled operation waits for its FIN.
  bool rendezvous_send_droppable() const override { return false; }
  void on_closed() override;

 private:
  struct SlotSend {
    SendPtr op;
    uint64_t receiver_id;
    size_t offset;
  };
  // A peer's region mapped here (read-only).
  struct ImportedRegion {
    uint64_t remote_base = 0;  // the region's address in the peer
    size_t size = 0;
    const char* local = nullptr;
  };
  struct BoardWaiter {
    size_t bytes;
    std::function<void(int)> done;
  };

  // Copies len bytes at the peer's address src into dst; on failure returns the errno.
  int copy_from_peer(void* dst, uint64_t src, size_t len);
  // Copies the peer's bytes piece by piece into a cache-sized buffer and hands each to the sink.
  int stream_from_peer(const PieceSink& sink, uint64_t src, size_t len);
  // Copies the message out of the sender's region mapped here; false if that is not possible.
  bool copy_from_region(const RecvPtr& op, const FrameHeader& rts);
  void send_fin(const FrameHeader& rts, bool failed);
  void send_memory(MemoryKind kind, uint64_t key, uint64_t address, size_t bytes, UniqueFd fd);
  void on_memory(const FrameHeader& h);
  void on_slot(const FrameHeader& h);
  void on_slot_free(const FrameHeader& h);
  void pump_slots();
  void drop_import(uint64_t id);

  pid_t peer_pid_;
  std::shared_ptr<ShmRegions> regions_;
  std::set<uint64_t> regions_passed_;                       // our region ids the peer has been given
  std::map<uint64_t, ImportedRegion> imports_;              // the peer's regions mapped here, by its id
  std::unique_ptr<ShmSegment> out_segment_;                 // ours, made on the first copy-through send
  std::unique_ptr<ShmSegment> in_segment_;                  // the peer's, as it passed it
  std::map<uint64_t, std::pair<UniqueFd, size_t>> boards_;  // arrived, not yet taken
  std::map<uint64_t, BoardWaiter> board_waiters_;
  bool single_copy_;

  std::deque<SlotSend> slot_sends_;
  std::vector<size_t> free_slots_;
  uint32_t slots_in_use_ = 0;  // bit i: slot i holds a chunk the peer has not returned
  std::atomic<uint64_t> direct_copies_{0};
  std::atomic<uint64_t> slot_chunks_{0};
  std::atomic<uint64_t> mapped_copies_{0};
  std::atomic<uint64_t> staged_bytes_{0};
  std::atomic<uint64_t> mapped_bytes_{0};
  std::atomic<size_t> segment_bytes_{0};  // out_segment_'s size while its pages are held; any thread
};

}  // namespace dc
