#include "bench/collectives/perf_report.h"

#include <unistd.h>

#include <cstdio>

namespace dcbench {

namespace {

std::string time_text(double us) {
  char buf[32];
  if (us < 1e4) snprintf(buf, sizeof buf, "%7.2f", us);
  else if (us < 1e5) snprintf(buf, sizeof buf, "%7.1f", us);
  else snprintf(buf, sizeof buf, "%7.0f", us);
  return buf;
}

}  // namespace

Report::Report(const CollectiveSpec& spec, const Options& options, dcComm_t comm, int rank, int nranks)
    : spec_(spec), options_(options), comm_(comm), rank_(rank), nranks_(nranks) {}

void Report::header() {
  // Every rank's description, gathered to rank 0 (nccl-tests' "Using devices" block).
  char line[160];
  char host[64] = {0};
  gethostname(host, sizeof host - 1);
  snprintf(line, sizeof line, "#  Rank %2d Group  0 Pid %6d on %10s device -1 [host] CPU memory", rank_,
           static_cast<int>(getpid()), host);
  std::vector<char> lines(sizeof line * nranks_);
  dcAllGather(line, lines.data(), sizeof line, dcInt8, comm_, nullptr);
  if (rank_ != 0) return;
  const Options& o = options_;
  printf(
      "# nThread 1 nGpus 1 minBytes %zu maxBytes %zu step: %g(%s) warmup iters: %d iters: %d agg iters: 1 "
      "validation: %d graph: %d\n",
      o.min_bytes, o.max_bytes, o.use_factor ? o.step_factor : static_cast<double>(o.step_bytes),
      o.use_factor ? "factor" : "bytes", o.warmup, o.iters, o.check, o.graph_iters);
  printf("#\n# Using devices\n");
  for (int r = 0; r < nranks_; ++r) printf("%s\n", &lines[r * sizeof line]);
  printf("#\n");
  printf(
      "#                                                              out-of-place                       in-place          \n");
  printf(
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n");
  printf(
      "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       \n");
  fflush(stdout);
}

double Report::bus_bandwidth(const Row& row, int half) const {
  const double algbw = row.bytes / row.half[half].seconds / 1e9;
  return algbw * spec_.bus_factor(nranks_);
}

void Report::row(const Row& row) {
  rows_.push_back(row);
  for (const Half& half : row.half)
    if (half.wrong > 0) wrong_total_ += half.wrong;  // every rank knows: the counts were summed
  if (rank_ != 0) return;
  printf("%12zu  %12zu  %8s  %6s  %6i", row.bytes, row.count, type_name(row.type),
         spec_.has_op ? op_name(row.op) : "none", row.root);
  for (int h = 0; h < 2; ++h) {
    const Half& half = row.half[h];
    if (half.skipped) {
      printf("  %7s  %6s  %6s  %5s", "N/A", "N/A", "N/A", "N/A");
      continue;
    }
    const double algbw = row.bytes / half.seconds / 1e9, busbw = bus_bandwidth(row, h);
    char wrong[16];
    if (half.wrong < 0) snprintf(wrong, sizeof wrong, "N/A");
    else snprintf(wrong, sizeof wrong, "%lld", half.wrong);
    printf("  %7s  %6.2f  %6.2f  %5s", time_text(half.seconds * 1e6).c_str(), algbw, busbw, wrong);
    busbw_sum_ += busbw;
    ++busbw_count_;
  }
  printf("\n");
  fflush(stdout);
}

bool Report::footer() {
  if (rank_ != 0) return wrong_total_ == 0;
  printf("# Out of bounds values : %lld %s\n", wrong_total_, wrong_total_ ? "FAILED" : "OK");
  printf("# Avg bus bandwidth    : %g \n#\n", busbw_count_ ? busbw_sum_ / busbw_count_ : 0.0);
  fflush(stdout);
  if (!options_.json_path.empty()) {
    FILE* f = fopen(options_.json_path.c_str(), "w");
    if (!f) {
      fprintf(stderr, "cannot write %s\n", options_.json_path.c_str());
      return false;
    }
    fprintf(f, "{\n  \"benchmark\": \"%s\",\n  \"nranks\": %d,\n  \"results\": [\n", spec_.name, nranks_);
    for (size_t i = 0; i < rows_.size(); ++i) {
      const Row& r = rows_[i];
      fprintf(f, "    {\"size\": %zu, \"count\": %zu, \"type\": \"%s\", \"redop\": \"%s\", \"root\": %d", r.bytes,
              r.count, type_name(r.type), spec_.has_op ? op_name(r.op) : "none", r.root);
      if (!r.algorithm.empty()) fprintf(f, ", \"algorithm\": \"%s\"", r.algorithm.c_str());
      const char* names[2] = {"out_of_place", "in_place"};
      for (int h = 0; h < 2; ++h) {
        if (r.half[h].skipped) continue;
        fprintf(f, ", \"%s\": {\"time_us\": %.3f, \"algbw_gbs\": %.4f, \"busbw_gbs\": %.4f, \"wrong\": %lld}", names[h],
                r.half[h].seconds * 1e6, r.bytes / r.half[h].seconds / 1e9, bus_bandwidth(r, h), r.half[h].wrong);
      }
      fprintf(f, "}%s\n", i + 1 < rows_.size() ? "," : "");
    }
    fprintf(f, "  ],\n  \"avg_busbw_gbs\": %g,\n  \"wrong\": %lld\n}\n", busbw_count_ ? busbw_sum_ / busbw_count_ : 0.0,
            wrong_total_);
    fclose(f);
  }
  return wrong_total_ == 0;
}

}  // namespace dcbench
