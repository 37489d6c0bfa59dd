// Worker threads for codec work (encoding, decoding): the progress engine hands them jobs and the
// jobs post their completions back to it, so a large encode never holds up other communicators'
// transfers. One pool per process; DEEPCOMM_CODEC_THREADS threads (default: one per two cores,
// at least 1, at most 4: a rank's codec work is mostly one job at a time, and ranks of one host
// share its cores). Idle workers sleep on a condition variable. A fork() parks every worker between
// jobs (fork_park.h); the child starts a fresh pool on first use, as the engine does.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace dc {

class CodecPool {
 public:
  static CodecPool& instance();

  // Runs job on a worker (in submission order when there is one worker).
  void submit(std::function<void()> job);
  int threads() const { return static_cast<int>(workers_.size()); }

  CodecPool(const CodecPool&) = delete;
  CodecPool& operator=(const CodecPool&) = delete;

 private:
  explicit CodecPool(int threads);
  void work();

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> jobs_;
  std::vector<std::thread> workers_;
};

// Threads a pool gets: DEEPCOMM_CODEC_THREADS when set (1..64), else the default above.
int codec_threads_setting();

}  // namespace dc
