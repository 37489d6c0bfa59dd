// A device plugin built by the tests (plugin_abi.h), with the CPU functions: steps without a stream
// go to a CPU device queue (they end inside post), steps on a stream wait in a list that poll()
// runs in post order (so the completion path through the ABI is exercised too). Its stream
// functions are the CPU stream queue's (one per process), so that the NCCL ABI's device path (and
// the GPU codec, in emulation) runs here; the tests reach the same queue through testPlugin* functions (dlsym). Built three times:
// as it should be, with TEST_PLUGIN_ABI_VERSION set to another version, and with
// TEST_PLUGIN_NO_ENTRY (no entry point at all).
#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "compression/form/wire_format.h"
#include "device/abi_step.h"
#include "device/cpu_queue.h"
#include "device/cpu_stream_queue.h"
#include "device/plugin_abi.h"

#ifndef TEST_PLUGIN_ABI_VERSION
#define TEST_PLUGIN_ABI_VERSION DEEPCOMM_DEVICE_PLUGIN_ABI_VERSION
#endif

namespace {

using dc::device::LocalStep;

struct Queue {
  dc::device::CpuQueue cpu{1};
  int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  std::vector<std::pair<LocalStep, uint64_t>> waiting;  // steps on a stream, with their tags
  std::vector<std::string> messages;                    // of the last poll's completions
  ~Queue() { close(fd); }
};

int32_t create(void** queue, char* error, size_t error_size) {
  auto* q = new Queue;
  if (q->fd < 0) {
    std::snprintf(error, error_size, "eventfd failed");
    delete q;
    return dcSystemError;
  }
  *queue = q;
  return 0;
}

void destroy(void* queue) { delete static_cast<Queue*>(queue); }

int32_t post(void* queue, const dcDeviceStep_t* step, uint64_t stream, uint64_t tag, int32_t* result) {
  auto* q = static_cast<Queue*>(queue);
  if (stream == 0) {
    const dc::device::Posted p = q->cpu.post(dc::device::local_step_of(*step), {}, {});
    *result = p.status.code;
    return 1;
  }
  q->waiting.emplace_back(dc::device::local_step_of(*step), tag);
  const uint64_t one = 1;
  [[maybe_unused]] ssize_t n = write(q->fd, &one, sizeof one);
  return 0;
}

int32_t poll(void* queue, dcDeviceCompletion_t* out, int32_t max) {
  auto* q = static_cast<Queue*>(queue);
  uint64_t count = 0;
  [[maybe_unused]] ssize_t n = read(q->fd, &count, sizeof count);
  q->messages.clear();
  q->messages.reserve(q->waiting.size());
  int32_t done = 0;
  while (done < max && done < static_cast<int32_t>(q->waiting.size())) {
    const auto& [step, tag] = q->waiting[done];
    const dc::device::Posted p = q->cpu.post(step, {}, {});
    q->messages.push_back(p.status.message);
    out[done] = dcDeviceCompletion_t{tag, p.status.code, p.status.ok() ? nullptr : q->messages.back().c_str()};
    ++done;
  }
  q->waiting.erase(q->waiting.begin(), q->waiting.begin() + done);
  if (!q->waiting.empty()) {
    const uint64_t one = 1;
    n = write(q->fd, &one, sizeof one);
  }
  return done;
}

int32_t completion_fd(void* queue) { return static_cast<Queue*>(queue)->fd; }

// The process's emulated device: never destroyed, so no lane is joined at exit.
dc::device::CpuStreamQueue& streams() {
  static auto* queue = new dc::device::CpuStreamQueue;
  return *queue;
}

thread_local std::string t_last_error;

int32_t result_of(const dc::Status& status) {
  if (!status.ok()) t_last_error = status.message;
  return status.code;
}

void* alloc_pinned(void*, uint64_t bytes) { return streams().alloc_pinned(bytes); }
void free_pinned(void*, void* pointer) { streams().free_pinned(pointer); }
void* alloc_device(void*, uint64_t bytes) { return streams().alloc_device(bytes); }
int32_t free_device(void*, void* pointer) {
  if (!streams().is_device_memory(pointer)) {
    t_last_error = "not device memory of this plugin";
    return dcInvalidArgument;
  }
  streams().free_device(pointer);
  return dcSuccess;
}
int32_t is_device_memory(void*, const void* pointer) { return streams().is_device_memory(pointer) ? 1 : 0; }
int32_t enqueue_copy(void*, uint64_t stream, void* dst, const void* src, uint64_t bytes) {
  return result_of(streams().enqueue_copy({stream}, dst, src, bytes));
}
int32_t enqueue_doorbell(void*, uint64_t stream, uint64_t* word, uint64_t value, int32_t wake_fd) {
  return result_of(streams().enqueue_doorbell({stream}, word, value, wake_fd));
}
int32_t enqueue_gate(void*, uint64_t stream, const uint64_t* word, uint64_t value) {
  return result_of(streams().enqueue_gate({stream}, word, value));
}
void open_gate(void*, uint64_t* word, uint64_t value) { streams().open_gate(word, value); }
int32_t stream_capturing(void*, uint64_t stream) { return streams().capturing({stream}) ? 1 : 0; }
const char* last_error(void*) { return t_last_error.c_str(); }
int32_t enqueue_gate_reset(void*, uint64_t stream, uint64_t* word, uint64_t value, uint64_t reset) {
  return result_of(streams().enqueue_gate_reset({stream}, word, value, reset));
}
int32_t retain_until_graph_destroyed(void*, uint64_t stream, void (*release)(void*), void* arg) {
  return result_of(streams().retain_until_graph_destroyed({stream}, [release, arg] { release(arg); }));
}

uint64_t encode_workspace_bytes(void*, const dcDeviceEncode_t* encode) {
  dc::Status status;
  const uint64_t bytes = streams().encode_workspace_bytes(*encode, &status);
  result_of(status);
  return bytes;
}
// Encodes enqueued, and what follows each: nothing (0), a flip of its message's header checksum
// (1: a peer that sends a corrupt message) or a result of 0 bytes (2: an encode that failed).
std::atomic<int> g_encodes{0};
std::atomic<int> g_corrupt_encodes{0};

int32_t enqueue_encode(void*, uint64_t stream, const dcDeviceEncode_t* encode) {
  const int32_t result = result_of(streams().enqueue_encode({stream}, *encode));
  if (result != 0) return result;
  ++g_encodes;
  if (g_corrupt_encodes == 1)
    streams().enqueue_task({stream},
                           [message = encode->message] { message[dc::compression::wire::kHeaderCrcOffset] ^= 0x5a; });
  if (g_corrupt_encodes == 2) streams().enqueue_task({stream}, [result = encode->result] { result[0] = 0; });
  return result;
}

uint64_t decode_workspace_bytes(void*, const dcDeviceDecode_t* decode) {
  dc::Status status;
  const uint64_t bytes = streams().decode_workspace_bytes(*decode, &status);
  result_of(status);
  return bytes;
}
int32_t enqueue_decode(void*, uint64_t stream, const dcDeviceDecode_t* decode) {
  return result_of(streams().enqueue_decode({stream}, *decode));
}
int32_t enqueue_step(void*, uint64_t stream, const dcDeviceStep_t* step) {
  return result_of(streams().enqueue_step({stream}, *step));
}

const dcDevicePlugin_t kPlugin = {TEST_PLUGIN_ABI_VERSION,
                                  sizeof(dcDevicePlugin_t),
                                  "cpu-test",
                                  DEEPCOMM_DEVICE_PLUGIN_ENDS_ELEMENT_STEPS_AT_POST,
                                  create,
                                  destroy,
                                  post,
                                  poll,
                                  completion_fd,
                                  alloc_pinned,
                                  free_pinned,
                                  alloc_device,
                                  free_device,
                                  is_device_memory,
                                  enqueue_copy,
                                  enqueue_doorbell,
                                  enqueue_gate,
                                  open_gate,
                                  stream_capturing,
                                  last_error,
                                  enqueue_gate_reset,
                                  retain_until_graph_destroyed,
                                  encode_workspace_bytes,
                                  enqueue_encode,
                                  decode_workspace_bytes,
                                  enqueue_decode,
                                  enqueue_step};

}  // namespace

// What a test does with CUDA's runtime on a real device: cudaStreamSynchronize (1 when the stream
// drained within timeout_ms), cudaStreamQuery (1 when idle), a kernel that keeps the stream busy
// for a while, and graphs: cudaStreamBeginCapture, cudaStreamEndCapture (a graph number),
// cudaGraphLaunch and cudaGraphExecDestroy.
extern "C" DEEPCOMM_DEVICE_PLUGIN_EXPORT int testPluginSynchronize(uint64_t stream, int timeout_ms) {
  return streams().synchronize({stream}, std::chrono::milliseconds(timeout_ms)) ? 1 : 0;
}
extern "C" DEEPCOMM_DEVICE_PLUGIN_EXPORT int testPluginIdle(uint64_t stream) {
  return streams().idle({stream}) ? 1 : 0;
}
// The GPU codec's encodes enqueued so far; from now on, what follows each (g_corrupt_encodes).
extern "C" DEEPCOMM_DEVICE_PLUGIN_EXPORT int testPluginEncodes() { return g_encodes; }
extern "C" DEEPCOMM_DEVICE_PLUGIN_EXPORT void testPluginCorruptEncodes(int how) { g_corrupt_encodes = how; }
extern "C" DEEPCOMM_DEVICE_PLUGIN_EXPORT void testPluginBusy(uint64_t stream, int milliseconds) {
  streams().enqueue_task({stream},
                         [milliseconds] { std::this_thread::sleep_for(std::chrono::milliseconds(milliseconds)); });
}

namespace {

std::mutex& graphs_mutex() {
  static std::mutex mutex;
  return mutex;
}
std::map<int, std::shared_ptr<dc::device::CpuStreamQueue::Graph>>& graphs() {
  static std::map<int, std::shared_ptr<dc::device::CpuStreamQueue::Graph>> graphs;
  return graphs;
}

}  // namespace

extern "C" DEEPCOMM_DEVICE_PLUGIN_EXPORT void testPluginBeginCapture(uint64_t stream) {
  streams().begin_capture({stream});
}
extern "C" DEEPCOMM_DEVICE_PLUGIN_EXPORT int testPluginEndCapture(uint64_t stream) {
  std::lock_guard<std::mutex> lock(graphs_mutex());
  const int number = static_cast<int>(graphs().size()) + 1;
  graphs()[number] = streams().end_capture({stream});
  return number;
}
extern "C" DEEPCOMM_DEVICE_PLUGIN_EXPORT int testPluginLaunch(int graph, uint64_t stream) {
  std::lock_guard<std::mutex> lock(graphs_mutex());
  auto found = graphs().find(graph);
  return found != graphs().end() && found->second && streams().launch(found->second, {stream}).ok() ? 1 : 0;
}
extern "C" DEEPCOMM_DEVICE_PLUGIN_EXPORT void testPluginDestroyGraph(int graph) {
  std::shared_ptr<dc::device::CpuStreamQueue::Graph> gone;
  {
    std::lock_guard<std::mutex> lock(graphs_mutex());
    gone = std::move(graphs()[graph]);
  }
}

#ifndef TEST_PLUGIN_NO_ENTRY
extern "C" DEEPCOMM_DEVICE_PLUGIN_EXPORT const dcDevicePlugin_t* deepcommDevicePlugin() { return &kPlugin; }
#else
extern "C" DEEPCOMM_DEVICE_PLUGIN_EXPORT int deepcommSomethingElse() { return kPlugin.abi_version; }
#endif
