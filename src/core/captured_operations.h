// Operations captured into CUDA graphs (stream_bridge.h, "Graphs"), and what keeps serving their
// replays once their bridge is gone.
//
// A graph holds, for each captured operation, a doorbell that a replay sets to 1 and then a write
// to an eventfd, and a gate it waits to equal 1. Both outlive the bridge whenever the graph does:
// the eventfd number is baked into the graph, so it must stay open (closed, a replay would write 8
// bytes into whatever file took the number), and a replay's gate must still open, or its stream
// waits for ever. So the captured operations and their eventfd live in a list shared with the
// graphs' release callbacks. While the bridge lives, its issuing thread runs the replays. When it
// is destroyed with graphs alive, the process's keeper adopts the list: a replay then passes its
// gates without running (as after a failure, its outputs keep the slots' last bytes, and a warning
// says so), and the keeper frees each pinned block once its graph goes, then closes the eventfd.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "base/event_fd.h"
#include "device/stream_queue.h"

namespace dc {

// A captured operation's pinned block: a doorbell and a gate per stream, then the slots.
struct CapturedBlock {
  uint8_t* block = nullptr;
  size_t lanes = 0;
  bool released = false;  // its graph is gone (the list's mutex); the list's server frees it
  virtual ~CapturedBlock() = default;
  uint64_t* doorbells() const { return reinterpret_cast<uint64_t*>(block); }
  uint64_t* gates() const { return doorbells() + lanes; }
  bool rung() const;  // on every stream
};

class CapturedList {
 public:
  // Throws dc::Error when no eventfd can be made.
  explicit CapturedList(device::StreamQueue& streams);
  CapturedList(const CapturedList&) = delete;
  CapturedList& operator=(const CapturedList&) = delete;

  // The eventfd the graphs' doorbells write (the bridge's issuing thread sleeps on it too; the
  // destructor closes it).
  const EventFd& wake_event() const { return wake_; }

  // Adds op, whose block the graph captured on stream now owns: released (and the list woken)
  // when the graph goes. On an error nothing was added.
  static Status retain(const std::shared_ptr<CapturedList>& list, device::Stream stream,
                       std::shared_ptr<CapturedBlock> op);
  // Frees the blocks of released operations, then takes the doorbells of those rung on every
  // stream back to 0 and returns them: their replays wait at the gates (open_gates).
  std::vector<std::shared_ptr<CapturedBlock>> take_rung();
  void open_gates(const CapturedBlock& op);
  // Operations whose graphs still live.
  size_t size() const;

 private:
  device::StreamQueue& streams_;
  const EventFd wake_{"a stream bridge"};
  mutable std::mutex mutex_;
  std::vector<std::shared_ptr<CapturedBlock>> ops_;  // in capture order
};

// The bridge of list is destroyed: from now on the process's keeper thread serves its replays
// (opening their gates without running them) until every graph is gone, and keeps the eventfd open
// that long; until the process exits when until_exit (streams that never left the bridge's other
// operations may still write it). The stream queue must outlive those graphs.
void keep_after_bridge(std::shared_ptr<CapturedList> list, bool until_exit);
// Captured operations of destroyed bridges whose graphs still live (their pinned blocks held).
size_t kept_captured_operations();
// How many passes over its lists the keeper thread has finished (it passes them when a doorbell or
// an adoption wakes it, and at least once a second): a pass that starts after a doorbell rang has
// ended once this grew by two.
uint64_t keeper_passes();

}  // namespace dc
