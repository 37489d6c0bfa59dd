// Short scheduling slices for threads that sleep until a peer wakes them.
//
// Linux ≥ 6.12 (EEVDF custom slices, `sched_setattr`'s `sched_runtime` for a fair task): a task
// whose slice is shorter than the running task's preempts it when it wakes (PREEMPT_SHORT). With the
// default slice (about 1.5 ms on 2 cores) a rank that a peer's message wakes while a CPU-bound
// thread runs on its core waits for the rest of that thread's slice; with a short one it runs at
// once. A short slice changes nothing else of a thread's share of the CPU: it is cut into shorter
// pieces only while others want the same core. DEEPCOMM_WAKE_SLICE_US sets it (0: leave slices
// alone). Older kernels ignore the request; it is then not made again.
#pragma once

#include <cstdint>

namespace dc {

// Gives the calling thread the short slice, for good: DeepComm's own threads when they start, and a
// caller's thread the first time it sleeps waiting for peers. Putting a longer slice back after
// each wait would cost the core: the kernel re-queues the thread with the later deadline, behind
// whatever waits for the core. Shortens only (a thread's own shorter slice stays), and costs one
// thread-local test once done for this thread.
void use_short_wake_slice();

// The calling thread's slice in nanoseconds as the kernel reports it (0 where it reports none).
uint64_t current_slice_ns();

}  // namespace dc
