// UCX, loaded when the first UCX transport is made (dlopen of libucp.so.0), not linked: merely
// loading libucs installs UCX's SIGSEGV/SIGBUS/SIGILL/SIGFPE handlers and reads its memory-hook
// settings, which a library preloaded into every program (PyTorch, nccl-tests) must not do to
// programs that never choose UCX. The headers come from libucx-dev at build time; the functions
// are looked up here.
#pragma once

#include <ucm/api/ucm.h>
#include <ucp/api/ucp.h>

namespace dc {

struct UcxApi {
  decltype(&ucp_config_read) config_read;
  decltype(&ucp_config_modify) config_modify;
  decltype(&ucp_config_release) config_release;
  decltype(&ucp_init_version) init_version;
  decltype(&ucp_cleanup) cleanup;
  decltype(&ucp_worker_create) worker_create;
  decltype(&ucp_worker_destroy) worker_destroy;
  decltype(&ucp_worker_get_address) worker_get_address;
  decltype(&ucp_worker_release_address) worker_release_address;
  decltype(&ucp_worker_get_efd) worker_get_efd;
  decltype(&ucp_worker_arm) worker_arm;
  decltype(&ucp_worker_progress) worker_progress;
  decltype(&ucp_worker_set_am_recv_handler) worker_set_am_recv_handler;
  decltype(&ucp_ep_create) ep_create;
  decltype(&ucp_ep_close_nbx) ep_close_nbx;
  decltype(&ucp_am_send_nbx) am_send_nbx;
  decltype(&ucp_am_recv_data_nbx) am_recv_data_nbx;
  decltype(&ucp_am_data_release) am_data_release;
  decltype(&ucp_request_check_status) request_check_status;
  decltype(&ucp_request_free) request_free;
  decltype(&ucp_mem_map) mem_map;
  decltype(&ucp_mem_unmap) mem_unmap;
  decltype(&ucs_status_string) status_string;
  decltype(&ucm_set_global_opts) set_ucm_options;
  decltype(&ucm_set_event_handler) set_event_handler;
  decltype(&ucm_unset_event_handler) unset_event_handler;
  ucm_global_config_t* ucm_options;
};

// Loads UCX once per process and returns its functions; throws dc::Error(dcSystemError) saying why
// when libucp.so.0 (Debian: libucx0) cannot be loaded. Leaves the program's signal handlers as they
// were unless UCX_ERROR_SIGNALS or UCX_HANDLE_ERRORS asks for UCX's.
const UcxApi& ucx_api();

// Being inside UCX. At process exit UCX's own destructors run (after the exit handler registered
// when UCX was loaded) while the progress engine's thread may still be working, for example
// freeing a destroyed communicator's connections. That handler refuses new entries and waits (at
// most 2 s) for the entries in progress, so code that calls UCX from the engine holds a UcxEntry
// for the duration and does nothing when it is refused.
class UcxEntry {
 public:
  UcxEntry();
  ~UcxEntry();
  UcxEntry(const UcxEntry&) = delete;
  UcxEntry& operator=(const UcxEntry&) = delete;
  explicit operator bool() const { return admitted_; }

 private:
  bool admitted_ = false;
};

}  // namespace dc
