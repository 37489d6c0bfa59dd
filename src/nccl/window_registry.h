// The windows made by ncclCommWindowRegister, as the NCCL layer keeps them: the communicator that
// owns each and the buffer it covers, for ncclWinGetUserPtr and the window-pointer getters.
// Thread-safe (ranks as threads register windows concurrently).
#pragma once

#include <cstddef>

#include "deepcomm/nccl.h"

namespace dc::nccl {

struct WindowRecord {
  ncclComm_t comm = nullptr;
  void* buffer = nullptr;
  size_t size = 0;
};

void remember_window(ncclWindow_t win, const WindowRecord& record);
void forget_window(ncclWindow_t win);
// After the communicator is destroyed or aborted (its windows go with it).
void forget_windows_of(ncclComm_t comm);

// The record of win; throws dc::Error(dcInvalidArgument) when win is not a live window, or, with
// comm not NULL, not one of comm's.
WindowRecord window_record(ncclWindow_t win, ncclComm_t comm, const char* function);

}  // namespace dc::nccl
