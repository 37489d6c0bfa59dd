// Progress that a thread driving the progress engine polls for instead of sleeping on a wake-up fd
// (UCX's worker: ucp_worker_progress, whose fd must be re-armed with a few system calls after each
// event, and whose peers then signal it through a socket). While a driving caller polls
// (src/exec/engine.cpp) it calls every hook's poll between its polls of the sockets, and each hook's
// arm before it blocks in epoll; a hook may leave its wake-up unarmed after work while
// polling_here() says that this thread polls. When the driver lets go of the engine it calls settle:
// the hook makes sure that whoever runs the engine next arms its wake-up before blocking.
// Hooks are called only by the thread that runs the engine's handlers.
#pragma once

#include <cstdint>
#include <functional>

namespace dc::poll_hooks {

struct Hook {
  std::function<bool()> poll;    // progresses; true when it did something
  std::function<bool()> arm;     // arms the wake-up; false: work came meanwhile (poll again)
  std::function<void()> settle;  // the driver lets go: the next runner must arm before blocking
};

// Registers a hook (any thread); its id for remove().
uint64_t add(Hook hook);
void remove(uint64_t id);

bool poll_all();  // true when any hook did something
bool arm_all();   // true when every hook armed its wake-up
void settle_all();

// Whether the calling thread is a driver that polls the hooks (then they may stay unarmed).
bool polling_here();

// Marks the calling thread as a polling driver for its lifetime.
class PollingScope {
 public:
  PollingScope();
  ~PollingScope();
  PollingScope(const PollingScope&) = delete;
  PollingScope& operator=(const PollingScope&) = delete;
};

}  // namespace dc::poll_hooks
