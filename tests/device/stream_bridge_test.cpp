// The stream bridge (src/core/stream_bridge.h) on the CPU stream queue, as separate processes over
// shared memory and TCP: a call returns before its work is done, reads its input when the stream
// reaches it and writes its output before later work on the stream; every collective and
// point-to-point call gives the same bytes as on host memory; operations of one communicator on two
// streams run in call order; a killed peer releases the stream with an asynchronous error; bad
// input is refused and enqueues nothing; a graph, or an operation left on its stream, outliving the
// bridge never blocks its stream nor writes a closed eventfd.
#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "deepcomm/deepcomm.h"
#include "device/cpu_stream_queue.h"
#include "src/core/captured_operations.h"
#include "src/core/stream_bridge.h"
#include "tests/support/collective_check.h"
#include "tests/support/forked_processes.h"
#include "tests/support/transport_probe.h"

namespace {

using dc::StreamBridge;
using dc::device::CpuStreamQueue;
using dc::device::Stream;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr int kRanks = 4;
constexpr auto kSync = 30s;  // a stream that has not drained by then is stuck

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

int complain(int rank, const std::string& what) {
  std::fprintf(stderr, "rank %d: %s\n", rank, what.c_str());
  return 1;
}

// Device memory of the emulation, filled from host bytes (cudaMemcpy: a plain copy here).
struct DeviceBytes {
  DeviceBytes(CpuStreamQueue& q, size_t bytes, uint8_t fill) : queue(q), size(bytes) {
    at = static_cast<uint8_t*>(q.alloc_device(bytes));
    std::memset(at, fill, bytes);
  }
  ~DeviceBytes() { queue.free_device(at); }
  DeviceBytes(const DeviceBytes&) = delete;
  DeviceBytes& operator=(const DeviceBytes&) = delete;
  CpuStreamQueue& queue;
  size_t size;
  uint8_t* at;
};

std::vector<uint8_t> random_bytes(size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::vector<uint8_t> bytes(n);
  for (auto& b : bytes) b = static_cast<uint8_t>(gen());
  return bytes;
}

class StreamBridgeOn : public ::testing::TestWithParam<const char*> {
 protected:
  void run(int nranks, const std::function<int(int rank, int n, dcComm_t comm)>& body,
           const std::vector<int>& killed = {}) {
    if (const std::string why = dctest::transport_unavailable(GetParam()); !why.empty()) GTEST_SKIP() << why;
    const std::string errors = dctest::run_as_processes(
        nranks, {{"DEEPCOMM_TRANSPORT", GetParam()}},
        [&](int rank, int n, const dcUniqueId& id) {
          dcComm_t comm;
          if (dcCommInitRank(&comm, n, &id, rank, nullptr) != dcSuccess) return complain(rank, dcGetLastError());
          const int failed = body(rank, n, comm);
          if (killed.empty()) dcCommDestroy(comm);
          return failed;
        },
        120, killed);
    EXPECT_EQ(errors, "");
  }
};

TEST_P(StreamBridgeOn, ACallReturnsAtOnceAndFollowsItsStream) {
  run(kRanks, [](int rank, int, dcComm_t comm) {
    const size_t count = 3001;
    std::vector<float> input(count);
    for (size_t i = 0; i < count; ++i) input[i] = 0.25f * rank + 1e-3f * static_cast<float>(i % 1013);
    CpuStreamQueue queue;
    const Stream stream{1};
    DeviceBytes in(queue, count * sizeof(float), 0), out(queue, count * sizeof(float), 0xff);
    std::vector<float> seen(count);
    {
      StreamBridge bridge(comm, queue);
      // A kernel before the call writes the input late: the call must read it when the stream gets there.
      queue.enqueue_task(stream, [&] {
        std::this_thread::sleep_for(150ms);
        std::memcpy(in.at, input.data(), in.size);
      });
      const auto start = Clock::now();
      if (bridge.all_reduce(in.at, out.at, count, dcFloat32, dcSum, stream) != dcSuccess)
        return complain(rank, dcGetLastError());
      if (ms_since(start) > 100) return complain(rank, "the call waited for its work");
      for (size_t i = 0; i < out.size; ++i)
        if (out.at[i] != 0xff) return complain(rank, "the output was written before the stream reached the call");
      // A kernel after the call sees the result.
      queue.enqueue_task(stream, [&] { std::memcpy(seen.data(), out.at, out.size); });
      if (!queue.synchronize(stream, kSync)) return complain(rank, "the stream did not drain");
      if (!bridge.async_error().ok()) return complain(rank, bridge.async_error().message);
    }
    std::vector<float> want(count);
    if (dcAllReduce(input.data(), want.data(), count, dcFloat32, dcSum, comm, nullptr) != dcSuccess)
      return complain(rank, dcGetLastError());
    if (std::memcmp(seen.data(), want.data(), out.size) != 0) return complain(rank, "result differs from host memory");
    return 0;
  });
}

// One call on device buffers and the same call on host buffers.
struct Job {
  std::string name;
  size_t in_bytes = 0, out_bytes = 0;
  bool compare = true;  // whether this rank's output is defined (a reduce's root only)
  std::function<dcResult_t(StreamBridge&, const void* in, void* out, Stream)> device;
  std::function<dcResult_t(const void* in, void* out)> host;
};

std::vector<Job> every_call(int rank, int n, dcComm_t comm) {
  std::vector<Job> jobs;
  const size_t count = 777;
  const struct {
    dcDataType_t type;
    size_t size;
    const char* name;
  } types[] = {{dcFloat32, 4, "f32"}, {dcFloat16, 2, "f16"}, {dcBfloat16, 2, "bf16"},  {dcInt32, 4, "i32"},
               {dcFloat64, 8, "f64"}, {dcUint8, 1, "u8"},    {dcFloat8e4m3, 1, "e4m3"}};
  for (const auto& t : types) {
    for (dcRedOp_t op : {dcSum, dcProd, dcMax, dcMin, dcAvg}) {
      const std::string what = std::string(t.name) + " op " + std::to_string(op);
      const dcDataType_t type = t.type;
      jobs.push_back({"all-reduce " + what, count * t.size, count * t.size, true,
                      [=](StreamBridge& b, const void* in, void* out, Stream s) {
                        return b.all_reduce(in, out, count, type, op, s);
                      },
                      [=](const void* in, void* out) { return dcAllReduce(in, out, count, type, op, comm, nullptr); }});
      jobs.push_back(
          {"reduce-scatter " + what, n * count * t.size, count * t.size, true,
           [=](StreamBridge& b, const void* in, void* out, Stream s) {
             return b.reduce_scatter(in, out, count, type, op, s);
           },
           [=](const void* in, void* out) { return dcReduceScatter(in, out, count, type, op, comm, nullptr); }});
      const int root = static_cast<int>(op) % n;
      jobs.push_back(
          {"reduce " + what, count * t.size, count * t.size, rank == root,
           [=](StreamBridge& b, const void* in, void* out, Stream s) {
             return b.reduce(in, out, count, type, op, root, s);
           },
           [=](const void* in, void* out) { return dcReduce(in, out, count, type, op, root, comm, nullptr); }});
    }
    const dcDataType_t type = t.type;
    const int root = n - 1;
    jobs.push_back({std::string("broadcast ") + t.name, count * t.size, count * t.size, true,
                    [=](StreamBridge& b, const void* in, void* out, Stream s) {
                      return b.broadcast(in, out, count, type, root, s);
                    },
                    [=](const void* in, void* out) { return dcBroadcast(in, out, count, type, root, comm, nullptr); }});
    jobs.push_back(
        {std::string("all-gather ") + t.name, count * t.size, n * count * t.size, true,
         [=](StreamBridge& b, const void* in, void* out, Stream s) { return b.all_gather(in, out, count, type, s); },
         [=](const void* in, void* out) { return dcAllGather(in, out, count, type, comm, nullptr); }});
    const int gather_root = static_cast<int>(type) % n;
    jobs.push_back(
        {std::string("gather ") + t.name, count * t.size, n * count * t.size, rank == gather_root,
         [=](StreamBridge& b, const void* in, void* out, Stream s) {
           return b.gather(in, out, count, type, gather_root, s);
         },
         [=](const void* in, void* out) { return dcGather(in, out, count, type, gather_root, comm, nullptr); }});
    jobs.push_back(
        {std::string("scatter ") + t.name, n * count * t.size, count * t.size, true,
         [=](StreamBridge& b, const void* in, void* out, Stream s) {
           return b.scatter(in, out, count, type, gather_root, s);
         },
         [=](const void* in, void* out) { return dcScatter(in, out, count, type, gather_root, comm, nullptr); }});
    jobs.push_back(
        {std::string("all-to-all ") + t.name, n * count * t.size, n * count * t.size, true,
         [=](StreamBridge& b, const void* in, void* out, Stream s) { return b.all_to_all(in, out, count, type, s); },
         [=](const void* in, void* out) { return dcAlltoAll(in, out, count, type, comm, nullptr); }});
  }
  // A ring of blocking sends and receives: even ranks send first, odd ranks receive first.
  const int next = (rank + 1) % n, previous = (rank + n - 1) % n;
  Job send{"send",
           count * 4,
           0,
           false,
           [=](StreamBridge& b, const void* in, void*, Stream s) { return b.send(in, count, dcFloat32, next, s); },
           [=](const void* in, void*) { return dcSend(in, count, dcFloat32, next, comm, nullptr); }};
  Job recv{
      "receive",
      0,
      count * 4,
      true,
      [=](StreamBridge& b, const void*, void* out, Stream s) { return b.recv(out, count, dcFloat32, previous, s); },
      [=](const void*, void* out) { return dcRecv(out, count, dcFloat32, previous, comm, nullptr); }};
  if (rank % 2 == 0) {
    jobs.push_back(send);
    jobs.push_back(recv);
  } else {
    jobs.push_back(recv);
    jobs.push_back(send);
  }
  return jobs;
}

TEST_P(StreamBridgeOn, EveryCallGivesTheBytesOfHostMemory) {
  run(kRanks, [](int rank, int n, dcComm_t comm) {
    const std::vector<Job> jobs = every_call(rank, n, comm);
    CpuStreamQueue queue;
    const Stream stream{7};
    std::vector<std::vector<uint8_t>> inputs, device_outputs;
    {
      std::vector<std::unique_ptr<DeviceBytes>> in, out;
      StreamBridge bridge(comm, queue);
      for (size_t j = 0; j < jobs.size(); ++j) {
        inputs.push_back(random_bytes(jobs[j].in_bytes, static_cast<unsigned>(j * 131 + rank)));
        in.push_back(std::make_unique<DeviceBytes>(queue, jobs[j].in_bytes, 0));
        if (jobs[j].in_bytes > 0) std::memcpy(in.back()->at, inputs.back().data(), jobs[j].in_bytes);
        out.push_back(std::make_unique<DeviceBytes>(queue, jobs[j].out_bytes, 0xab));
        if (jobs[j].device(bridge, in.back()->at, out.back()->at, stream) != dcSuccess)
          return complain(rank, jobs[j].name + ": " + dcGetLastError());
      }
      if (!queue.synchronize(stream, kSync)) return complain(rank, "the stream did not drain");
      if (!bridge.async_error().ok()) return complain(rank, bridge.async_error().message);
      for (auto& o : out) device_outputs.emplace_back(o->at, o->at + o->size);
    }
    int failures = 0;
    for (size_t j = 0; j < jobs.size(); ++j) {
      std::vector<uint8_t> host_output(jobs[j].out_bytes, 0xab);
      if (jobs[j].host(inputs[j].data(), host_output.data()) != dcSuccess)
        return complain(rank, jobs[j].name + " on host memory: " + dcGetLastError());
      if (jobs[j].compare && host_output != device_outputs[j])
        failures += complain(rank, jobs[j].name + ": device result differs from host memory");
    }
    return failures;
  });
}

TEST_P(StreamBridgeOn, OperationsOnTwoStreamsRunInCallOrder) {
  run(kRanks, [](int rank, int, dcComm_t comm) {
    const size_t count = 1 << 16;
    CpuStreamQueue queue;
    const Stream held{1}, free{2};
    std::vector<float> first(count, 1.0f + rank), second(count, 2.0f * rank);
    DeviceBytes in1(queue, count * 4, 0), out1(queue, count * 4, 0), in2(queue, count * 4, 0),
        out2(queue, count * 4, 0);
    std::memcpy(in1.at, first.data(), in1.size);
    std::memcpy(in2.at, second.data(), in2.size);
    {
      StreamBridge bridge(comm, queue);
      queue.enqueue_task(held, [] { std::this_thread::sleep_for(300ms); });
      if (bridge.all_reduce(in1.at, out1.at, count, dcFloat32, dcSum, held) != dcSuccess ||
          bridge.all_reduce(in2.at, out2.at, count, dcFloat32, dcMax, free) != dcSuccess)
        return complain(rank, dcGetLastError());
      // The second call's stream is free, but its operation comes after the first one's.
      std::this_thread::sleep_for(100ms);
      if (queue.idle(free)) return complain(rank, "the second call ended before the first one started");
      if (!queue.synchronize(held, kSync) || !queue.synchronize(free, kSync))
        return complain(rank, "the streams did not drain");
      if (!bridge.async_error().ok()) return complain(rank, bridge.async_error().message);
    }
    std::vector<float> want1(count), want2(count);
    if (dcAllReduce(first.data(), want1.data(), count, dcFloat32, dcSum, comm, nullptr) != dcSuccess ||
        dcAllReduce(second.data(), want2.data(), count, dcFloat32, dcMax, comm, nullptr) != dcSuccess)
      return complain(rank, dcGetLastError());
    if (std::memcmp(out1.at, want1.data(), out1.size) != 0 || std::memcmp(out2.at, want2.data(), out2.size) != 0)
      return complain(rank, "results differ from host memory");
    return 0;
  });
}

TEST_P(StreamBridgeOn, AKilledPeerReleasesTheStreamWithAnAsyncError) {
  const int victim = 2;
  run(3,
      [](int rank, int, dcComm_t comm) {
        if (rank == victim) raise(SIGKILL);
        const size_t count = 1 << 15;
        CpuStreamQueue queue;
        const Stream stream{3};
        DeviceBytes in(queue, count * 4, 0), out(queue, count * 4, 0);
        StreamBridge bridge(comm, queue);
        const auto start = Clock::now();
        if (bridge.all_reduce(in.at, out.at, count, dcFloat32, dcSum, stream) != dcSuccess)
          return complain(rank, dcGetLastError());
        if (!queue.synchronize(stream, kSync)) return complain(rank, "the stream stayed blocked");
        const double ms = ms_since(start);
        const dc::Status error = bridge.async_error();
        if (error.ok()) return complain(rank, "no asynchronous error");
        std::fprintf(stderr, "rank %d: released after %.0f ms: %s\n", rank, ms, error.message.c_str());
        if (ms > 2000.0 * DC_TEST_TIME_SCALE)
          return complain(rank, "released only after " + std::to_string(ms) + " ms");
        if (bridge.all_reduce(in.at, out.at, count, dcFloat32, dcSum, stream) == dcSuccess)
          return complain(rank, "a call after the failure was accepted");
        return queue.idle(stream) ? 0 : complain(rank, "a refused call enqueued work");
      },
      {victim});
}

// CUDA graphs: calls captured on a stream (a single call, and a group of two) replay many times,
// each replay reading the input a captured kernel wrote for it and giving the bytes of host memory;
// an ordinary call between the replays keeps its place; the pinned blocks go with the graph.
TEST_P(StreamBridgeOn, CapturedCallsReplayWithFreshInputsEveryTime) {
  run(kRanks, [](int rank, int n, dcComm_t comm) {
    constexpr int kReplays = 8;
    const size_t count = 5000;
    CpuStreamQueue queue;
    const Stream stream{5}, other{6};
    DeviceBytes in(queue, count * 4, 0), sum(queue, count * 4, 0), max(queue, count * 4, 0),
        gathered(queue, count * 4 * n, 0), plain_in(queue, count * 4, 0), plain_out(queue, count * 4, 0);
    auto input_of = [&](int replay) {
      std::vector<float> v(count);
      for (size_t i = 0; i < count; ++i) v[i] = 0.5f * rank + 0.01f * replay + 1e-4f * static_cast<float>(i % 977);
      return v;
    };
    std::vector<std::vector<float>> seen_sum(kReplays), seen_max(kReplays), seen_gathered(kReplays);
    int replay = 0;  // written and read by the captured tasks only, on the stream's thread
    {
      StreamBridge bridge(comm, queue);
      queue.begin_capture(stream);
      queue.enqueue_task(stream, [&] {  // the kernel that makes this replay's input
        const std::vector<float> v = input_of(replay);
        std::memcpy(in.at, v.data(), in.size);
      });
      if (bridge.all_reduce(in.at, sum.at, count, dcFloat32, dcSum, stream) != dcSuccess)
        return complain(rank, std::string("captured all-reduce: ") + dcGetLastError());
      bridge.begin_group();
      if (bridge.all_reduce(in.at, max.at, count, dcFloat32, dcMax, stream) != dcSuccess ||
          bridge.all_gather(in.at, gathered.at, count, dcFloat32, stream) != dcSuccess ||
          bridge.end_group() != dcSuccess)
        return complain(rank, std::string("captured group: ") + dcGetLastError());
      queue.enqueue_task(stream, [&] {  // the kernel that reads the results
        seen_sum[replay].assign(reinterpret_cast<float*>(sum.at), reinterpret_cast<float*>(sum.at) + count);
        seen_max[replay].assign(reinterpret_cast<float*>(max.at), reinterpret_cast<float*>(max.at) + count);
        seen_gathered[replay].assign(reinterpret_cast<float*>(gathered.at),
                                     reinterpret_cast<float*>(gathered.at) + count * n);
        ++replay;
      });
      std::shared_ptr<CpuStreamQueue::Graph> graph = queue.end_capture(stream);
      if (!queue.idle(stream)) return complain(rank, "capturing ran work");
      if (bridge.captured_operations() != 2) return complain(rank, "not two captured operations");
      std::vector<float> plain(count, 1.0f + rank);
      std::memcpy(plain_in.at, plain.data(), plain_in.size);
      for (int r = 0; r < kReplays; ++r) {
        if (!queue.launch(graph, stream).ok()) return complain(rank, "launch failed");
        // An ordinary call between two replays, on another stream: every rank makes it in the same
        // place, after replay r's operations ran and before the next replay's (one communicator's
        // operations on two streams must be ordered by the user, as with NCCL).
        if (r == kReplays / 2) {
          if (!queue.synchronize(stream, kSync)) return complain(rank, "the replays did not drain");
          if (bridge.all_reduce(plain_in.at, plain_out.at, count, dcFloat32, dcSum, other) != dcSuccess)
            return complain(rank, dcGetLastError());
          if (!queue.synchronize(other, kSync)) return complain(rank, "the ordinary call did not drain");
        }
      }
      if (!queue.synchronize(stream, kSync) || !queue.synchronize(other, kSync))
        return complain(rank, "the streams did not drain");
      if (!bridge.async_error().ok()) return complain(rank, bridge.async_error().message);
      if (replay != kReplays) return complain(rank, "replays ran: " + std::to_string(replay));
      graph.reset();  // the graph goes: its operations' blocks are freed by the bridge's thread
      const auto deadline = Clock::now() + kSync;
      while (bridge.captured_operations() != 0 && Clock::now() < deadline) std::this_thread::sleep_for(1ms);
      if (bridge.captured_operations() != 0) return complain(rank, "the graph's operations were not released");
      for (size_t i = 0; i < count; ++i)
        if (reinterpret_cast<float*>(plain_out.at)[i] != static_cast<float>(n * (n + 1) / 2))
          return complain(rank, "the ordinary call's result is wrong");
    }
    for (int r = 0; r < kReplays; ++r) {
      const std::vector<float> v = input_of(r);
      std::vector<float> want_sum(count), want_max(count), want_gathered(count * n);
      if (dcAllReduce(v.data(), want_sum.data(), count, dcFloat32, dcSum, comm, nullptr) != dcSuccess ||
          dcAllReduce(v.data(), want_max.data(), count, dcFloat32, dcMax, comm, nullptr) != dcSuccess ||
          dcAllGather(v.data(), want_gathered.data(), count, dcFloat32, comm, nullptr) != dcSuccess)
        return complain(rank, dcGetLastError());
      if (seen_sum[r] != want_sum || seen_max[r] != want_max || seen_gathered[r] != want_gathered)
        return complain(rank, "replay " + std::to_string(r) + " differs from host memory");
    }
    return 0;
  });
}

// A peer killed between two replays: the next replay's stream is released within the fault
// deadline with an asynchronous error, and a replay after that passes at once (its gates open
// without running).
TEST_P(StreamBridgeOn, AKilledPeerReleasesAReplay) {
  const int victim = 2;
  auto* past_the_all_reduce = dctest::shared_between_processes<std::atomic<int>>();
  ASSERT_NE(past_the_all_reduce, nullptr);
  run(3,
      [past_the_all_reduce](int rank, int, dcComm_t comm) {
        const size_t count = 1 << 14;
        CpuStreamQueue queue;
        const Stream stream{7};
        DeviceBytes in(queue, count * 4, 1), out(queue, count * 4, 0);
        StreamBridge bridge(comm, queue);
        queue.begin_capture(stream);
        if (bridge.all_reduce(in.at, out.at, count, dcFloat32, dcSum, stream) != dcSuccess)
          return complain(rank, dcGetLastError());
        std::shared_ptr<CpuStreamQueue::Graph> graph = queue.end_capture(stream);
        if (!queue.launch(graph, stream).ok() || !queue.synchronize(stream, kSync))
          return complain(rank, "the first replay did not drain");
        if (!bridge.async_error().ok()) return complain(rank, bridge.async_error().message);
        // Every rank looked at its first replay before the victim dies (a host all-reduce). The
        // victim dies only once the others have that all-reduce: its last message may still be on
        // its way when its own call returns.
        float one = 1.0f, ranks = 0.0f;
        if (dcAllReduce(&one, &ranks, 1, dcFloat32, dcSum, comm, nullptr) != dcSuccess)
          return complain(rank, dcGetLastError());
        if (rank == victim) {
          const auto deadline = Clock::now() + std::chrono::milliseconds(static_cast<int>(10000 * DC_TEST_TIME_SCALE));
          while (past_the_all_reduce->load() < 2 && Clock::now() < deadline)
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
          raise(SIGKILL);
        }
        past_the_all_reduce->fetch_add(1);
        const auto start = Clock::now();
        if (!queue.launch(graph, stream).ok() || !queue.synchronize(stream, kSync))
          return complain(rank, "the replay after the kill stayed blocked");
        const double ms = ms_since(start);
        if (bridge.async_error().ok()) return complain(rank, "no asynchronous error");
        std::fprintf(stderr, "rank %d: replay released after %.0f ms: %s\n", rank, ms,
                     bridge.async_error().message.c_str());
        if (ms > 2000.0 * DC_TEST_TIME_SCALE)
          return complain(rank, "released only after " + std::to_string(ms) + " ms");
        if (!queue.launch(graph, stream).ok() || !queue.synchronize(stream, kSync))
          return complain(rank, "a replay after the failure stayed blocked");
        return 0;
      },
      {victim});
}

// The eventfds this process has open.
int open_eventfds() {
  int found = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    std::error_code error;
    found += std::filesystem::read_symlink(entry.path(), error).string() == "anon_inode:[eventfd]" ? 1 : 0;
  }
  return found;
}

// A graph replayed after its bridge was destroyed (invalid usage, as with NCCL): the replay passes
// its gate without running instead of waiting for ever; the eventfd its doorbell writes stays open
// as long as the graph lives (closed, a new descriptor could take its number), and closes with the
// pinned block once the graph goes.
TEST_P(StreamBridgeOn, AGraphOutlivingItsBridgeNeverBlocksItsStream) {
  run(2, [](int rank, int n, dcComm_t comm) {
    const size_t count = 1000;
    CpuStreamQueue queue;
    const Stream stream{8};
    DeviceBytes in(queue, count * 4, 0), out(queue, count * 4, 0);
    auto fill = [&](float value) {
      for (size_t i = 0; i < count; ++i) reinterpret_cast<float*>(in.at)[i] = value;
    };
    auto bridge = std::make_unique<StreamBridge>(comm, queue);
    queue.begin_capture(stream);
    if (bridge->all_reduce(in.at, out.at, count, dcFloat32, dcSum, stream) != dcSuccess)
      return complain(rank, dcGetLastError());
    std::shared_ptr<CpuStreamQueue::Graph> graph = queue.end_capture(stream);
    fill(1.0f + rank);
    if (!queue.launch(graph, stream).ok() || !queue.synchronize(stream, kSync))
      return complain(rank, "the replay before the destruction did not drain");
    const float sum = static_cast<float>(n * (n + 1) / 2);
    if (reinterpret_cast<float*>(out.at)[count - 1] != sum) return complain(rank, "the first replay is wrong");
    dc::kept_captured_operations();  // the keeper, and its own eventfd, exist from here
    const int eventfds = open_eventfds();
    bridge.reset();
    if (open_eventfds() != eventfds) return complain(rank, "the doorbells' eventfd closed while the graph lives");
    fill(10.0f);
    for (int replay = 0; replay < 3; ++replay)
      if (!queue.launch(graph, stream).ok() || !queue.synchronize(stream, kSync))
        return complain(rank, "a replay after the bridge's destruction stayed blocked");
    for (size_t i = 0; i < count; ++i)
      if (reinterpret_cast<float*>(out.at)[i] == 10.0f * n) return complain(rank, "a replay ran without its bridge");
    if (dc::kept_captured_operations() != 1) return complain(rank, "the keeper does not hold the captured operation");
    graph.reset();  // its block is freed by the keeper's thread
    const auto deadline = Clock::now() + kSync;
    while (dc::kept_captured_operations() != 0 && Clock::now() < deadline) std::this_thread::sleep_for(1ms);
    if (dc::kept_captured_operations() != 0) return complain(rank, "the graph's operation was not released");
    return open_eventfds() == eventfds - 1 ? 0 : complain(rank, "the doorbells' eventfd outlived the graph");
  });
}

// A bridge destroyed while an operation has not left its stream (the stream held by a user's
// kernel past the bridge's grace): its gate opens, so the stream goes on once the kernel ends, and
// the doorbell it then rings writes an eventfd that is still the bridge's. The keeper holds that
// eventfd until the process exits, graph or not (closed, a new descriptor could take its number).
// One rank in a process of its own: the keeper is process-wide. Takes the bridge's grace (5 s).
TEST(StreamBridge, AnOperationLeftOnItsStreamKeepsTheEventfdOpen) {
  const std::string errors = dctest::run_as_processes(
      1, {},
      [](int rank, int n, const dcUniqueId& id) {
        dcComm_t comm;
        if (dcCommInitRank(&comm, n, &id, rank, nullptr) != dcSuccess) return complain(rank, dcGetLastError());
        const size_t count = 256;
        std::atomic<bool> kernel_may_end{false}, later_work_ran{false};  // outlive the queue's work
        CpuStreamQueue queue;
        const Stream stream{11};
        DeviceBytes in(queue, count * 4, 1), out(queue, count * 4, 0);
        queue.enqueue_task(stream, [&] {
          const auto deadline = Clock::now() + kSync;
          while (!kernel_may_end.load() && Clock::now() < deadline) std::this_thread::sleep_for(1ms);
        });
        auto fail = [&](const std::string& what) {
          kernel_may_end = true;  // the queue's destructor then need not wait for the kernel's deadline
          return complain(rank, what);
        };
        auto bridge = std::make_unique<StreamBridge>(comm, queue);
        if (bridge->all_reduce(in.at, out.at, count, dcFloat32, dcSum, stream) != dcSuccess)
          return fail(dcGetLastError());
        queue.enqueue_task(stream, [&] { later_work_ran = true; });
        dc::kept_captured_operations();  // the keeper, and its own eventfd, exist from here
        const int eventfds = open_eventfds();
        bridge.reset();
        if (open_eventfds() != eventfds) return fail("the doorbells' eventfd closed at the destruction");
        kernel_may_end = true;
        if (!queue.synchronize(stream, kSync)) return fail("the stream stayed blocked at the gate");
        if (!later_work_ran) return fail("the work after the operation did not run");
        // The doorbell rang: wait for a pass of the keeper that started after it (where a wrong
        // close would happen).
        const uint64_t passes = dc::keeper_passes();
        const auto deadline = Clock::now() + kSync;
        while (dc::keeper_passes() < passes + 2 && Clock::now() < deadline) std::this_thread::sleep_for(1ms);
        if (dc::keeper_passes() < passes + 2) return fail("the keeper made no pass after the doorbell");
        if (open_eventfds() != eventfds) return fail("the doorbells' eventfd closed before the exit");
        dcCommDestroy(comm);
        return 0;
      },
      120);
  EXPECT_EQ(errors, "");
}

INSTANTIATE_TEST_SUITE_P(Transports, StreamBridgeOn, ::testing::Values("shm", "tcp"),
                         [](const auto& info) { return dctest::test_name(info.param); });

// Threads as ranks: bad input gets dcInvalidArgument and leaves the stream untouched.
TEST(StreamBridge, BadInputIsRefusedAndEnqueuesNothing) {
  const std::string errors = dctest::run_as_threads(2, [](int, dcComm_t comm) -> std::string {
    CpuStreamQueue queue;
    const Stream stream{5};
    DeviceBytes buffer(queue, 64, 0);
    StreamBridge bridge(comm, queue);
    std::string errors;
    auto expect_refused = [&](dcResult_t result, const char* what) {
      if (result != dcInvalidArgument) errors += std::string(what) + " was not refused; ";
    };
    expect_refused(bridge.all_reduce(nullptr, buffer.at, 4, dcFloat32, dcSum, stream), "a NULL input");
    expect_refused(bridge.all_reduce(buffer.at, buffer.at, 4, static_cast<dcDataType_t>(99), dcSum, stream),
                   "an unknown datatype");
    expect_refused(bridge.all_reduce(buffer.at, buffer.at, SIZE_MAX / 2, dcFloat32, dcSum, stream),
                   "a count whose bytes overflow");
    expect_refused(bridge.broadcast(buffer.at, buffer.at, 4, dcFloat32, 2, stream), "a root out of range");
    expect_refused(bridge.send(buffer.at, 4, dcFloat32, -1, stream), "a negative peer");
    if (!queue.idle(stream)) errors += "a refused call enqueued work; ";
    return errors;
  });
  EXPECT_EQ(errors, "");
}

// Counts the pinned allocations the bridge asks its queue for.
class CountingQueue : public CpuStreamQueue {
 public:
  void* alloc_pinned(size_t bytes) override {
    ++allocations;
    return CpuStreamQueue::alloc_pinned(bytes);
  }
  std::atomic<int> allocations{0};
};

// Threads as ranks: 50 calls of one size allocate pinned memory a few times, not 50.
TEST(StreamBridge, PinnedBlocksAreReusedAcrossCalls) {
  const std::string errors = dctest::run_as_threads(2, [](int, dcComm_t comm) -> std::string {
    CountingQueue queue;
    const Stream stream{9};
    const size_t count = 1000;
    DeviceBytes in(queue, count * 4, 1), out(queue, count * 4, 0);
    {
      StreamBridge bridge(comm, queue);
      for (int call = 0; call < 50; ++call) {
        if (bridge.all_reduce(in.at, out.at, count, dcFloat32, dcSum, stream) != dcSuccess) return dcGetLastError();
        if (!queue.synchronize(stream, kSync)) return "the stream did not drain";
      }
    }
    const int allocations = queue.allocations.load();
    return allocations <= 5 ? "" : std::to_string(allocations) + " pinned allocations for 50 calls";
  });
  EXPECT_EQ(errors, "");
}

}  // namespace
