// Soak: 100 000 random operations (DEEPCOMM_SOAK_OPS overrides) on 8 ranks as processes, every result
// checked against a float64 reference (collective_check.h): every collective, datatype and op, random
// roots, in and out of place, groups of all-reduces, nonblocking requests; sizes mostly under 64 KiB,
// one in 500 up to 16 MiB; every ~1000 operations either a split into halves (some operations on
// the halves, then destroyed) or the communicator replaced by a split of all ranks and the old one
// destroyed. After a warm-up, resident memory and open descriptors must stay flat (resident memory
// after malloc_trim, sampled every 1000 operations, never more than kKeptBytes above its first
// sample, and its peak over the second half no higher than kFlatPeakBytes above the first half's),
// and /dev/shm must be as before. Label `soak`, outside CI (-DDEEPCOMM_SOAK_TESTS=ON; the `soak` CMake preset).
#include <gtest/gtest.h>
#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "kernels/reduce.h"
#include "tests/support/collective_check.h"
#include "tests/support/process_state.h"

namespace {

constexpr int kRanks = 8;
constexpr size_t kSmallBytes = 64 << 10;
constexpr size_t kLargeBytes = 16 << 20;
// Resident memory samples depend on what the communicator of the moment keeps (scratch sized by the
// largest operation it ran, up to two buffers of kLargeBytes) and on what the allocator keeps after
// large frees: in a 100 000-operation run they climb in steps from 8 MiB to a plateau of 30-40 MiB
// that some ranks reach only after half the run, so neither their floor nor their median is flat
// between halves. What is bounded is their level: at most kKeptBytes above the first sample (two
// large buffers and 8 MiB), and the second half's peak at most kFlatPeakBytes above the first's.
constexpr size_t kKeptBytes = 2 * kLargeBytes + (8 << 20);
constexpr size_t kFlatPeakBytes = 2 * kLargeBytes;

const dcDataType_t kTypes[] = {dcInt8,    dcUint8,   dcInt32,   dcUint32,   dcInt64,      dcUint64,
                               dcFloat16, dcFloat32, dcFloat64, dcBfloat16, dcFloat8e4m3, dcFloat8e5m2};
const dcRedOp_t kOps[] = {dcSum, dcProd, dcMax, dcMin, dcAvg};
const dcCollective_t kCollectives[] = {dcCollAllReduce, dcCollBroadcast,     dcCollReduce,
                                       dcCollAllGather, dcCollReduceScatter, dcCollAlltoAll,
                                       dcCollGather,    dcCollScatter,       dcCollSend};

// The same sequence on every rank: every rank draws the same operations.
struct Rng {
  uint64_t state;
  uint64_t next() {
    uint64_t x = (state += 0x9E3779B97F4A7C15ull);
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
  }
  size_t below(size_t n) { return static_cast<size_t>(next() % n); }
};

// Resident memory once the allocator handed back what it keeps free (glibc raises its mmap
// threshold after a large free, then holds freed megabytes in its heaps): what remains is in use.
size_t resident_bytes_in_use() {
  malloc_trim(0);
  return dctest::resident_bytes();
}

size_t median(std::vector<size_t> samples) {
  std::nth_element(samples.begin(), samples.begin() + samples.size() / 2, samples.end());
  return samples[samples.size() / 2];
}

// A random case whose per-rank buffers stay within `bytes`.
dctest::Case random_case(Rng& rng, int n, size_t bytes) {
  dctest::Case c;
  c.collective = kCollectives[rng.below(std::size(kCollectives))];
  c.datatype = kTypes[rng.below(std::size(kTypes))];
  c.op = kOps[rng.below(std::size(kOps))];
  c.in_place = rng.below(2) == 1 && c.collective != dcCollSend;
  c.root = static_cast<int>(rng.below(n));
  const bool spread = c.collective == dcCollAllGather || c.collective == dcCollReduceScatter ||
                      c.collective == dcCollAlltoAll || c.collective == dcCollGather || c.collective == dcCollScatter;
  const size_t elems = bytes / dc::datatype_size(c.datatype) / (spread ? n : 1);
  c.count = 1 + rng.below(std::max<size_t>(elems, 1));
  return c;
}

// k all-reduces (int32 sum) in one group, then checked.
std::string group_of_all_reduces(dcComm_t comm, Rng& rng) {
  int rank = 0, n = 1;
  dcCommRank(comm, &rank);
  dcCommCount(comm, &n);
  const size_t k = 2 + rng.below(3), count = 1 + rng.below(4096);
  std::vector<std::vector<int32_t>> data(k, std::vector<int32_t>(count));
  for (size_t j = 0; j < k; ++j)
    for (size_t i = 0; i < count; ++i) data[j][i] = static_cast<int32_t>(rank + j + i % 7);
  dcGroupStart();
  for (auto& d : data) dcAllReduce(d.data(), d.data(), count, dcInt32, dcSum, comm, nullptr);
  if (dcGroupEnd() != dcSuccess) return std::string("group: ") + dcGetLastError();
  for (size_t j = 0; j < k; ++j)
    for (size_t i = 0; i < count; ++i) {
      const int32_t expected = static_cast<int32_t>(n * (n - 1) / 2 + n * (j + i % 7));
      if (data[j][i] != expected) return "group all-reduce " + std::to_string(j) + " wrong at " + std::to_string(i);
    }
  return "";
}

// A nonblocking all-reduce (request), waited for and checked.
std::string request_all_reduce(dcComm_t comm, Rng& rng) {
  int rank = 0, n = 1;
  dcCommRank(comm, &rank);
  dcCommCount(comm, &n);
  std::vector<double> data(1 + rng.below(8192), double(rank + 1));
  dcRequest_t request;
  if (dcAllReduce(data.data(), data.data(), data.size(), dcFloat64, dcSum, comm, &request) != dcSuccess ||
      dcWait(request) != dcSuccess)
    return std::string("request: ") + dcGetLastError();
  for (double v : data)
    if (v != double(n * (n + 1) / 2)) return "request all-reduce wrong";
  return "";
}

std::string one_operation(dcComm_t comm, Rng& rng, int n, bool large) {
  const size_t kind = rng.below(10);
  if (kind == 0) return group_of_all_reduces(comm, rng);
  if (kind == 1) return request_all_reduce(comm, rng);
  const dctest::Case c = random_case(rng, n, large ? kLargeBytes : kSmallBytes);
  std::string e = dctest::run_case(comm, c);
  return e.empty() ? e : c.describe() + ": " + e;
}

int soak_rank(int rank, int n, const dcUniqueId& id, long ops) {
  dcComm_t comm = nullptr;
  if (dcCommInitRank(&comm, n, &id, rank, nullptr) != dcSuccess) {
    std::fprintf(stderr, "rank %d: init: %s\n", rank, dcGetLastError());
    return 2;
  }
  Rng rng{20261201};
  long wrong = 0, splits = 0, replacements = 0;
  // Resident memory is sampled every 1000 operations after the warm-up (caches that are bounded
  // reach their size early; a leak keeps growing). Descriptors may not exceed their count after
  // the warm-up.
  std::vector<size_t> first_half, second_half;
  int fds_mark = 0;
  const long warm_up = std::min<long>(ops / 10, 2000);
  for (long i = 0; i < ops; ++i) {
    if (i == warm_up) fds_mark = dctest::open_fds();
    if (i >= warm_up && i % 1000 == 0) {
      (i < warm_up + (ops - warm_up) / 2 ? first_half : second_half).push_back(resident_bytes_in_use());
    }
    if (i % 1000 == 999) {
      dcComm_t child = nullptr;
      const bool halves = rng.below(2) == 0;
      if (dcCommSplit(comm, halves ? rank % 2 : 0, rank, &child, nullptr) != dcSuccess) {
        std::fprintf(stderr, "rank %d: split: %s\n", rank, dcGetLastError());
        return 3;
      }
      if (halves) {
        for (int j = 0; j < 20; ++j) {
          const std::string e = one_operation(child, rng, n / 2, false);
          if (!e.empty() && ++wrong < 5) std::fprintf(stderr, "rank %d half op %d: %s\n", rank, j, e.c_str());
        }
        dcCommDestroy(child);
        ++splits;
      } else {
        dcCommDestroy(comm);
        comm = child;
        ++replacements;
      }
      continue;
    }
    // The first operations are large ones, so that every scratch buffer has its final size before
    // the memory mark; later one in 500.
    const bool large = i < 20 || rng.below(500) == 0;
    const std::string e = one_operation(comm, rng, n, large);
    if (!e.empty() && ++wrong < 5) std::fprintf(stderr, "rank %d op %ld: %s\n", rank, i, e.c_str());
  }
  second_half.push_back(resident_bytes_in_use());
  if (first_half.empty()) first_half.push_back(second_half.front());
  const int fds_end = dctest::open_fds();
  dcCommDestroy(comm);
  const size_t first = first_half.front();
  const size_t peak1 = *std::max_element(first_half.begin(), first_half.end());
  const size_t peak2 = *std::max_element(second_half.begin(), second_half.end());
  std::printf(
      "SOAK rank=%d ops=%ld wrong=%ld splits=%ld replacements=%ld resident_first_kib=%zu "
      "resident_median_kib=%zu/%zu resident_peak_kib=%zu/%zu fds=%d->%d\n",
      rank, ops, wrong, splits, replacements, first >> 10, median(first_half) >> 10, median(second_half) >> 10,
      peak1 >> 10, peak2 >> 10, fds_mark, fds_end);
  std::string samples;
  for (const auto* half : {&first_half, &second_half})
    for (size_t bytes : *half) samples += " " + std::to_string(bytes >> 20);
  std::printf("SOAK rank=%d resident_mib_every_1000_ops:%s\n", rank, samples.c_str());
  std::fflush(stdout);
  const bool flat =
      std::max(peak1, peak2) <= first + kKeptBytes && peak2 <= peak1 + kFlatPeakBytes && fds_end <= fds_mark;
  return wrong == 0 && flat ? 0 : 1;
}

TEST(Soak, HundredThousandRandomOperationsOnEightRanks) {
  const char* env = std::getenv("DEEPCOMM_SOAK_OPS");
  const long ops = env ? std::atol(env) : 100000;
  const std::set<std::string> before = dctest::dev_shm_names();
  const std::string errors = dctest::run_as_processes(
      kRanks, {}, [ops](int rank, int n, const dcUniqueId& id) { return soak_rank(rank, n, id, ops); }, 6 * 3600);
  EXPECT_EQ(errors, "");
  EXPECT_EQ(dctest::dev_shm_names(), before) << "/dev/shm changed";
}

}  // namespace
