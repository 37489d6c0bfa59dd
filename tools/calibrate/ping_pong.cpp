#include "tools/calibrate/ping_pong.h"

#include <algorithm>
#include <cstdint>
#include <string>

#include "base/error.h"

namespace dc::calibrate {
namespace {

using Clock = std::chrono::steady_clock;

void check(dcResult_t result, const char* what) {
  if (result != dcSuccess) fail(result, std::string("ping-pong ") + what + ": " + dcGetLastError());
}

void send(const void* data, size_t bytes, int peer, dcComm_t comm) {
  check(dcSend(data, bytes, dcUint8, peer, comm, nullptr), "send");
}

void recv(void* data, size_t bytes, int peer, dcComm_t comm) {
  check(dcRecv(data, bytes, dcUint8, peer, comm, nullptr), "receive");
}

void follow(dcComm_t comm, int leader, int reps, std::vector<char>& buffer) {
  for (;;) {
    uint64_t size = 0;
    recv(&size, sizeof size, leader, comm);
    if (size == 0) return;
    if (size > buffer.size()) fail(dcInternalError, "ping-pong: the leader asked for an unplanned size");
    for (int r = 0; r <= reps; ++r) {
      recv(buffer.data(), size, leader, comm);
      send(buffer.data(), size, leader, comm);
    }
  }
}

}  // namespace

std::vector<FitPoint> ping_pong(dcComm_t comm, int self, int leader, int follower, const PingPongPlan& plan) {
  const size_t largest = plan.sizes.empty() ? 0 : plan.sizes.back();
  std::vector<char> buffer(std::max<size_t>(largest, 1), 1);
  if (self == follower) {
    follow(comm, leader, plan.reps, buffer);
    return {};
  }
  const auto deadline = Clock::now() + plan.budget;
  std::vector<FitPoint> points;
  double last_round_s = 0;
  size_t last_size = 0;
  for (const size_t size : plan.sizes) {
    // The next size takes about (reps + 1) round trips, each scaled from the last size's.
    const double scale = last_size ? static_cast<double>(size) / static_cast<double>(last_size) : 1;
    const auto estimate = std::chrono::duration<double>(last_round_s * std::max(scale, 1.0) * (plan.reps + 1));
    if (Clock::now() + std::chrono::duration_cast<Clock::duration>(estimate) > deadline) break;
    const uint64_t control = size;
    send(&control, sizeof control, follower, comm);
    std::vector<double> rounds;
    for (int r = 0; r <= plan.reps; ++r) {
      const auto start = Clock::now();
      send(buffer.data(), size, follower, comm);
      recv(buffer.data(), size, follower, comm);
      if (r > 0) rounds.push_back(std::chrono::duration<double>(Clock::now() - start).count());
    }
    std::nth_element(rounds.begin(), rounds.begin() + rounds.size() / 2, rounds.end());
    last_round_s = rounds[rounds.size() / 2];
    last_size = size;
    points.push_back({static_cast<double>(size), last_round_s / 2});
  }
  const uint64_t done = 0;
  send(&done, sizeof done, follower, comm);
  return points;
}

}  // namespace dc::calibrate
