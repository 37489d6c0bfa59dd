// The process's device queue for the executor's local steps (device/device_queue.h): a CPU queue
// whose workers run the codec steps (encoding, decoding), so a large encode never holds up other
// communicators' transfers, while copies and reductions end on the engine thread where they are
// posted. Its completions reach the progress engine through the queue's eventfd, which the engine
// waits on in its epoll. DEEPCOMM_CODEC_THREADS workers (default: one per two cores, at least 1, at
// most 4: a rank's codec work is mostly one job at a time, and ranks of one host share its cores).
// A fork() parks every worker between jobs (device/worker_pool.h); the child starts a fresh queue
// on first use, as the engine does.
#pragma once

#include "device/device_queue.h"

namespace dc {

// Engine thread (the thread running the engine's handlers): post and feed here.
device::DeviceQueue& local_queue();

// Threads a pool gets: DEEPCOMM_CODEC_THREADS when set (1..64), else the default above.
int codec_threads_setting();

}  // namespace dc
