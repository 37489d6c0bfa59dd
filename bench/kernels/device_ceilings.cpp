// What a device can do at best, measured through the device plugin (the road DeepComm's own calls
// take), for the device check to set its GPU figures against (docs/gpu.md):
//  - copies device to device (the memory ceiling: a kernel's traffic is a fraction of the copy's
//    read + write traffic), host to device and device to host through pinned memory (the ceiling
//    of the stream bridge's staging);
//  - the plugin's float32 sum on a stream (dst = a + b: three bytes of traffic per byte of dst),
//    beside the copy;
//  - the doorbell-to-gate round trip: the host opens a gate, the stream passes it and rings a
//    doorbell, the host sees the doorbell. The stream bridge pays it once per operation. Measured
//    twice: with the host blocked on the doorbell's eventfd, as the bridge's thread is, and with
//    the host spinning on the doorbell word (the memops alone; it yields every 256 looks).
// Every result is checked: the copies' and the sum's bytes, each doorbell's value. Where the plugin
// cannot start (no GPU, no driver) the program prints "skipped:" and why, and exits 0.
//
//   device_ceilings [--bytes N] [--iters N] [--round-trips N]
//   (the plugin: DEEPCOMM_DEVICE_PLUGIN, else libdeepcomm-cuda.so)
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/error.h"
#include "base/event_fd.h"
#include "device/plugin_loader.h"
#include "device/plugin_stream_queue.h"

namespace {

using Clock = std::chrono::steady_clock;
using dc::device::Stream;

struct Options {
  uint64_t bytes = uint64_t(256) << 20;
  int iterations = 20;  // operations per timed batch
  int round_trips = 1000;
};

[[noreturn]] void usage(const std::string& why) {
  std::fprintf(stderr,
               "device_ceilings: %s\n"
               "usage: device_ceilings [--bytes N (a multiple of 4)] [--iters N] [--round-trips N]\n",
               why.c_str());
  std::exit(2);
}

Options parse_options(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) usage(a + " needs a value");
    const std::string v = argv[++i];
    char* end = nullptr;
    const unsigned long long n = std::strtoull(v.c_str(), &end, 10);
    if (v.empty() || *end != '\0' || n == 0) usage(a + " takes a positive whole number, not '" + v + "'");
    if (a == "--bytes") o.bytes = n;
    else if (a == "--iters") o.iterations = int(std::min(n, 1000ull));
    else if (a == "--round-trips") o.round_trips = int(std::min(n, 1000000ull));
    else usage("unknown option " + a);
  }
  if (o.bytes % 4 != 0) usage("--bytes must be a multiple of 4 (float32 elements)");
  return o;
}

void check(const dc::Status& status) {
  if (!status.ok()) dc::fail(status.code, status.message);
}

uint64_t load(const uint64_t* word) { return __atomic_load_n(word, __ATOMIC_ACQUIRE); }

// The values the sum's inputs hold: small integers and halves, so every sum is exact.
float a_value(uint64_t i) { return float(i % 1024); }
float b_value(uint64_t i) { return float((i * 7) % 512) * 0.5f; }

class Ceilings {
 public:
  Ceilings(std::unique_ptr<dc::device::PluginStreamQueue> queue, const Options& o) : o_(o), queue_(std::move(queue)) {
    for (void*& p : device_) {
      dc::Status status;
      p = queue_->alloc_device(o_.bytes, &status);
      check(status);
    }
    host_ = static_cast<float*>(queue_->alloc_pinned(o_.bytes));
    words_ = static_cast<uint64_t*>(queue_->alloc_pinned(3 * sizeof(uint64_t)));  // doorbell, bell, gate
    if (!host_ || !words_) dc::fail(dcSystemError, "no pinned memory");
    std::memset(words_, 0, 3 * sizeof(uint64_t));
  }
  ~Ceilings() {
    for (void* p : device_)
      if (p) queue_->free_device(p);
    if (host_) queue_->free_pinned(host_);
    if (words_) queue_->free_pinned(words_);
  }
  Ceilings(const Ceilings&) = delete;
  Ceilings& operator=(const Ceilings&) = delete;

  void run() {
    const uint64_t n = o_.bytes / 4;
    // a and b on the device, filled from pinned memory.
    for (uint64_t i = 0; i < n; ++i) host_[i] = a_value(i);
    const double h2d = seconds_per_batch([&] { check(queue_->enqueue_copy(stream_, device_[0], host_, o_.bytes)); });
    for (uint64_t i = 0; i < n; ++i) host_[i] = b_value(i);
    check(queue_->enqueue_copy(stream_, device_[1], host_, o_.bytes));
    const double d2d =
        seconds_per_batch([&] { check(queue_->enqueue_copy(stream_, device_[2], device_[0], o_.bytes)); });
    const double d2h = seconds_per_batch([&] { check(queue_->enqueue_copy(stream_, host_, device_[2], o_.bytes)); });
    expect_on_host("the device-to-device copy", [](uint64_t i) { return a_value(i); });
    const dcDeviceStep_t sum{dcDeviceStepReduce, dcFloat32, dcSum, 0, device_[2], device_[0], device_[1], n, {}};
    const double reduce = seconds_per_batch([&] { check(queue_->enqueue_step(stream_, sum)); });
    check(queue_->enqueue_copy(stream_, host_, device_[2], o_.bytes));
    synchronize();
    expect_on_host("the float32 sum", [](uint64_t i) { return a_value(i) + b_value(i); });

    const double gb = double(o_.bytes) * 1e-9;
    std::printf("copy d2d: %.1f GB/s copied, %.1f GB/s of traffic (read + write)\n", gb / d2d, 2 * gb / d2d);
    std::printf("copy h2d: %.1f GB/s (pinned)\n", gb / h2d);
    std::printf("copy d2h: %.1f GB/s (pinned)\n", gb / d2h);
    std::printf("sum float32: %.1f GB/s of traffic (dst + a + b), %.2f of the d2d copy's traffic\n", 3 * gb / reduce,
                (3 * gb / reduce) / (2 * gb / d2d));
    round_trips(false);
    round_trips(true);
  }

 private:
  // The median over three batches of o_.iterations operations each, per operation, from the
  // first enqueue to the doorbell behind the last (one operation first, untimed).
  template <class Enqueue>
  double seconds_per_batch(Enqueue enqueue) {
    enqueue();
    synchronize();
    std::vector<double> batches;
    for (int b = 0; b < 3; ++b) {
      const auto start = Clock::now();
      for (int i = 0; i < o_.iterations; ++i) enqueue();
      synchronize();
      batches.push_back(std::chrono::duration<double>(Clock::now() - start).count() / o_.iterations);
    }
    std::sort(batches.begin(), batches.end());
    return batches[1];
  }

  void synchronize() {
    check(queue_->enqueue_doorbell(stream_, &words_[0], ++rings_, wake_.fd()));
    wait_for(&words_[0], rings_, false);
  }

  // Waits until *word >= value: blocked on the eventfd the doorbells write, or spinning on the word.
  void wait_for(const uint64_t* word, uint64_t value, bool spin) const {
    const auto deadline = Clock::now() + std::chrono::minutes(1);
    for (uint64_t looks = 0; load(word) < value; ++looks) {
      if ((looks & 255) == 0) {
        if (Clock::now() > deadline) dc::fail(dcSystemError, "the device stream hangs (no doorbell within a minute)");
        // A spinning host lets a thread that shares its core run now and then (the CPU stream
        // queue's, in the test); a GPU machine's idle cores make this a short system call.
        if (spin) sched_yield();
      }
      if (!spin) wake_.wait_and_drain(100);
    }
  }

  template <class Expected>
  void expect_on_host(const char* what, Expected expected) const {
    for (uint64_t i = 0; i < o_.bytes / 4; ++i)
      if (host_[i] != expected(i))
        dc::fail(dcInternalError, std::string(what) + " is wrong at element " + std::to_string(i) + ": " +
                                      std::to_string(host_[i]) + " for " + std::to_string(expected(i)));
  }

  // Each round trip: the stream waits at a gate, then rings a doorbell; the host opens the gate
  // and waits for that doorbell. Both are enqueued before the clock starts.
  void round_trips(bool spin) {
    uint64_t* bell = &words_[1];
    uint64_t* gate = &words_[2];
    std::vector<double> micros;
    for (int i = 0; i < o_.round_trips; ++i) {
      const uint64_t value = ++trips_;
      check(queue_->enqueue_gate(stream_, gate, value));
      check(queue_->enqueue_doorbell(stream_, bell, value, wake_.fd()));
      const auto start = Clock::now();
      queue_->open_gate(gate, value);
      wait_for(bell, value, spin);
      micros.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
    }
    wake_.drain();
    std::sort(micros.begin(), micros.end());
    std::printf("round trip, host %s: median %.1f us, p90 %.1f us, min %.1f us (%d round trips)\n",
                spin ? "spinning on the word" : "blocked on the eventfd", micros[micros.size() / 2],
                micros[micros.size() * 9 / 10], micros.front(), o_.round_trips);
  }

  const Options o_;
  std::unique_ptr<dc::device::PluginStreamQueue> queue_;
  void* device_[3] = {};  // a, b, and the copies' and the sum's destination
  float* host_ = nullptr;
  uint64_t* words_ = nullptr;
  uint64_t rings_ = 0;
  uint64_t trips_ = 0;
  const dc::EventFd wake_{"device_ceilings' stream"};
  const Stream stream_{1};
};

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse_options(argc, argv);
  try {
    const char* library = std::getenv("DEEPCOMM_DEVICE_PLUGIN");
    const dc::device::DevicePlugin plugin =
        dc::device::load_device_plugin(library && *library ? library : dc::device::kCudaPluginLibrary);
    std::unique_ptr<dc::device::PluginStreamQueue> queue;
    try {
      queue = std::make_unique<dc::device::PluginStreamQueue>(plugin);
    } catch (const dc::Error& e) {  // no device, or no driver: the plugin says which
      std::printf("device_ceilings: skipped: %s\n", e.what());
      return 0;
    }
    std::printf("device_ceilings: plugin %s, %llu bytes, %d operations a batch\n", plugin.api->name,
                static_cast<unsigned long long>(o.bytes), o.iterations);
    Ceilings(std::move(queue), o).run();
  } catch (const dc::Error& e) {
    std::fprintf(stderr, "device_ceilings: %s\n", e.what());
    return 1;
  }
  return 0;
}
