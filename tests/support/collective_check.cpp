#include "tests/support/collective_check.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <sstream>
#include <thread>

#include "kernels/reduce.h"
#include "src/plan/plan.h"

namespace dctest {

namespace {

const dcDataType_t kTypes[] = {dcInt8,    dcUint8,   dcInt32,   dcUint32,   dcInt64,      dcUint64,
                               dcFloat16, dcFloat32, dcFloat64, dcBfloat16, dcFloat8e4m3, dcFloat8e5m2};
const dcRedOp_t kOps[] = {dcSum, dcProd, dcMax, dcMin, dcAvg};
const dcCollective_t kCollectives[] = {dcCollAllReduce, dcCollBroadcast,     dcCollReduce,
                                       dcCollAllGather, dcCollReduceScatter, dcCollAlltoAll,
                                       dcCollGather,    dcCollScatter,       dcCollSend};

bool is_float(dcDataType_t t) {
  return t == dcFloat16 || t == dcFloat32 || t == dcFloat64 || t == dcBfloat16 || t == dcFloat8e4m3 ||
         t == dcFloat8e5m2;
}
bool is_signed_int(dcDataType_t t) { return t == dcInt8 || t == dcInt32 || t == dcInt64; }

double epsilon(dcDataType_t t) {
  switch (t) {
    case dcFloat16: return std::ldexp(1.0, -10);
    case dcBfloat16: return std::ldexp(1.0, -7);
    case dcFloat8e4m3: return std::ldexp(1.0, -3);
    case dcFloat8e5m2: return std::ldexp(1.0, -2);
    case dcFloat32: return std::ldexp(1.0, -23);
    case dcFloat64: return std::ldexp(1.0, -52);
    default: return 0;
  }
}

void store(dcDataType_t t, void* buf, size_t i, double v) {
  switch (t) {
    case dcInt8: static_cast<int8_t*>(buf)[i] = static_cast<int8_t>(static_cast<int64_t>(v)); return;
    case dcUint8: static_cast<uint8_t*>(buf)[i] = static_cast<uint8_t>(static_cast<int64_t>(v)); return;
    case dcInt32: static_cast<int32_t*>(buf)[i] = static_cast<int32_t>(static_cast<int64_t>(v)); return;
    case dcUint32: static_cast<uint32_t*>(buf)[i] = static_cast<uint32_t>(static_cast<int64_t>(v)); return;
    case dcInt64: static_cast<int64_t*>(buf)[i] = static_cast<int64_t>(v); return;
    case dcUint64: static_cast<uint64_t*>(buf)[i] = static_cast<uint64_t>(static_cast<int64_t>(v)); return;
    case dcFloat16: static_cast<uint16_t*>(buf)[i] = dc::float_to_half(static_cast<float>(v)); return;
    case dcFloat32: static_cast<float*>(buf)[i] = static_cast<float>(v); return;
    case dcFloat64: static_cast<double*>(buf)[i] = v; return;
    case dcBfloat16: static_cast<uint16_t*>(buf)[i] = dc::float_to_bf16(static_cast<float>(v)); return;
    case dcFloat8e4m3: static_cast<uint8_t*>(buf)[i] = dc::float_to_fp8e4m3(static_cast<float>(v)); return;
    case dcFloat8e5m2: static_cast<uint8_t*>(buf)[i] = dc::float_to_fp8e5m2(static_cast<float>(v)); return;
    default: return;
  }
}

double load(dcDataType_t t, const void* buf, size_t i) {
  switch (t) {
    case dcInt8: return static_cast<const int8_t*>(buf)[i];
    case dcUint8: return static_cast<const uint8_t*>(buf)[i];
    case dcInt32: return static_cast<const int32_t*>(buf)[i];
    case dcUint32: return static_cast<const uint32_t*>(buf)[i];
    case dcInt64: return static_cast<double>(static_cast<const int64_t*>(buf)[i]);
    case dcUint64: return static_cast<double>(static_cast<const uint64_t*>(buf)[i]);
    case dcFloat16: return dc::half_to_float(static_cast<const uint16_t*>(buf)[i]);
    case dcFloat32: return static_cast<const float*>(buf)[i];
    case dcFloat64: return static_cast<const double*>(buf)[i];
    case dcBfloat16: return dc::bf16_to_float(static_cast<const uint16_t*>(buf)[i]);
    case dcFloat8e4m3: return dc::fp8e4m3_to_float(static_cast<const uint8_t*>(buf)[i]);
    case dcFloat8e5m2: return dc::fp8e5m2_to_float(static_cast<const uint8_t*>(buf)[i]);
    default: return 0;
  }
}

// The raw integer of element i, sign- or zero-extended, for exact integer references.
uint64_t load_bits(dcDataType_t t, const void* buf, size_t i) {
  switch (t) {
    case dcInt8: return static_cast<uint64_t>(static_cast<int64_t>(static_cast<const int8_t*>(buf)[i]));
    case dcUint8: return static_cast<const uint8_t*>(buf)[i];
    case dcInt32: return static_cast<uint64_t>(static_cast<int64_t>(static_cast<const int32_t*>(buf)[i]));
    case dcUint32: return static_cast<const uint32_t*>(buf)[i];
    case dcInt64: return static_cast<uint64_t>(static_cast<const int64_t*>(buf)[i]);
    case dcUint64: return static_cast<const uint64_t*>(buf)[i];
    default: return 0;
  }
}

// Truncates a wrapped 64-bit value to the datatype and returns it as a double of that type's value.
double wrap(dcDataType_t t, uint64_t v) {
  switch (t) {
    case dcInt8: return static_cast<int8_t>(v);
    case dcUint8: return static_cast<uint8_t>(v);
    case dcInt32: return static_cast<int32_t>(v);
    case dcUint32: return static_cast<uint32_t>(v);
    case dcInt64: return static_cast<double>(static_cast<int64_t>(v));
    default: return static_cast<double>(v);
  }
}

// Input value of rank r, element i. Small numbers keep every type's reference meaningful; products
// stay within fp8 range; negative values only for signed types.
double input_value(const Case& c, int r, size_t i) {
  const bool neg = is_signed_int(c.datatype) || is_float(c.datatype);
  if (!dc::is_reduction(c.collective)) return static_cast<double>((r * 7 + i * 3) % 13);
  switch (c.op) {
    case dcProd: {
      static const double f[] = {1, 2, 1, -1, 1};
      double v = f[(r + i) % 5];
      return (v < 0 && !neg) ? 1 : v;
    }
    case dcMax:
    case dcMin: {
      double v = static_cast<double>((r * 5 + i * 3) % 11) - 5;
      return neg ? v : v + 5;
    }
    default: {
      double v = static_cast<double>((r * 3 + i * 7) % 5) - 1;
      return neg ? v : v + 1;
    }
  }
}

size_t input_elements(const Case& c, int rank, int n) {
  switch (c.collective) {
    case dcCollReduceScatter:
    case dcCollAlltoAll: return c.count * n;
    case dcCollScatter: return rank == c.root ? c.count * n : 0;
    default: return c.count;
  }
}

size_t output_elements(const Case& c, int rank, int n) {
  switch (c.collective) {
    case dcCollAllGather:
    case dcCollAlltoAll: return c.count * n;
    case dcCollGather: return rank == c.root ? c.count * n : 0;
    case dcCollReduce: return rank == c.root ? c.count : 0;
    default: return c.count;
  }
}

// Typed input buffer of rank r, as that rank holds it.
std::vector<uint8_t> typed_input(const Case& c, int r, int n) {
  const size_t es = dc::datatype_size(c.datatype);
  const size_t elems = c.collective == dcCollScatter ? c.count * n : input_elements(c, r, n);
  std::vector<uint8_t> buf(elems * es);
  for (size_t i = 0; i < elems; ++i) store(c.datatype, buf.data(), i, input_value(c, r, i));
  return buf;
}

// Reduces element `index` of every rank's input; returns the expected value and tolerance.
void reduce_reference(const Case& c, const std::vector<std::vector<uint8_t>>& inputs, size_t index, double* expected,
                      double* tolerance) {
  const dcDataType_t t = c.datatype;
  const int n = static_cast<int>(inputs.size());
  if (!is_float(t)) {
    uint64_t acc = load_bits(t, inputs[0].data(), index);
    double best = load(t, inputs[0].data(), index);
    for (int r = 1; r < n; ++r) {
      uint64_t v = load_bits(t, inputs[r].data(), index);
      double d = load(t, inputs[r].data(), index);
      if (c.op == dcSum || c.op == dcAvg) acc += v;
      if (c.op == dcProd) acc *= v;
      if (c.op == dcMax) best = std::max(best, d);
      if (c.op == dcMin) best = std::min(best, d);
    }
    *tolerance = 0;
    if (c.op == dcMax || c.op == dcMin) *expected = best;
    else if (c.op == dcAvg) *expected = std::trunc(wrap(t, acc) / n);
    else *expected = wrap(t, acc);
    return;
  }
  double acc = load(t, inputs[0].data(), index), magnitude = std::fabs(acc);
  for (int r = 1; r < n; ++r) {
    double v = load(t, inputs[r].data(), index);
    magnitude += std::fabs(v);
    if (c.op == dcSum || c.op == dcAvg) acc += v;
    if (c.op == dcProd) acc *= v;
    if (c.op == dcMax) acc = std::max(acc, v);
    if (c.op == dcMin) acc = std::min(acc, v);
  }
  if (c.op == dcAvg) acc /= n, magnitude /= n;
  if (c.op == dcProd) magnitude = std::fabs(acc);
  *expected = acc;
  *tolerance = (c.op == dcMax || c.op == dcMin) ? 0 : epsilon(t) * n * magnitude + 1e-300;
}

uint64_t fnv(const uint8_t* p, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

}  // namespace

std::string Case::describe() const {
  std::ostringstream s;
  s << "collective=" << collective << " type=" << dc::datatype_name(datatype);
  if (dc::is_reduction(collective)) s << " op=" << dc::redop_name(op);
  s << " count=" << count << (in_place ? " in-place" : " out-of-place") << " root=" << root;
  return s.str();
}

std::vector<Case> full_matrix(int nranks, const std::vector<size_t>& counts) {
  std::vector<Case> cases;
  int rotation = 0;
  for (dcCollective_t coll : kCollectives)
    for (dcDataType_t t : kTypes)
      for (dcRedOp_t op : kOps) {
        if (!dc::is_reduction(coll) && op != dcSum) continue;
        for (size_t count : counts)
          for (bool in_place : {false, true}) {
            if (coll == dcCollSend && in_place) continue;
            Case c;
            c.collective = coll;
            c.datatype = t;
            c.op = op;
            c.count = count;
            c.in_place = in_place;
            c.root = rotation++ % nranks;
            cases.push_back(c);
          }
      }
  return cases;
}

std::vector<Case> sampled_matrix(int nranks, const std::vector<size_t>& counts, size_t per_pair) {
  // For every (collective, datatype): per_pair cases drawn at random (fixed seed) from the matrix.
  std::vector<Case> all = full_matrix(nranks, counts), picked;
  std::mt19937 rng(static_cast<unsigned>(nranks) * 7919u);
  for (dcCollective_t coll : kCollectives)
    for (dcDataType_t t : kTypes) {
      std::vector<Case> of;
      for (const Case& c : all)
        if (c.collective == coll && c.datatype == t) of.push_back(c);
      std::shuffle(of.begin(), of.end(), rng);
      for (size_t i = 0; i < std::min(per_pair, of.size()); ++i) picked.push_back(of[i]);
    }
  return picked;
}

std::string run_case(dcComm_t comm, const Case& c, uint64_t* digest, size_t* wrong) {
  if (wrong) *wrong = 0;
  int rank = 0, n = 1;
  dcCommRank(comm, &rank);
  dcCommCount(comm, &n);
  const size_t es = dc::datatype_size(c.datatype);
  const size_t in_elems = input_elements(c, rank, n), out_elems = output_elements(c, rank, n);
  std::vector<uint8_t> input = typed_input(c, rank, n);
  input.resize(in_elems * es);

  // Buffers laid out as NCCL defines in-place for each collective. Guard bytes catch overruns.
  const size_t guard = 64;
  size_t out_bytes = std::max(out_elems, in_elems) * es;
  if (c.in_place && (c.collective == dcCollReduceScatter || c.collective == dcCollScatter))
    out_bytes = c.count * n * es;
  if (c.in_place && (c.collective == dcCollAllGather || c.collective == dcCollGather)) out_bytes = c.count * n * es;
  std::vector<uint8_t> out_storage(out_bytes + 2 * guard, 0xA5), in_storage(input.size() + 2 * guard, 0x5A);
  uint8_t* out = out_storage.data() + guard;
  const void* send = nullptr;
  void* recv = out;
  size_t result_offset = 0;  // where this rank's result starts in out (bytes)
  if (!c.in_place) {
    std::copy(input.begin(), input.end(), in_storage.begin() + guard);
    send = in_storage.data() + guard;
  } else {
    switch (c.collective) {
      case dcCollAllGather:
      case dcCollGather:
        std::copy(input.begin(), input.end(), out + rank * c.count * es);
        send = out + rank * c.count * es;
        break;
      case dcCollReduceScatter:
      case dcCollScatter: {
        const size_t full = c.count * n * es;
        if (c.collective == dcCollReduceScatter || rank == c.root) {
          const std::vector<uint8_t> whole = typed_input(c, rank, n);
          std::copy(whole.begin(), whole.begin() + full, out);
        }
        send = out;
        recv = out + rank * c.count * es;
        result_offset = rank * c.count * es;
        break;
      }
      default: std::copy(input.begin(), input.end(), out); send = out;
    }
  }
  if (out_elems == 0 && c.collective != dcCollScatter && !c.in_place) recv = nullptr;
  if (in_elems == 0 && !c.in_place) send = nullptr;

  dcResult_t res;
  switch (c.collective) {
    case dcCollAllReduce: res = dcAllReduce(send, recv, c.count, c.datatype, c.op, comm, nullptr); break;
    case dcCollBroadcast: res = dcBroadcast(send, recv, c.count, c.datatype, c.root, comm, nullptr); break;
    case dcCollReduce: res = dcReduce(send, recv, c.count, c.datatype, c.op, c.root, comm, nullptr); break;
    case dcCollAllGather: res = dcAllGather(send, recv, c.count, c.datatype, comm, nullptr); break;
    case dcCollReduceScatter: res = dcReduceScatter(send, recv, c.count, c.datatype, c.op, comm, nullptr); break;
    case dcCollAlltoAll: res = dcAlltoAll(send, recv, c.count, c.datatype, comm, nullptr); break;
    case dcCollGather: res = dcGather(send, recv, c.count, c.datatype, c.root, comm, nullptr); break;
    case dcCollScatter: res = dcScatter(send, recv, c.count, c.datatype, c.root, comm, nullptr); break;
    case dcCollSend: {
      const int next = (rank + 1) % n, prev = (rank + n - 1) % n;
      dcGroupStart();
      dcSend(send, c.count, c.datatype, next, comm, nullptr);
      dcRecv(recv, c.count, c.datatype, prev, comm, nullptr);
      res = dcGroupEnd();
      break;
    }
    default: return "unknown collective in test";
  }
  if (res != dcSuccess) {
    if (wrong) *wrong = std::max<size_t>(1, c.count);
    return c.describe() + ": returned " + dcGetErrorString(res) + ": " + dcGetLastError();
  }

  auto corrupted = [&](const char* what) {
    if (wrong) *wrong = 1;
    return c.describe() + ": " + what;
  };
  for (size_t g = 0; g < guard; ++g)
    if (out_storage[g] != 0xA5 || out_storage[guard + out_bytes + g] != 0xA5)
      return corrupted("wrote outside the receive buffer");
  if (!c.in_place && in_elems && std::memcmp(in_storage.data() + guard, input.data(), input.size()) != 0)
    return corrupted("modified the send buffer");

  std::vector<std::vector<uint8_t>> all;  // every rank's typed input, for the reference
  for (int r = 0; r < n; ++r) all.push_back(typed_input(c, r, n));
  const uint8_t* result = out + result_offset;
  const size_t check_elems = c.collective == dcCollSend ? c.count : output_elements(c, rank, n);
  std::string first_wrong;
  for (size_t i = 0; i < check_elems; ++i) {
    double expected = 0, tol = 0;
    switch (c.collective) {
      case dcCollAllReduce:
      case dcCollReduce: reduce_reference(c, all, i, &expected, &tol); break;
      case dcCollReduceScatter: reduce_reference(c, all, rank * c.count + i, &expected, &tol); break;
      case dcCollBroadcast: expected = load(c.datatype, all[c.root].data(), i); break;
      case dcCollAllGather:
      case dcCollGather: expected = load(c.datatype, all[i / c.count].data(), i % c.count); break;
      case dcCollAlltoAll: expected = load(c.datatype, all[i / c.count].data(), rank * c.count + i % c.count); break;
      case dcCollScatter: expected = load(c.datatype, all[c.root].data(), rank * c.count + i); break;
      case dcCollSend: expected = load(c.datatype, all[(rank + n - 1) % n].data(), i); break;
      default: break;
    }
    double got = load(c.datatype, result, i);
    if (!(std::fabs(got - expected) <= tol)) {
      if (wrong) ++*wrong;
      if (first_wrong.empty()) {
        std::ostringstream s;
        s << c.describe() << ": rank " << rank << " element " << i << " = " << got << ", expected " << expected
          << " (tolerance " << tol << ")";
        first_wrong = s.str();
      }
      if (!wrong) break;
    }
  }
  if (digest) *digest = fnv(result, check_elems * es);
  return first_wrong;
}

std::string run_as_processes(int n, const std::vector<std::pair<std::string, std::string>>& env,
                             const std::function<int(int, int, const dcUniqueId&)>& body, int timeout_s,
                             const std::vector<int>& killed_ranks) {
  dcUniqueId id;
  if (dcGetUniqueId(&id) != dcSuccess) return std::string("dcGetUniqueId: ") + dcGetLastError();
  std::vector<pid_t> pids;
  for (int r = 0; r < n; ++r) {
    pid_t pid = fork();
    if (pid == 0) {
      for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
      int code = body(r, n, id);
      std::fflush(stdout);
      std::fflush(stderr);
      _exit(code);
    }
    pids.push_back(pid);
  }
  std::string errors;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  for (int r = 0; r < n; ++r) {
    int status = 0;
    for (;;) {
      pid_t got = waitpid(pids[r], &status, WNOHANG);
      if (got == pids[r]) break;
      if (std::chrono::steady_clock::now() > deadline) {
        for (pid_t p : pids) kill(p, SIGKILL);
        waitpid(pids[r], &status, 0);
        errors += "rank " + std::to_string(r) + " timed out; ";
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    const bool should_die = std::find(killed_ranks.begin(), killed_ranks.end(), r) != killed_ranks.end();
    if (should_die) {
      if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL)
        errors +=
            "rank " + std::to_string(r) + " was to be killed but ended with status " + std::to_string(status) + "; ";
    } else if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
      errors += "rank " + std::to_string(r) + " exited " + std::to_string(WEXITSTATUS(status)) + "; ";
    } else if (WIFSIGNALED(status)) {
      errors += "rank " + std::to_string(r) + " killed by signal " + std::to_string(WTERMSIG(status)) + "; ";
    }
  }
  return errors;
}

std::string run_as_threads(int n, const std::function<std::string(int, dcComm_t)>& body) {
  std::vector<dcComm_t> comms(n, nullptr);
  if (dcCommInitAll(comms.data(), n) != dcSuccess) return std::string("dcCommInitAll: ") + dcGetLastError();
  std::vector<std::string> results(n);
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) threads.emplace_back([&, r] { results[r] = body(r, comms[r]); });
  for (auto& t : threads) t.join();
  std::string errors;
  for (int r = 0; r < n; ++r) {
    if (!results[r].empty()) errors += "rank " + std::to_string(r) + ": " + results[r] + "\n";
    if (dcCommDestroy(comms[r]) != dcSuccess) errors += std::string("destroy: ") + dcGetLastError() + "\n";
  }
  return errors;
}

}  // namespace dctest
