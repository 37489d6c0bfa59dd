#include "src/core/registration.h"

#include <algorithm>

#include "src/exec/engine_call.h"
#include "src/exec/rma_channel.h"

namespace dc {

Registration* register_memory(dcComm* comm, void* addr, size_t size, bool window) {
  if (!addr || size == 0) fail(dcInvalidArgument, "DeepComm: cannot register a NULL or empty buffer");
  auto reg = std::make_unique<Registration>();
  reg->comm = comm;
  reg->addr = addr;
  reg->size = size;
  reg->window = window;
  Registration* r = reg.get();
  call_on_engine(
      [comm, r] {
        for (auto& t : comm->exec.links->transports) r->per_transport.push_back(t->register_memory(r->addr, r->size));
      },
      comm->config.connect_timeout_ms, "registering memory");
  std::lock_guard<std::mutex> lock(comm->registrations_mutex);
  comm->registrations.push_back(std::move(reg));
  return r;
}

void deregister_memory(dcComm* comm, Registration* handle, bool window) {
  std::unique_ptr<Registration> reg;
  {
    std::lock_guard<std::mutex> lock(comm->registrations_mutex);
    auto& regs = comm->registrations;
    auto it = std::find_if(regs.begin(), regs.end(), [handle](const auto& r) { return r.get() == handle; });
    if (it == regs.end() || (*it)->window != window)
      fail(dcInvalidArgument, std::string("DeepComm: not a live ") + (window ? "window" : "registration") +
                                  " handle of this communicator");
    reg = std::move(*it);
    regs.erase(it);
  }
  Registration* r = reg.get();
  call_on_engine(
      [comm, r] {
        // Nothing of a peer's put lands in a window once it is gone (one_sided.h).
        if (r->window && comm->exec.rma) comm->exec.rma->remove_window(r->window_number);
        for (size_t i = 0; i < r->per_transport.size(); ++i)
          comm->exec.links->transports[i]->deregister_memory(r->per_transport[i]);
      },
      comm->config.connect_timeout_ms, "deregistering memory");
}

void release_registrations(dcComm* comm) {
  std::vector<Registration*> left;
  {
    std::lock_guard<std::mutex> lock(comm->registrations_mutex);
    for (auto& r : comm->registrations) left.push_back(r.get());
  }
  for (Registration* r : left) deregister_memory(comm, r, r->window);
}

}  // namespace dc
