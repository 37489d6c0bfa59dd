#include "bench/collectives/perf_driver.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench/collectives/perf_options.h"
#include "bench/collectives/perf_report.h"
#include "tests/support/collective_check.h"

namespace dcbench {

namespace {

size_t elem_size(dcDataType_t t) {
  static const size_t sizes[] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1};
  return sizes[t];
}

dcResult_t issue(const CollectiveSpec& spec, const void* send, void* recv, size_t count, dcDataType_t t, dcRedOp_t op,
                 int root, dcComm_t comm, int rank, int n) {
  switch (spec.collective) {
    case dcCollAllReduce: return dcAllReduce(send, recv, count, t, op, comm, nullptr);
    case dcCollBroadcast: return dcBroadcast(send, recv, count, t, root, comm, nullptr);
    case dcCollReduce: return dcReduce(send, recv, count, t, op, root, comm, nullptr);
    case dcCollAllGather: return dcAllGather(send, recv, count, t, comm, nullptr);
    case dcCollReduceScatter: return dcReduceScatter(send, recv, count, t, op, comm, nullptr);
    case dcCollAlltoAll: return dcAlltoAll(send, recv, count, t, comm, nullptr);
    case dcCollGather: return dcGather(send, recv, count, t, root, comm, nullptr);
    case dcCollScatter: return dcScatter(send, recv, count, t, root, comm, nullptr);
    default: {
      dcGroupStart();
      dcSend(send, count, t, (rank + 1) % n, comm, nullptr);
      dcRecv(recv, count, t, (rank + n - 1) % n, comm, nullptr);
      return dcGroupEnd();
    }
  }
}

// Seconds per call of the timed loop, combined over ranks as -a asks.
double time_calls(const CollectiveSpec& spec, const Options& o, const void* send, void* recv, size_t count,
                  dcDataType_t t, dcRedOp_t op, int root, dcComm_t comm, int rank, int n, bool* failed) {
  for (int i = 0; i < o.warmup; ++i)
    if (issue(spec, send, recv, count, t, op, root, comm, rank, n) != dcSuccess) *failed = true;
  int32_t token = 0, sink = 0;  // barrier: every rank starts timing together
  dcAllReduce(&token, &sink, 1, dcInt32, dcSum, comm, nullptr);
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < o.iters; ++i)
    if (issue(spec, send, recv, count, t, op, root, comm, rank, n) != dcSuccess) *failed = true;
  double mine = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / o.iters;
  double combined = mine;
  const dcRedOp_t how = o.average == 2 ? dcMin : o.average == 3 ? dcMax : dcSum;
  dcAllReduce(&mine, &combined, 1, dcFloat64, how, comm, nullptr);
  if (o.average == 1) combined /= n;
  if (o.average == 0) dcBroadcast(&mine, &combined, 1, dcFloat64, 0, comm, nullptr);
  return combined;
}

// The algorithm of the plan DeepComm makes for the call (the "algorithm" of dcCommPlanJson), for
// the JSON results: a sweep with DEEPCOMM_ALGO sees where its algorithm did not apply. (A call
// small enough for the flat board of a one-host communicator runs there instead of its plan.)
std::string planned_algorithm(dcComm_t comm, dcCollective_t collective, size_t count, dcDataType_t type, int root) {
  size_t len = 0;
  dcCommPlanJson(comm, collective, count, type, root, nullptr, &len);  // asks for the length
  if (len == 0) return "";
  std::string json(len, '\0');
  if (dcCommPlanJson(comm, collective, count, type, root, json.data(), &len) != dcSuccess) return "";
  const std::string key = "\"algorithm\":\"";
  const size_t at = json.find(key);
  if (at == std::string::npos) return "";
  const size_t end = json.find('"', at + key.size());
  return end == std::string::npos ? "" : json.substr(at + key.size(), end - at - key.size());
}

std::vector<size_t> sizes_of(const Options& o) {
  std::vector<size_t> sizes;
  for (size_t s = o.min_bytes; s <= o.max_bytes;) {
    sizes.push_back(s);
    size_t next = o.use_factor ? static_cast<size_t>(s * o.step_factor) : s + o.step_bytes;
    if (next <= s) break;
    s = next;
  }
  return sizes;
}

}  // namespace

int run(int argc, char** argv, const CollectiveSpec& spec) {
  Options o;
  if (!parse_options(argc, argv, &o)) return 1;
  dcComm_t comm = nullptr;
  if (dcCommInitFromEnv(&comm, nullptr) != dcSuccess) {
    fprintf(stderr, "%s: cannot start: %s\n", argv[0], dcGetLastError());
    return 1;
  }
  int rank = 0, n = 1;
  dcCommRank(comm, &rank);
  dcCommCount(comm, &n);
  Report report(spec, o, comm, rank, n);
  report.header();

  std::vector<int> roots;
  if (spec.has_root && o.root < 0)
    for (int r = 0; r < n; ++r) roots.push_back(r);
  else roots.push_back(spec.has_root ? o.root : -1);
  if (spec.has_root && (roots.front() < 0 || roots.back() >= n)) {
    if (rank == 0) fprintf(stderr, "%s: root %d is out of range for %d ranks\n", argv[0], o.root, n);
    dcCommDestroy(comm);
    return 1;
  }

  bool failed = false;
  for (dcDataType_t t : o.types) {
    const size_t es = elem_size(t);
    for (dcRedOp_t op : spec.has_op ? o.ops : std::vector<dcRedOp_t>{dcSum}) {
      for (int root : roots) {
        for (size_t size : sizes_of(o)) {
          size_t send_elems = 0, recv_elems = 0, count = 0;
          spec.counts(size, es, n, &send_elems, &recv_elems, &count);
          // Plain aligned host memory, as the peers get (BENCHMARKING.md: same work).
          const size_t send_bytes = std::max<size_t>(send_elems * es, 64),
                       recv_bytes = std::max<size_t>(recv_elems * es, 64);
          auto* send = static_cast<char*>(std::aligned_alloc(64, (send_bytes + 63) / 64 * 64));
          auto* recv = static_cast<char*>(std::aligned_alloc(64, (recv_bytes + 63) / 64 * 64));
          std::memset(send, 1, send_bytes);
          std::memset(recv, 0, recv_bytes);
          // -R 1: registered as a framework registers its buffers (zero-copy where the transport can).
          void* send_handle = nullptr;
          void* recv_handle = nullptr;
          if (o.local_register && (dcCommRegister(comm, send, send_bytes, &send_handle) != dcSuccess ||
                                   dcCommRegister(comm, recv, recv_bytes, &recv_handle) != dcSuccess)) {
            fprintf(stderr, "%s: cannot register buffers: %s\n", argv[0], dcGetLastError());
            failed = true;
          }
          Row row;
          row.bytes = std::max(send_elems, recv_elems) * es;
          row.count = row.bytes / es;
          row.type = t;
          row.op = op;
          row.root = root;
          row.algorithm = planned_algorithm(comm, spec.collective, count, t, root);
          for (int half = 0; half < 2; ++half) {
            const bool in_place = half == 1;
            const void* s = send;
            void* r = recv;
            if (in_place) {
              switch (spec.collective) {
                case dcCollAllGather:
                case dcCollGather: s = recv + rank * count * es; break;
                case dcCollReduceScatter:
                case dcCollScatter: r = send + rank * count * es; break;
                case dcCollSend: row.half[half].skipped = true; continue;  // nccl-tests' N/A
                default: s = recv; break;
              }
            }
            row.half[half].seconds = time_calls(spec, o, s, r, count, t, op, root, comm, rank, n, &failed);
            if (o.check) {
              dctest::Case c;
              c.collective = spec.collective;
              c.datatype = t;
              c.op = op;
              c.count = count;
              c.in_place = in_place;
              c.root = root < 0 ? 0 : root;
              size_t wrong = 0;
              dctest::run_case(comm, c, nullptr, &wrong);
              uint64_t mine = wrong, total = 0;
              dcAllReduce(&mine, &total, 1, dcUint64, dcSum, comm, nullptr);
              row.half[half].wrong = static_cast<long long>(total);
            }
          }
          report.row(row);
          if (send_handle) dcCommDeregister(comm, send_handle);
          if (recv_handle) dcCommDeregister(comm, recv_handle);
          std::free(send);
          std::free(recv);
        }
      }
    }
  }
  const bool ok = report.footer() && !failed;
  dcCommDestroy(comm);
  return ok ? 0 : 1;
}

}  // namespace dcbench
