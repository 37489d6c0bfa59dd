#include "base/wake_slice.h"

#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>

#include "base/config_table.h"
#include "base/settings.h"

namespace dc {

namespace {

// The kernel's struct sched_attr (glibc 2.36 declares no wrapper).
struct SchedAttr {
  uint32_t size;
  uint32_t sched_policy;
  uint64_t sched_flags;
  int32_t sched_nice;
  uint32_t sched_priority;
  uint64_t sched_runtime;  // a fair task's slice
  uint64_t sched_deadline;
  uint64_t sched_period;
  uint32_t sched_util_min;
  uint32_t sched_util_max;
};

constexpr uint64_t kResetOnFork = 0x01;  // SCHED_FLAG_RESET_ON_FORK, the one flag kept on a set

// Whether the kernel keeps a fair task's slice, learnt from the first change: when it does not,
// no further system calls.
enum class Support { Unknown, Yes, No };
std::atomic<Support> g_support{Support::Unknown};

uint64_t wanted_slice_ns() {
  // The kernel keeps slices of 100 us to 100 ms.
  static const uint64_t us = static_cast<uint64_t>(config::integer(settings::kDeepcommWakeSliceUs));
  return us == 0 ? 0 : std::max<uint64_t>(us, 100) * 1000;
}

bool get_attr(SchedAttr& attr) {
  std::memset(&attr, 0, sizeof attr);
  return syscall(SYS_sched_getattr, 0, &attr, sizeof attr, 0) == 0;
}

// Sets the slice of a fair (SCHED_OTHER, SCHED_BATCH) thread when it is longer, keeping its policy
// and nice value; real-time and idle threads are left alone.
void shorten_slice(uint64_t slice_ns) {
  if (slice_ns == 0 || g_support.load(std::memory_order_relaxed) == Support::No) return;
  SchedAttr attr;
  if (!get_attr(attr) || (attr.sched_policy != SCHED_OTHER && attr.sched_policy != SCHED_BATCH)) return;
  if (attr.sched_runtime != 0 && attr.sched_runtime <= slice_ns) return;
  attr.size = sizeof attr;
  attr.sched_flags &= kResetOnFork;
  attr.sched_runtime = slice_ns;
  if (syscall(SYS_sched_setattr, 0, &attr, 0) != 0) return;
  if (g_support.load(std::memory_order_relaxed) == Support::Unknown) {
    SchedAttr now;
    const bool kept = get_attr(now) && now.sched_runtime == slice_ns;  // before 6.12 it is not
    g_support.store(kept ? Support::Yes : Support::No, std::memory_order_relaxed);
  }
}

}  // namespace

void use_short_wake_slice() {
  thread_local bool done = false;
  if (done) return;
  done = true;
  shorten_slice(wanted_slice_ns());
}

uint64_t current_slice_ns() {
  SchedAttr attr;
  return get_attr(attr) ? attr.sched_runtime : 0;
}

}  // namespace dc
