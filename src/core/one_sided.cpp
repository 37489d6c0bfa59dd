#include "src/core/one_sided.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <limits>
#include <string>

#include "kernels/reduce.h"
#include "src/core/issue.h"
#include "src/core/parent_allgather.h"
#include "src/core/suspend.h"
#include "src/core/window_peers.h"
#include "src/exec/comm_failure.h"
#include "src/exec/engine.h"
#include "src/exec/engine_call.h"

namespace dc {

namespace {

RmaChannel& channel(dcComm* comm) {
  if (!comm->exec.rma) {
    call_on_engine(
        [comm] {
          if (!comm->exec.rma) comm->exec.rma = RmaChannel::start(&comm->exec, comm->config.rma_contexts);
        },
        comm->config.connect_timeout_ms, "starting one-sided traffic");
  }
  return *comm->exec.rma;
}

std::string text(const char* function, const std::string& what) {
  return std::string("DeepComm: ") + function + ": " + what;
}

void check_peer(const dcComm* comm, int peer, const char* function) {
  if (peer < 0 || peer >= comm->exec.nranks) {
    fail(dcInvalidArgument, text(function, "peer " + std::to_string(peer) + " is out of range [0, " +
                                               std::to_string(comm->exec.nranks) + ")"));
  }
}

void check_signal(const dcComm* comm, int signal, int context, const char* function) {
  if (signal < 0 || signal >= kSignalsPerContext) {
    fail(dcInvalidArgument, text(function, "signal index " + std::to_string(signal) + " is out of range [0, " +
                                               std::to_string(kSignalsPerContext) + ")"));
  }
  if (context < 0 || context >= comm->config.rma_contexts) {
    fail(dcInvalidArgument,
         text(function, "context " + std::to_string(context) + " is out of range [0, " +
                            std::to_string(comm->config.rma_contexts) + ") (the communicator's one-sided contexts)"));
  }
}

void run_or_defer(std::function<void()> call, bool wait) {
  if (!defer_one_sided(call, wait)) call();
}

// Sends a put or signal and waits until its buffer may be reused (bounded by the communicator's
// timeout, which fails the communicator as a stalled collective does; failing ends the put).
void send(dcComm* comm, int peer, const RmaHeader& header, const void* data) {
  std::shared_ptr<RmaChannel> rma = comm->exec.rma;
  auto batch = std::make_shared<OpBatch>(1);
  Engine::instance().post([rma, peer, header, data, batch] {
    rma->put(peer, header, data, [batch](const Status& s) { batch->finish(s); });
  });
  wait_batch(batch, comm->config.timeout_ms, {comm});
}

}  // namespace

void share_window(dcComm* comm, Registration* window) {
  RmaChannel& rma = channel(comm);
  const uint32_t number = comm->next_window_number++;
  // In the table before the exchange: a peer that finished it may put at once.
  call_on_engine([&rma, window, number] { rma.add_window(number, window->addr, window->size); },
                 comm->exec.engine_timeout_ms, "adding a window");
  window->window_number = number;
  try {
    const WindowEntry mine = describe_window(*window);
    std::vector<uint8_t> bytes(sizeof mine);
    std::memcpy(bytes.data(), &mine, sizeof mine);
    ParentAllGather exchange(comm, std::move(bytes), "the window registration");
    const std::vector<uint8_t>& all = exchange.wait();
    std::vector<WindowEntry> entries(comm->exec.nranks);
    std::vector<uint64_t> sizes(comm->exec.nranks);
    for (int r = 0; r < comm->exec.nranks; ++r) {
      std::memcpy(&entries[r], all.data() + r * sizeof(WindowEntry), sizeof(WindowEntry));
      if (entries[r].number != number) {
        fail(dcInvalidUsage, "DeepComm: the ranks registered windows in different orders: rank " + std::to_string(r) +
                                 " registered its window #" + std::to_string(entries[r].number) + " while rank " +
                                 std::to_string(comm->exec.rank) + " registered #" + std::to_string(number));
      }
      sizes[r] = entries[r].bytes;
    }
    window->window_sizes = std::move(sizes);
    map_peer_windows(comm, window, entries);
  } catch (const Error&) {
    call_on_engine([&rma, number] { rma.remove_window(number); }, comm->exec.engine_timeout_ms, "removing a window");
    throw;
  }
}

Registration* checked_window(dcComm* comm, dcWindow_t win) {
  auto* handle = reinterpret_cast<Registration*>(win);
  std::lock_guard<std::mutex> lock(comm->registrations_mutex);
  const auto& regs = comm->registrations;
  const bool live =
      std::any_of(regs.begin(), regs.end(), [handle](const auto& r) { return r.get() == handle && r->window; });
  if (!live || handle->window_sizes.empty())
    fail(dcInvalidArgument, "DeepComm: not a live window of this communicator");
  return handle;
}

void put_signal(dcComm* comm, const void* buf, size_t count, dcDataType_t datatype, int peer, Registration* window,
                size_t offset, int signal, int context) {
  constexpr const char* kFunction = "dcPutSignal";
  check_peer(comm, peer, kFunction);
  check_signal(comm, signal, context, kFunction);
  const size_t element = datatype_size(datatype);
  if (datatype < 0 || datatype >= dcNumTypes || element == 0)
    fail(dcInvalidArgument, text(kFunction, "unknown datatype " + std::to_string(static_cast<int>(datatype))));
  if (count > std::numeric_limits<uint64_t>::max() / element)
    fail(dcInvalidArgument, text(kFunction, "count " + std::to_string(count) + " overflows the byte size"));
  const uint64_t bytes = count * element;
  if (bytes > 0 && !buf) fail(dcInvalidArgument, text(kFunction, "localbuf is NULL with a nonzero count"));
  const uint64_t size = window->window_sizes[peer];
  if (offset > size || bytes > size - offset) {
    fail(dcInvalidArgument,
         text(kFunction, std::to_string(bytes) + " bytes at offset " + std::to_string(offset) + " end past rank " +
                             std::to_string(peer) + "'s window of " + std::to_string(size) + " bytes"));
  }
  require_not_suspended(comm, "a put");
  channel(comm);
  RmaHeader header;
  header.window = window->window_number;
  header.signal = signal;
  header.context = context;
  header.offset = offset;
  header.bytes = bytes;
  // A peer's window mapped here takes a store, and the signal follows it (puts to one window take
  // one way, so they stay in order).
  char* mapped = peer == comm->exec.rank ? nullptr : static_cast<char*>(window->window_addresses[peer]);
  run_or_defer(
      [comm, peer, header, buf, mapped] {
        if (!mapped) return send(comm, peer, header, buf);
        if (header.bytes) std::memcpy(mapped + header.offset, buf, header.bytes);
        RmaHeader signal_only = header;
        signal_only.bytes = 0;
        send(comm, peer, signal_only, nullptr);
      },
      false);
}

void* window_address(dcComm* comm, Registration* window, size_t offset, int peer) {
  constexpr const char* kFunction = "dcWindowPeerPointer";
  check_peer(comm, peer, kFunction);
  if (offset >= window->window_sizes[peer]) {
    fail(dcInvalidArgument,
         text(kFunction, "offset " + std::to_string(offset) + " is not inside rank " + std::to_string(peer) +
                             "'s window of " + std::to_string(window->window_sizes[peer]) + " bytes"));
  }
  void* at = window->window_addresses[peer];
  if (!at) {
    fail(dcInvalidUsage, text(kFunction, "rank " + std::to_string(peer) +
                                             "'s window is not mapped into this process (only windows in "
                                             "dcMemAlloc/ncclMemAlloc memory of ranks on this host that "
                                             "reach it over shared memory are)"));
  }
  return static_cast<char*>(at) + offset;
}

void signal_peer(dcComm* comm, int peer, int signal, int context) {
  constexpr const char* kFunction = "dcSignal";
  check_peer(comm, peer, kFunction);
  check_signal(comm, signal, context, kFunction);
  require_not_suspended(comm, "a signal");
  channel(comm);
  RmaHeader header;
  header.signal = signal;
  header.context = context;
  run_or_defer([comm, peer, header] { send(comm, peer, header, nullptr); }, false);
}

void wait_signals(dcComm* comm, const std::vector<SignalWait>& waits) {
  constexpr const char* kFunction = "dcWaitSignal";
  for (size_t i = 0; i < waits.size(); ++i) {
    if (waits[i].count < 0)
      fail(dcInvalidArgument, text(kFunction, "waits[" + std::to_string(i) + "].opCount is negative"));
    check_peer(comm, waits[i].peer, kFunction);
    check_signal(comm, waits[i].signal, waits[i].context, kFunction);
  }
  require_not_suspended(comm, "a signal wait");
  channel(comm);
  run_or_defer(
      [comm, waits] {
        const int timeout_ms = comm->config.timeout_ms;
        Status result;
        bool ended = false;
        {
          Engine::Waiting waiting(Engine::instance());
          ended = comm->exec.rma->signals().take(
              waits, std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms), &result);
        }
        if (!ended) {
          const Status timeout = timeout_status(timeout_ms);
          fail_comm_from_caller(&comm->exec, timeout);
          throw Error(timeout.code, timeout.message);
        }
        if (!result.ok()) throw Error(result.code, result.message);
      },
      true);
}

}  // namespace dc
