#include "src/nccl/window_registry.h"

#include <iterator>
#include <mutex>
#include <string>
#include <unordered_map>

#include "base/error.h"

namespace dc::nccl {

namespace {

struct Registry {
  std::mutex mutex;
  std::unordered_map<ncclWindow_t, WindowRecord> windows;
};

// Never destroyed: a window may be deregistered by a static destructor of the program.
Registry& registry() {
  static Registry* instance = new Registry;
  return *instance;
}

}  // namespace

void remember_window(ncclWindow_t win, const WindowRecord& record) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.windows[win] = record;
}

void forget_window(ncclWindow_t win) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.windows.erase(win);
}

void forget_windows_of(ncclComm_t comm) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (auto it = r.windows.begin(); it != r.windows.end();) {
    it = it->second.comm == comm ? r.windows.erase(it) : std::next(it);
  }
}

WindowRecord window_record(ncclWindow_t win, ncclComm_t comm, const char* function) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  const auto it = r.windows.find(win);
  if (it == r.windows.end() || (comm != nullptr && it->second.comm != comm)) {
    fail(dcInvalidArgument, std::string("DeepComm: ") + function + ": not a live window" +
                                (comm != nullptr ? " of this communicator" : ""));
  }
  return it->second;
}

}  // namespace dc::nccl
