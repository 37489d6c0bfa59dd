#include "transports/ucx/ucx_api.h"

#include <dlfcn.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>

#include "base/error.h"
#include "base/log.h"

namespace dc {

namespace {

constexpr const char* kLibrary = "libucp.so.0";

std::atomic<bool> g_exiting{false};
std::atomic<int> g_inside{0};

void close_entries_at_exit() {
  g_exiting = true;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (g_inside.load() > 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

bool user_wants_ucx_signal_handlers() {
  for (const char* name : {"UCX_ERROR_SIGNALS", "UCX_HANDLE_ERRORS"})
    if (std::getenv(name)) return true;
  return false;
}

template <class F>
void resolve(void* handle, const char* name, F& slot) {
  slot = reinterpret_cast<F>(dlsym(handle, name));
  if (!slot) fail(dcSystemError, std::string("DeepComm: UCX library lacks ") + name + " (UCX 1.13 or newer needed)");
}

UcxApi load() {
  // libucs installs its error-signal handlers while it loads: put back what was there before.
  struct sigaction before[NSIG];
  for (int s = 1; s < NSIG; ++s) sigaction(s, nullptr, &before[s]);
  void* handle = dlopen(kLibrary, RTLD_NOW | RTLD_LOCAL);
  if (!handle)
    fail(dcSystemError, std::string("DeepComm: DEEPCOMM_TRANSPORT asks for UCX, but ") + kLibrary +
                            " cannot be loaded (install libucx0): " + dlerror());
  if (!user_wants_ucx_signal_handlers()) {
    for (int s = 1; s < NSIG; ++s) {
      struct sigaction now;
      if (sigaction(s, nullptr, &now) == 0 && now.sa_handler != before[s].sa_handler) sigaction(s, &before[s], nullptr);
    }
  }
  UcxApi api{};
  resolve(handle, "ucp_config_read", api.config_read);
  resolve(handle, "ucp_config_modify", api.config_modify);
  resolve(handle, "ucp_config_release", api.config_release);
  resolve(handle, "ucp_init_version", api.init_version);
  resolve(handle, "ucp_cleanup", api.cleanup);
  resolve(handle, "ucp_worker_create", api.worker_create);
  resolve(handle, "ucp_worker_destroy", api.worker_destroy);
  resolve(handle, "ucp_worker_get_address", api.worker_get_address);
  resolve(handle, "ucp_worker_release_address", api.worker_release_address);
  resolve(handle, "ucp_worker_get_efd", api.worker_get_efd);
  resolve(handle, "ucp_worker_arm", api.worker_arm);
  resolve(handle, "ucp_worker_progress", api.worker_progress);
  resolve(handle, "ucp_worker_set_am_recv_handler", api.worker_set_am_recv_handler);
  resolve(handle, "ucp_ep_create", api.ep_create);
  resolve(handle, "ucp_ep_close_nbx", api.ep_close_nbx);
  resolve(handle, "ucp_am_send_nbx", api.am_send_nbx);
  resolve(handle, "ucp_am_recv_data_nbx", api.am_recv_data_nbx);
  resolve(handle, "ucp_am_data_release", api.am_data_release);
  resolve(handle, "ucp_request_check_status", api.request_check_status);
  resolve(handle, "ucp_request_free", api.request_free);
  resolve(handle, "ucp_mem_map", api.mem_map);
  resolve(handle, "ucp_mem_unmap", api.mem_unmap);
  resolve(handle, "ucs_status_string", api.status_string);
  resolve(handle, "ucm_set_global_opts", api.set_ucm_options);
  resolve(handle, "ucm_global_opts", api.ucm_options);
  resolve(handle, "ucm_set_event_handler", api.set_event_handler);
  resolve(handle, "ucm_unset_event_handler", api.unset_event_handler);
  std::atexit(close_entries_at_exit);  // runs before the destructors of the library just loaded
  DC_INFO("ucx: loaded %s", kLibrary);
  return api;  // the library stays loaded for the life of the process
}

}  // namespace

UcxEntry::UcxEntry() {
  if (g_exiting) return;
  ++g_inside;
  if (g_exiting) {
    --g_inside;
    return;
  }
  admitted_ = true;
}

UcxEntry::~UcxEntry() {
  if (admitted_) --g_inside;
}

const UcxApi& ucx_api() {
  static std::mutex mutex;
  static UcxApi* api = nullptr;
  std::lock_guard<std::mutex> lock(mutex);
  if (!api) api = new UcxApi(load());
  return *api;
}

}  // namespace dc
