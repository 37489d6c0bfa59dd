#include "transports/ucx/ucx_worker.h"

#include <poll.h>
#include <sys/random.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include <boost/asio/post.hpp>

#include "base/error.h"
#include "base/log.h"
#include "base/poll_hooks.h"
#include "base/shareable_memory.h"
#include "transports/ucx/ucx_channel.h"
#include "transports/ucx/ucx_policy.h"
#include "transports/ucx/ucx_wire.h"

namespace dc {

namespace {

// Progress calls per round before trying to arm, and rounds per engine turn: a worker that stays
// busy yields to the engine's other handlers instead of starving them.
constexpr int kProgressPerRound = 64;
constexpr int kRoundsPerTurn = 16;
constexpr auto kCloseWait = std::chrono::milliseconds(2000);

std::weak_ptr<UcxWorker> g_worker;
pid_t g_worker_pid = 0;

std::string to_hex(const void* data, size_t len) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  out.reserve(len * 2);
  for (size_t i = 0; i < len; ++i) {
    const unsigned char b = static_cast<const unsigned char*>(data)[i];
    out += digits[b >> 4];
    out += digits[b & 15];
  }
  return out;
}

std::vector<unsigned char> from_hex(const std::string& hex) {
  auto value = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  if (hex.empty() || hex.size() % 2) fail(dcInvalidArgument, "DeepComm: malformed UCX worker address");
  std::vector<unsigned char> out(hex.size() / 2);
  for (size_t i = 0; i < out.size(); ++i) {
    const int hi = value(hex[2 * i]), lo = value(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) fail(dcInvalidArgument, "DeepComm: malformed UCX worker address");
    out[i] = static_cast<unsigned char>(hi << 4 | lo);
  }
  return out;
}

void check(const UcxApi& api, ucs_status_t s, const char* what) {
  if (s != UCS_OK) fail(dcSystemError, std::string("DeepComm: UCX ") + what + " failed: " + api.status_string(s));
}

}  // namespace

std::shared_ptr<UcxWorker> UcxWorker::get(boost::asio::io_context& io) {
  // A worker inherited through fork belongs to the parent: the child makes its own.
  if (g_worker_pid == getpid()) {
    if (auto worker = g_worker.lock()) {
      if (&worker->io() != &io)
        fail(dcInvalidUsage, "DeepComm: the UCX transport is driven by one progress engine per process");
      return worker;
    }
  }
  auto worker = std::shared_ptr<UcxWorker>(new UcxWorker(io, ucx_api()));
  g_worker = worker;
  g_worker_pid = getpid();
  worker->add_poll_hook();
  worker->kick();
  return worker;
}

UcxWorker::UcxWorker(boost::asio::io_context& io, const UcxApi& api) : io_(io), api_(api), pid_(getpid()), efd_(io) {
  apply_memory_hook_policy(api_);
  ucp_config_t* config = nullptr;
  check(api_, api_.config_read(nullptr, nullptr, &config), "reading its configuration");
  try {
    restrict_devices(api_, config);
  } catch (...) {
    api_.config_release(config);
    throw;
  }
  ucp_params_t params{};
  params.field_mask = UCP_PARAM_FIELD_FEATURES;
  params.features = UCP_FEATURE_AM | UCP_FEATURE_WAKEUP;
  const ucs_status_t s = api_.init_version(UCP_API_MAJOR, UCP_API_MINOR, &params, config, &context_);
  api_.config_release(config);
  check(api_, s, "init");
  try {
    ucp_worker_params_t wp{};
    wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    wp.thread_mode = UCS_THREAD_MODE_SERIALIZED;  // whichever thread runs the engine, one at a time
    check(api_, api_.worker_create(context_, &wp, &worker_), "worker creation");
    check(api_, api_.worker_get_efd(worker_, &event_fd_), "event fd");
    ucp_am_handler_param_t handler{};
    handler.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB |
                         UCP_AM_HANDLER_PARAM_FIELD_ARG | UCP_AM_HANDLER_PARAM_FIELD_FLAGS;
    handler.id = kUcxAmId;
    handler.cb = &UcxWorker::on_active_message;
    handler.arg = this;
    handler.flags = UCP_AM_FLAG_WHOLE_MSG;
    check(api_, api_.worker_set_am_recv_handler(worker_, &handler), "active message handler");
    ucp_address_t* address = nullptr;
    size_t length = 0;
    check(api_, api_.worker_get_address(worker_, &address, &length), "worker address");
    address_ = to_hex(address, length);
    api_.worker_release_address(worker_, address);
    const int fd = dup(event_fd_);
    if (fd < 0) fail(dcSystemError, "DeepComm: cannot duplicate UCX's event fd");
    efd_.assign(fd);
  } catch (...) {
    if (worker_) api_.worker_destroy(worker_);
    api_.cleanup(context_);
    throw;
  }
  DC_INFO("ucx: worker ready (address of %zu bytes)", address_.size() / 2);
}

UcxWorker::~UcxWorker() {
  if (pid_ != getpid()) return;  // a fork's copy: UCX belongs to the parent
  if (poll_hook_) poll_hooks::remove(poll_hook_);
  UcxEntry entry;
  if (!entry) return;  // the process is exiting: UCX goes with it
  progress_until([this] { return closing_.empty(); }, kCloseWait);
  if (registrations_) {
    api_.unset_event_handler(UCM_EVENT_VM_UNMAPPED, &UcxWorker::on_memory_event, registrations_.get());
    registrations_.reset();
  }
  for (const Mapped& m : mapped_) api_.mem_unmap(context_, m.memh);
  boost::system::error_code ignored;
  efd_.close(ignored);
  api_.worker_destroy(worker_);
  api_.cleanup(context_);
}

uint64_t UcxWorker::attach(UcxChannel* channel) {
  // Random ids: a message naming no live connection is dropped, and ids are not guessable.
  uint64_t id = 0;
  while (id == 0 || channels_.count(id)) {
    if (getrandom(&id, sizeof id, 0) != sizeof id) fail(dcSystemError, "DeepComm: getrandom failed");
  }
  channels_[id] = channel;
  return id;
}

void UcxWorker::detach(uint64_t id) { channels_.erase(id); }

ucp_ep_h UcxWorker::connect(const std::string& hex_address, bool peer_failure, int peer) {
  UcxEntry entry;
  if (!entry) fail(dcSystemError, "DeepComm: the process is exiting");
  const std::vector<unsigned char> address = from_hex(hex_address);
  ucp_ep_params_t params{};
  params.field_mask =
      UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE | UCP_EP_PARAM_FIELD_ERR_HANDLER;
  params.address = reinterpret_cast<const ucp_address_t*>(address.data());
  params.err_mode = peer_failure ? UCP_ERR_HANDLING_MODE_PEER : UCP_ERR_HANDLING_MODE_NONE;
  params.err_handler.cb = &UcxWorker::on_endpoint_error;
  params.err_handler.arg = this;
  ucp_ep_h ep = nullptr;
  ucs_status_t s = api_.ep_create(worker_, &params, &ep);
  if (s == UCS_ERR_UNREACHABLE && peer_failure) {
    // UCX 1.13's shared-memory transports cannot report a peer's failure; the connection's control
    // socket tells of the peer's death anyway.
    DC_INFO("ucx: no transport to rank %d handles peer failure; its control socket alone reports it", peer);
    params.err_mode = UCP_ERR_HANDLING_MODE_NONE;
    s = api_.ep_create(worker_, &params, &ep);
  }
  if (s != UCS_OK)
    fail(dcRemoteError, "DeepComm: UCX cannot reach rank " + std::to_string(peer) + ": " + api_.status_string(s) +
                            " (UCX_TLS and UCX_NET_DEVICES decide which transports it may use)");
  kick();
  return ep;
}

void UcxWorker::retire(ucp_ep_h ep) {
  UcxEntry entry;
  if (!entry) return;
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS | UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
  param.flags = UCP_EP_CLOSE_FLAG_FORCE;
  param.cb.send = &UcxWorker::on_closed;
  param.user_data = this;
  ucs_status_ptr_t request = api_.ep_close_nbx(ep, &param);
  if (request && !UCS_PTR_IS_ERR(request)) closing_.push_back(request);
  kick();
}

void UcxWorker::on_closed(void* request, ucs_status_t, void* user_data) {
  auto* self = static_cast<UcxWorker*>(user_data);
  auto& closing = self->closing_;
  closing.erase(std::remove(closing.begin(), closing.end(), request), closing.end());
  self->api_.request_free(request);
}

ucs_status_t UcxWorker::on_active_message(void* arg, const void* header, size_t header_length, void* data,
                                          size_t length, const ucp_am_recv_param_t* param) {
  auto* self = static_cast<UcxWorker*>(arg);
  if (header_length != sizeof(UcxHeader)) {
    DC_WARN("ucx: dropping a message with a foreign header (%zu bytes)", header_length);
    return UCS_OK;  // a rendezvous payload is dropped with it
  }
  UcxHeader h;
  std::memcpy(&h, header, sizeof h);
  auto it = self->channels_.find(h.conn);
  if (it == self->channels_.end()) {
    DC_INFO("ucx: dropping a message for a connection that is closed");
    return UCS_OK;
  }
  return it->second->on_message(h, data, length, (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) != 0);
}

void UcxWorker::on_endpoint_error(void* arg, ucp_ep_h ep, ucs_status_t status) {
  auto* self = static_cast<UcxWorker*>(arg);
  for (const auto& [id, channel] : self->channels_)
    if (channel->endpoint() == ep) return channel->on_endpoint_error(status);
}

void UcxWorker::kick() {
  // A driving caller polls the worker every round, and at its release settle kicks an unarmed worker:
  // a handler posted here would only cost it one more pass through the reactor.
  if (poll_hooks::polling_here()) {
    armed_ = false;
    return;
  }
  if (kicked_) return;
  kicked_ = true;
  boost::asio::post(io_, [weak = weak_from_this()] {
    if (auto self = weak.lock()) self->progress_and_arm();
  });
}

void UcxWorker::progress_and_arm() {
  UcxEntry entry;
  if (!entry) return;
  kicked_ = false;
  for (int round = 0; round < kRoundsPerTurn; ++round) {
    progress_round();
    armed_ = false;  // also without progress: the event fd fired, so arm again before waiting
    // A driving caller polls the worker and arms it only before it blocks: arming after every
    // event costs system calls here and a signal from each peer that sends to an armed worker.
    if (poll_hooks::polling_here() || arm()) return;
  }
  kick();  // still busy: continue after the engine's other handlers
}

void UcxWorker::wait_for_events() {
  if (waiting_) return;
  waiting_ = true;
  efd_.async_wait(boost::asio::posix::stream_descriptor::wait_read,
                  [weak = weak_from_this()](const boost::system::error_code& ec) {
                    auto self = weak.lock();
                    if (!self) return;
                    self->waiting_ = false;
                    if (!ec) self->progress_and_arm();
                  });
}

void UcxWorker::add_poll_hook() {
  std::weak_ptr<UcxWorker> weak = weak_from_this();
  poll_hook_ = poll_hooks::add(poll_hooks::Hook{[weak] {
                                                  auto self = weak.lock();
                                                  return self && self->poll_once();
                                                },
                                                [weak] {
                                                  auto self = weak.lock();
                                                  return !self || self->arm_before_block();
                                                },
                                                [weak] {
                                                  auto self = weak.lock();
                                                  if (self && !self->armed_)
                                                    self->kick();  // whoever runs the engine next arms it
                                                }});
}

bool UcxWorker::poll_once() {
  UcxEntry entry;
  if (!entry) return false;
  const bool progressed = progress_round();
  if (progressed) armed_ = false;
  return progressed;
}

bool UcxWorker::progress_round() {
  int progressed = 0;
  while (progressed < kProgressPerRound && api_.worker_progress(worker_)) ++progressed;
  return progressed > 0;
}

bool UcxWorker::arm_before_block() {
  UcxEntry entry;
  return !entry || armed_ || arm();
}

bool UcxWorker::arm() {
  const ucs_status_t s = api_.worker_arm(worker_);
  if (s == UCS_ERR_BUSY) return false;
  if (s != UCS_OK) DC_WARN("ucx: arming the worker failed (%s); waiting on its event fd anyway", api_.status_string(s));
  armed_ = s == UCS_OK;  // nothing pending: the event fd wakes us
  wait_for_events();
  return true;
}

bool UcxWorker::progress_until(const std::function<bool()>& done, std::chrono::milliseconds limit) {
  UcxEntry entry;
  if (!entry) return done();
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (api_.worker_progress(worker_)) continue;
    if (api_.worker_arm(worker_) == UCS_ERR_BUSY) continue;
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    pollfd p{event_fd_, POLLIN, 0};
    poll(&p, 1, static_cast<int>(left.count()) + 1);
  }
  armed_ = false;
  kick();  // the engine's own wait resumes with a fresh arm
  return done();
}

void UcxWorker::drain() {
  UcxEntry entry;
  if (!entry) return;
  for (int i = 0; i < 100000 && api_.worker_progress(worker_); ++i) {}
  armed_ = false;
  kick();
}

ucp_mem_h UcxWorker::register_range(void* addr, size_t size) {
  UcxEntry entry;
  if (!entry) fail(dcSystemError, "DeepComm: the process is exiting");
  ucp_mem_map_params_t params{};
  params.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH;
  params.address = addr;
  params.length = size;
  ucp_mem_h memh = nullptr;
  check(api_, api_.mem_map(context_, &params, &memh), "memory registration");
  return memh;
}

UcxWorker::Mapped& UcxWorker::map_range(void* addr, size_t size, uint64_t serial) {
  mapped_.push_back(Mapped{static_cast<const char*>(addr), size, register_range(addr, size), serial});
  return mapped_.back();
}

std::shared_ptr<void> UcxWorker::map_memory(void* addr, size_t size) {
  ucp_mem_h memh = map_range(addr, size, 0).memh;
  // The handle keeps the worker (and its context) alive until it is released.
  return std::shared_ptr<void>(memh, [self = shared_from_this()](void* h) { self->unmap(static_cast<ucp_mem_h>(h)); });
}

void UcxWorker::unregister_range(ucp_mem_h memh) {
  UcxEntry entry;
  if (entry) api_.mem_unmap(context_, memh);
}

void UcxWorker::unmap(ucp_mem_h memh) {
  auto it = std::find_if(mapped_.begin(), mapped_.end(), [memh](const Mapped& m) { return m.memh == memh; });
  if (it == mapped_.end()) return;
  mapped_.erase(it);
  unregister_range(memh);
}

void UcxWorker::start_registration_cache() {
  auto cache = std::make_unique<UcxRegistrationCache>(
      [this](void* base, size_t size) -> void* { return register_range(base, size); },
      [this](void* memh) { unregister_range(static_cast<ucp_mem_h>(memh)); });
  // A negative priority: called before the pages go (UCM raises VM_UNMAPPED before the call).
  const ucs_status_t s = api_.set_event_handler(UCM_EVENT_VM_UNMAPPED, -1, &UcxWorker::on_memory_event, cache.get());
  if (s != UCS_OK) {
    DC_INFO("ucx: no memory events (%s): ordinary memory is staged", api_.status_string(s));
    return;
  }
  registrations_ = std::move(cache);
}

void UcxWorker::on_memory_event(ucm_event_type_t, ucm_event_t* event, void* arg) {
  static_cast<UcxRegistrationCache*>(arg)->unmapped(event->vm_unmapped.address, event->vm_unmapped.size);
}

UcxRegistrationCache::Lease UcxWorker::cached_registration(const void* buf, size_t len) {
  // Started by the first in-place transfer: UCX's memory hooks go only into processes that use them.
  if (!registrations_tried_) {
    registrations_tried_ = true;
    start_registration_cache();
  }
  return registrations_ ? registrations_->acquire(buf, len) : nullptr;
}

void UcxWorker::release_lease(UcxRegistrationCache::Lease lease) {
  if (lease && lease.use_count() == 1) boost::asio::post(io_, [last = std::move(lease)] {});
}

UcxRegistrationCache::Stats UcxWorker::registration_stats() const {
  return registrations_ ? registrations_->stats() : UcxRegistrationCache::Stats{};
}

ucp_mem_h UcxWorker::memory_handle(const void* buf, size_t len) {
  const char* p = static_cast<const char*>(buf);
  if (!p || !len) return nullptr;
  ShareableRegion region;
  const bool shareable = find_shareable(buf, len, &region);
  for (const Mapped& m : mapped_) {
    if (p < m.begin || p + len > m.begin + m.size) continue;
    // A region mapped earlier at this address but freed since is stale.
    if (m.serial && (!shareable || m.serial != region.serial)) continue;
    return m.memh;
  }
  if (!shareable) return nullptr;
  // dcMemAlloc memory is mapped whole on first use and stays mapped with the worker; the mapping
  // of a freed region goes when another region appears at its address.
  const char* base = static_cast<const char*>(region.base);
  std::vector<ucp_mem_h> stale;
  for (const Mapped& m : mapped_)
    if (m.serial && m.begin == base) stale.push_back(m.memh);
  for (ucp_mem_h memh : stale) unmap(memh);
  try {
    return map_range(region.base, region.size, region.serial).memh;
  } catch (const Error& e) {
    DC_INFO("%s; dcMemAlloc memory at %p goes unregistered", e.what(), buf);
    return nullptr;
  }
}

}  // namespace dc
