// The process's one UCP context and worker, shared by every UCX transport and connection of the
// process and driven by the progress engine's io_context without spinning: after work it
// progresses the worker until ucp_worker_arm says UCS_OK, then waits for the worker's event fd in
// the engine's epoll (ucp_worker_arm's protocol). Created on first use, so a process that forks
// its bootstrap first (the rendezvous root may be forked) never carries UCX state across the fork;
// freed when its last user goes. Incoming active messages are dispatched to connections by the
// connection id in their header. Engine handlers only (run by one thread at a time, not always the
// same one: UCS_THREAD_MODE_SERIALIZED).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>

#include "transports/ucx/ucx_api.h"
#include "transports/ucx/ucx_registration_cache.h"
#include "transports/ucx/ucx_staging.h"

namespace dc {

class UcxChannel;

class UcxWorker : public std::enable_shared_from_this<UcxWorker> {
 public:
  // The process's worker, made on first use; throws dc::Error when UCX cannot start, or when a
  // live worker is driven by another io_context (one progress engine per process).
  static std::shared_ptr<UcxWorker> get(boost::asio::io_context& io);
  ~UcxWorker();
  UcxWorker(const UcxWorker&) = delete;
  UcxWorker& operator=(const UcxWorker&) = delete;

  const UcxApi& api() const { return api_; }
  ucp_worker_h handle() const { return worker_; }
  boost::asio::io_context& io() { return io_; }
  // This worker's address, hex-encoded (goes to the peers through the bootstrap cards).
  const std::string& address() const { return address_; }

  // Connections receive the messages whose header names their id (random, unique here).
  uint64_t attach(UcxChannel* channel);
  void detach(uint64_t id);

  // An endpoint to the worker whose hex address is given. peer_failure: UCP_ERR_HANDLING_MODE_PEER
  // (its failures reach the connection), falling back to none where no transport supports it.
  // Throws dc::Error.
  ucp_ep_h connect(const std::string& hex_address, bool peer_failure, int peer);
  // Closes an endpoint at once (its operations complete with an error); the close finishes in the
  // background, and before the worker goes.
  void retire(ucp_ep_h ep);

  // Makes sure the worker is progressed soon (call after handing UCX work).
  void kick();
  // Progresses on this thread until done() or limit, waiting in poll() on the event fd between
  // events (no spinning). For the few places that must not return before UCX finished something.
  bool progress_until(const std::function<bool()>& done, std::chrono::milliseconds limit);
  // Progresses until nothing more is ready right now.
  void drain();

  // ucp_mem_map of [addr, addr + size): unmapped when the returned handle is released.
  std::shared_ptr<void> map_memory(void* addr, size_t size);
  // A memory handle covering [buf, buf + len): registered memory, or dcMemAlloc/ncclMemAlloc
  // memory (mapped whole on first use). nullptr: none.
  ucp_mem_h memory_handle(const void* buf, size_t len);
  // A cached registration of ordinary memory covering [buf, buf + len), for an in-place transfer
  // (ucx_registration_cache.h; its handle is a ucp_mem_h). nullptr: stage it (no memory events
  // in this process, or registering failed).
  UcxRegistrationCache::Lease cached_registration(const void* buf, size_t len);
  // Drops a lease from inside a UCX callback: the last one of a dropped entry is released later,
  // from the engine, since unmapping from inside UCX's progress is not allowed.
  void release_lease(UcxRegistrationCache::Lease lease);
  // What the registration cache did so far (all zero without one).
  UcxRegistrationCache::Stats registration_stats() const;
  // Staging memory of at least `bytes` for a payload in ordinary memory (reused, ucx_staging.h).
  UcxStagingPool::Buffer staging(size_t bytes) { return staging_->take(bytes); }
  // Frees the staging buffers kept for reuse; returns their bytes.
  size_t release_staging() { return staging_->release_retained(); }

 private:
  struct Mapped {
    const char* begin;
    size_t size;
    ucp_mem_h memh;
    uint64_t serial;  // of the dcMemAlloc region mapped by memory_handle; 0: a registration
  };

  UcxWorker(boost::asio::io_context& io, const UcxApi& api);
  static ucs_status_t on_active_message(void* arg, const void* header, size_t header_length, void* data, size_t length,
                                        const ucp_am_recv_param_t* param);
  static void on_endpoint_error(void* arg, ucp_ep_h ep, ucs_status_t status);
  static void on_closed(void* request, ucs_status_t status, void* user_data);
  static void on_memory_event(ucm_event_type_t type, ucm_event_t* event, void* arg);
  // The registration cache, where UCX's memory events reach it (else ordinary memory is staged);
  // made on the first in-place transfer.
  void start_registration_cache();
  void progress_and_arm();
  // Up to kProgressPerRound ucp_worker_progress calls, until one does nothing; true when any did.
  bool progress_round();
  // ucp_worker_arm's protocol: false while UCX has work (progress again); else the event fd is
  // waited on (also when arming failed: that is warned about).
  bool arm();
  void wait_for_events();
  // The engine's poll hook (base/poll_hooks.h): progress while a driving caller polls, and
  // arming before it blocks.
  void add_poll_hook();
  bool poll_once();
  bool arm_before_block();
  // ucp_mem_map of [addr, addr + size); throws dc::Error.
  ucp_mem_h register_range(void* addr, size_t size);
  // ucp_mem_unmap, unless the process is exiting (UCX goes with it).
  void unregister_range(ucp_mem_h memh);
  Mapped& map_range(void* addr, size_t size, uint64_t serial);
  void unmap(ucp_mem_h memh);

  boost::asio::io_context& io_;
  const UcxApi& api_;
  pid_t pid_;
  ucp_context_h context_ = nullptr;
  ucp_worker_h worker_ = nullptr;
  int event_fd_ = -1;  // UCX's; efd_ watches a duplicate
  boost::asio::posix::stream_descriptor efd_;
  bool waiting_ = false;
  bool kicked_ = false;
  bool armed_ = false;  // ucp_worker_arm said UCS_OK and nothing progressed since
  uint64_t poll_hook_ = 0;
  std::string address_;
  std::map<uint64_t, UcxChannel*> channels_;
  std::vector<void*> closing_;  // endpoint close requests in flight
  std::vector<Mapped> mapped_;
  std::shared_ptr<UcxStagingPool> staging_ = UcxStagingPool::make();
  std::unique_ptr<UcxRegistrationCache> registrations_;
  bool registrations_tried_ = false;
};

}  // namespace dc
