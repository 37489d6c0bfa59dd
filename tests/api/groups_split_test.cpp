// Group patterns, split communicators, requests, pre-multiplied sums, plan JSON, shareable memory.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <thread>
#include <vector>

#include "deepcomm/deepcomm.h"
#include "kernels/reduce.h"
#include "tests/support/collective_check.h"

namespace {

TEST(Groups, AllPairsExchangeInOneGroup) {
  const int n = 5;
  std::string errors = dctest::run_as_threads(n, [n](int rank, dcComm_t comm) -> std::string {
    for (size_t count : {size_t{3}, size_t{300000}}) {  // eager and rendezvous sizes
      std::vector<std::vector<int32_t>> out(n), in(n);
      dcGroupStart();
      for (int p = 0; p < n; ++p) {
        if (p == rank) continue;
        out[p].assign(count, rank * 100 + p);
        in[p].assign(count, -1);
        dcSend(out[p].data(), count, dcInt32, p, comm, nullptr);
        dcRecv(in[p].data(), count, dcInt32, p, comm, nullptr);
      }
      if (dcGroupEnd() != dcSuccess) return dcGetLastError();
      for (int p = 0; p < n; ++p)
        if (p != rank && (in[p].front() != p * 100 + rank || in[p].back() != p * 100 + rank))
          return "wrong data from peer " + std::to_string(p);
    }
    return "";
  });
  EXPECT_EQ(errors, "");
}

TEST(Groups, OneThreadDrivesSeveralCommunicators) {
  const int n = 4;
  std::vector<dcComm_t> comms(n);
  ASSERT_EQ(dcCommInitAll(comms.data(), n), dcSuccess) << dcGetLastError();
  std::vector<std::vector<double>> bufs(n, std::vector<double>(1000));
  for (int r = 0; r < n; ++r)
    for (size_t i = 0; i < 1000; ++i) bufs[r][i] = r + i;
  for (int round = 0; round < 3; ++round) {
    ASSERT_EQ(dcGroupStart(), dcSuccess);
    ASSERT_EQ(dcGroupStart(), dcSuccess);  // nested
    for (int r = 0; r < n; ++r)
      ASSERT_EQ(dcAllReduce(bufs[r].data(), bufs[r].data(), 1000, dcFloat64, dcSum, comms[r], nullptr), dcSuccess);
    ASSERT_EQ(dcGroupEnd(), dcSuccess);
    ASSERT_EQ(dcGroupEnd(), dcSuccess) << dcGetLastError();
  }
  // Three in-place sums: each round multiplies by n.
  for (int r = 0; r < n; ++r)
    for (size_t i : {size_t{0}, size_t{999}})
      EXPECT_EQ(bufs[r][i], (6 + 4.0 * i) * n * n * n / n) << "rank " << r << " element " << i;
  for (auto c : comms) EXPECT_EQ(dcCommDestroy(c), dcSuccess);
}

// Checks a child of the 6-rank split below: evens {4,2,0} and odds {3,1}, in key (-rank) order.
std::string check_child(int rank, dcComm_t child) {
  int count = 0, crank = 0;
  dcCommCount(child, &count);
  dcCommRank(child, &crank);
  const int expected_count = rank % 2 == 0 ? 3 : 2;  // evens {0,2,4}, odds {1,3}
  if (count != expected_count) return "child size " + std::to_string(count);
  // Keys are -rank: the highest parent rank comes first.
  const int expected_rank = rank % 2 == 0 ? (4 - rank) / 2 : (3 - rank) / 2;
  if (crank != expected_rank) return "child rank " + std::to_string(crank);
  int32_t v = rank, sum = 0;
  if (dcAllReduce(&v, &sum, 1, dcInt32, dcSum, child, nullptr) != dcSuccess) return dcGetLastError();
  if (sum != (rank % 2 == 0 ? 6 : 4)) return "child sum " + std::to_string(sum);
  if (dcCommDestroy(child) != dcSuccess) return dcGetLastError();
  return "";
}

TEST(Groups, SimulateEndEstimatesWithoutRunning) {
  const int n = 4;
  std::string errors = dctest::run_as_threads(n, [](int, dcComm_t comm) -> std::string {
    std::vector<float> big(1 << 22, 1.0f), small(256, 1.0f), out(1 << 22, -1.0f);
    double big_time = 0, small_time = 0;
    dcGroupStart();
    dcAllReduce(big.data(), out.data(), big.size(), dcFloat32, dcSum, comm, nullptr);
    if (dcGroupSimulateEnd(&big_time) != dcSuccess) return dcGetLastError();
    dcGroupStart();
    dcAllReduce(small.data(), out.data(), small.size(), dcFloat32, dcSum, comm, nullptr);
    if (dcGroupSimulateEnd(&small_time) != dcSuccess) return dcGetLastError();
    if (out[0] != -1.0f) return "a simulated group ran";
    if (!(small_time > 0 && big_time > 10 * small_time))
      return "estimates " + std::to_string(small_time) + " / " + std::to_string(big_time);
    // Outside a group it is a usage error; real operations still line up afterwards.
    double t = 0;
    if (dcGroupSimulateEnd(&t) != dcInvalidUsage) return "simulate without a group accepted";
    if (dcAllReduce(small.data(), out.data(), small.size(), dcFloat32, dcSum, comm, nullptr) != dcSuccess)
      return dcGetLastError();
    return out[0] == 4.0f ? "" : "all-reduce after simulation " + std::to_string(out[0]);
  });
  EXPECT_EQ(errors, "");
}

TEST(Split, ColorsKeysAndNoColor) {
  const int n = 6;
  std::string errors = dctest::run_as_threads(n, [](int rank, dcComm_t comm) -> std::string {
    dcComm_t child = nullptr;
    const int color = rank == 5 ? DC_SPLIT_NOCOLOR : rank % 2;
    if (dcCommSplit(comm, color, -rank, &child, nullptr) != dcSuccess) return dcGetLastError();
    int32_t v = rank, total = 0;
    if (rank == 5) {
      if (child != nullptr) return "NOCOLOR rank got a communicator";
    } else {
      std::string e = check_child(rank, child);
      if (!e.empty()) return e;
    }
    // The parent still works after the split.
    if (dcAllReduce(&v, &total, 1, dcInt32, dcSum, comm, nullptr) != dcSuccess) return dcGetLastError();
    return total == 15 ? "" : "parent sum " + std::to_string(total);
  });
  EXPECT_EQ(errors, "");
}

TEST(Requests, OverlapCommunicationWithComputation) {
  const int n = 3;
  std::string errors = dctest::run_as_threads(n, [n](int rank, dcComm_t comm) -> std::string {
    const size_t count = 1 << 18;
    std::vector<float> a(count, 1.0f + rank), b(count, 0);
    std::vector<int64_t> c(7, rank), d(7 * n, 0);
    dcRequest_t r1 = nullptr, r2 = nullptr;
    if (dcAllReduce(a.data(), b.data(), count, dcFloat32, dcSum, comm, &r1) != dcSuccess) return dcGetLastError();
    if (dcAllGather(c.data(), d.data(), 7, dcInt64, comm, &r2) != dcSuccess) return dcGetLastError();
    double busy = 0;  // computation while the operations progress
    for (int i = 0; i < 100000; ++i) busy += std::sqrt(static_cast<double>(i));
    int done = 0;
    while (!done) {
      if (dcTest(r1, &done) != dcSuccess) return dcGetLastError();
      if (!done) std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    if (dcWait(r2) != dcSuccess) return dcGetLastError();
    if (b[0] != 6.0f || b[count - 1] != 6.0f) return "all-reduce result " + std::to_string(b[0]);
    for (int r = 0; r < n; ++r)
      if (d[r * 7] != r || d[r * 7 + 6] != r) return "all-gather result";
    return busy > 0 ? "" : "computation did not run";
  });
  EXPECT_EQ(errors, "");
}

TEST(PreMulSum, ScalesEachRanksInputBeforeSumming) {
  const int n = 4;
  std::string errors = dctest::run_as_threads(n, [](int rank, dcComm_t comm) -> std::string {
    // float: sum over r of (r+1) * 0.5 * (r + 1)
    float scalar = 0.5f * (rank + 1);
    dcRedOp_t op;
    if (dcRedOpCreatePreMulSum(&op, &scalar, dcFloat32, comm) != dcSuccess) return dcGetLastError();
    std::vector<float> in(33, static_cast<float>(rank + 1)), out(33, 0);
    if (dcAllReduce(in.data(), out.data(), 33, dcFloat32, op, comm, nullptr) != dcSuccess) return dcGetLastError();
    if (out[0] != 15.0f || out[32] != 15.0f) return "float premulsum " + std::to_string(out[0]);
    // Created for float: using it with double is refused.
    std::vector<double> din(3, 1), dout(3, 0);
    if (dcAllReduce(din.data(), dout.data(), 3, dcFloat64, op, comm, nullptr) != dcInvalidArgument)
      return "datatype mismatch accepted";
    if (dcRedOpDestroy(op, comm) != dcSuccess) return dcGetLastError();
    if (dcRedOpDestroy(op, comm) != dcInvalidArgument) return "double destroy accepted";
    // int32 in place: sum of r * 3
    int32_t iscalar = 3;
    if (dcRedOpCreatePreMulSum(&op, &iscalar, dcInt32, comm) != dcSuccess) return dcGetLastError();
    std::vector<int32_t> iv(5, rank);
    if (dcAllReduce(iv.data(), iv.data(), 5, dcInt32, op, comm, nullptr) != dcSuccess) return dcGetLastError();
    if (iv[4] != 18) return "int premulsum " + std::to_string(iv[4]);
    // half
    uint16_t hscalar = dc::float_to_half(2.0f);
    if (dcRedOpCreatePreMulSum(&op, &hscalar, dcFloat16, comm) != dcSuccess) return dcGetLastError();
    std::vector<uint16_t> h(9, dc::float_to_half(1.5f)), hout(9, 0);
    if (dcReduceScatter(h.data(), hout.data(), 2, dcFloat16, op, comm, nullptr) != dcSuccess) return dcGetLastError();
    if (dc::half_to_float(hout[0]) != 12.0f) return "half premulsum " + std::to_string(dc::half_to_float(hout[0]));
    return "";
  });
  EXPECT_EQ(errors, "");
}

TEST(Inspection, PlanJsonNamesTheAlgorithm) {
  std::string errors = dctest::run_as_threads(4, [](int, dcComm_t comm) -> std::string {
    size_t len = 0;
    if (dcCommPlanJson(comm, dcCollAllReduce, 1 << 24, dcFloat32, -1, nullptr, &len) != dcInvalidArgument || len < 10)
      return "size query failed";
    std::vector<char> big(len);
    if (dcCommPlanJson(comm, dcCollAllReduce, 1 << 24, dcFloat32, -1, big.data(), &len) != dcSuccess)
      return dcGetLastError();
    // Threads of one process reach each other through shared memory: the direct plan.
    if (std::string(big.data()).find("\"direct\"") == std::string::npos) return "64 MiB all-reduce is not direct";
    len = 0;
    dcCommPlanJson(comm, dcCollAllReduce, 2, dcFloat32, -1, nullptr, &len);
    std::vector<char> small(len);
    if (dcCommPlanJson(comm, dcCollAllReduce, 2, dcFloat32, -1, small.data(), &len) != dcSuccess)
      return dcGetLastError();
    if (std::string(small.data()).find("\"tree\"") == std::string::npos) return "8-byte all-reduce is not a tree";
    return "";
  });
  EXPECT_EQ(errors, "");
}

TEST(SharedMemory, MemAllocBuffersWorkInCollectives) {
  std::string errors = dctest::run_as_processes(
      3, {{"DEEPCOMM_TRANSPORT", "shm"}},
      [](int rank, int n, const dcUniqueId& id) {
        dcComm_t comm;
        if (dcCommInitRank(&comm, n, &id, rank, nullptr) != dcSuccess) return 2;
        const size_t count = 3 << 20;
        float *in = nullptr, *out = nullptr;
        if (dcMemAlloc(reinterpret_cast<void**>(&in), count * 4) != dcSuccess) return 3;
        if (dcMemAlloc(reinterpret_cast<void**>(&out), count * 4) != dcSuccess) return 3;
        for (size_t i = 0; i < count; ++i) in[i] = static_cast<float>(rank + (i % 3));
        if (dcAllReduce(in, out, count, dcFloat32, dcSum, comm, nullptr) != dcSuccess) return 4;
        int bad = 0;
        for (size_t i = 0; i < count; ++i) bad += out[i] != 3.0f + 3.0f * (i % 3);
        dcMemFree(in);
        dcMemFree(out);
        dcCommDestroy(comm);
        return bad ? 1 : 0;
      },
      60);
  EXPECT_EQ(errors, "");
}

}  // namespace
