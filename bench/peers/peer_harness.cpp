#include "bench/peers/peer_harness.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace dcpeer {

namespace {

struct Counts {
  size_t send = 0, recv = 0, count = 0;
};

// nccl-tests' element counts for a size in bytes (the same rules as bench/collectives/specs.cpp).
Counts counts_of(Collective c, size_t bytes, int n) {
  const size_t elems = bytes / sizeof(float);
  Counts k;
  switch (c) {
    case Collective::kAllReduce:
    case Collective::kBroadcast: k.count = k.send = k.recv = elems; break;
    case Collective::kAllGather:
      k.count = k.send = elems / n;
      k.recv = k.count * n;
      break;
    case Collective::kReduceScatter:
      k.count = k.recv = elems / n;
      k.send = k.count * n;
      break;
    case Collective::kAlltoAll:
      k.count = elems / n;
      k.send = k.recv = k.count * n;
      break;
  }
  return k;
}

double bus_factor(Collective c, int n) {
  switch (c) {
    case Collective::kAllReduce: return 2.0 * (n - 1) / n;
    case Collective::kBroadcast: return 1.0;
    default: return static_cast<double>(n - 1) / n;
  }
}

// Small integers, so every sum over ranks is exact in float32 and the check can ask for equality.
float input_value(int rank, size_t i) { return static_cast<float>((rank + 1) * static_cast<int>(i % 7 + 1)); }

float expected_value(Collective c, int rank, int n, size_t count, size_t i) {
  switch (c) {
    case Collective::kAllReduce: return static_cast<float>(n * (n + 1) / 2 * static_cast<int>(i % 7 + 1));
    case Collective::kBroadcast: return input_value(0, i);
    case Collective::kAllGather: return input_value(static_cast<int>(i / count), i % count);
    case Collective::kReduceScatter: {
      const size_t j = rank * count + i;
      return static_cast<float>(n * (n + 1) / 2 * static_cast<int>(j % 7 + 1));
    }
    case Collective::kAlltoAll: return input_value(static_cast<int>(i / count), rank * count + i % count);
  }
  return 0;
}

float* aligned_floats(size_t elems) {
  const size_t bytes = (std::max<size_t>(elems * sizeof(float), 64) + 63) / 64 * 64;
  return static_cast<float*>(std::aligned_alloc(64, bytes));
}

struct Result {
  size_t bytes = 0, count = 0;
  double seconds = 0;
  long long wrong = -1;
};

void print_header(const Backend& b, const Options& o) {
  printf(
      "# %s %s: nranks %d minBytes %zu maxBytes %zu step: %g(factor) warmup iters: %d iters: %d "
      "validation: %d\n#\n",
      b.name(), collective_name(o.collective), b.nranks(), o.min_bytes, o.max_bytes, o.step_factor, o.warmup, o.iters,
      o.check);
  printf("#                                                              out-of-place\n");
  printf("#       size         count      type   redop    root     time   algbw   busbw #wrong\n");
  printf("#        (B)    (elements)                               (us)  (GB/s)  (GB/s)\n");
}

bool write_json(const std::string& path, const Options& o, int n, const std::vector<Result>& rows, double factor) {
  FILE* f = fopen(path.c_str(), "w");
  if (!f) {
    fprintf(stderr, "cannot write %s\n", path.c_str());
    return false;
  }
  const bool has_op = o.collective == Collective::kAllReduce || o.collective == Collective::kReduceScatter;
  fprintf(f, "{\n  \"benchmark\": \"%s\",\n  \"nranks\": %d,\n  \"results\": [\n", collective_name(o.collective), n);
  for (size_t i = 0; i < rows.size(); ++i) {
    const Result& r = rows[i];
    const double algbw = r.bytes / r.seconds / 1e9;
    fprintf(f,
            "    {\"size\": %zu, \"count\": %zu, \"type\": \"float\", \"redop\": \"%s\", \"root\": %d, "
            "\"out_of_place\": {\"time_us\": %.3f, \"algbw_gbs\": %.4f, \"busbw_gbs\": %.4f, \"wrong\": %lld}}%s\n",
            r.bytes, r.count, has_op ? "sum" : "none", o.collective == Collective::kBroadcast ? 0 : -1, r.seconds * 1e6,
            algbw, algbw * factor, r.wrong, i + 1 < rows.size() ? "," : "");
  }
  fprintf(f, "  ]\n}\n");
  fclose(f);
  return true;
}

}  // namespace

int run_benchmark(Backend& b, const Options& o) {
  const int rank = b.rank(), n = b.nranks();
  const Collective c = o.collective;
  if (!b.supports(c)) {
    if (rank == 0) fprintf(stderr, "%s: %s is not available\n", b.name(), collective_name(c));
    return 2;
  }
  if (rank == 0) print_header(b, o);
  const double factor = bus_factor(c, n);
  std::vector<Result> rows;
  long long wrong_total = 0;
  double busbw_sum = 0;
  for (size_t size = o.min_bytes; size <= o.max_bytes;) {
    const Counts k = counts_of(c, size, n);
    if (k.count > 0) {
      float* send = aligned_floats(k.send);
      float* recv = aligned_floats(k.recv);
      for (size_t i = 0; i < k.send; ++i) send[i] = input_value(rank, i);
      std::memset(recv, 0, k.recv * sizeof(float));
      for (int i = 0; i < o.warmup; ++i) b.run(c, send, recv, k.count);
      b.barrier();  // every rank starts timing together
      const auto start = std::chrono::steady_clock::now();
      for (int i = 0; i < o.iters; ++i) b.run(c, send, recv, k.count);
      const double mine = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / o.iters;
      Result r;
      r.bytes = std::max(k.send, k.recv) * sizeof(float);
      r.count = r.bytes / sizeof(float);
      r.seconds = b.sum(mine) / n;  // nccl-tests: averaged over iterations, then over ranks
      if (o.check) {
        long long wrong = 0;
        for (size_t i = 0; i < k.recv; ++i)
          if (recv[i] != expected_value(c, rank, n, k.count, i)) ++wrong;
        r.wrong = static_cast<long long>(b.sum(static_cast<double>(wrong)));
        wrong_total += r.wrong;
      }
      rows.push_back(r);
      const double algbw = r.bytes / r.seconds / 1e9;
      busbw_sum += algbw * factor;
      if (rank == 0) {
        char wrong_text[24] = "N/A";
        if (r.wrong >= 0) snprintf(wrong_text, sizeof wrong_text, "%lld", r.wrong);
        printf("%12zu  %12zu  %8s  %6s  %6i  %7.2f  %6.2f  %6.2f  %5s\n", r.bytes, r.count, "float",
               c == Collective::kAllReduce || c == Collective::kReduceScatter ? "sum" : "none",
               c == Collective::kBroadcast ? 0 : -1, r.seconds * 1e6, algbw, algbw * factor, wrong_text);
        fflush(stdout);
      }
      std::free(send);
      std::free(recv);
    }
    const size_t next = static_cast<size_t>(size * o.step_factor);
    if (next <= size) break;
    size = next;
  }
  bool ok = wrong_total == 0;
  if (rank == 0) {
    printf("# Out of bounds values : %lld %s\n", wrong_total, ok ? "OK" : "FAILED");
    printf("# Avg bus bandwidth    : %g \n#\n", rows.empty() ? 0.0 : busbw_sum / rows.size());
    fflush(stdout);
    if (!o.json_path.empty()) ok = write_json(o.json_path, o, n, rows, factor) && ok;
  }
  return ok ? 0 : 1;
}

}  // namespace dcpeer
