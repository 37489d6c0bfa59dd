// The TCP ceiling of the comparison's TCP rows: n processes on 127.0.0.1 in a ring, each sending
// -s bytes to the next while receiving as many from the previous (non-blocking sockets, one poll
// loop per process, TCP_NODELAY and 4 MiB socket buffers as DeepComm's TCP transport sets them).
// That is the traffic of a bandwidth-optimal (ring) all-reduce, whose busbw is the rate at which
// each rank sends: this per-rank rate is its ceiling. Patterns with fewer streams active at once
// (trees, a single sender) lose less time to switching between ranks and can exceed it. Prints the
// median over -r repetitions (after one warm-up) of bytes / the slowest rank's time and, with -J, a
// JSON object.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr int kSocketBufferBytes = 4 * 1024 * 1024;

[[noreturn]] void die(const char* what) {
  perror(what);
  _exit(2);
}

int listen_on_loopback(sockaddr_in& address) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  address = {};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof address;
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&address), len) != 0 || listen(fd, 1) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&address), &len) != 0)
    die("socket_ring_bw: listen");
  return fd;
}

void tune(int fd) {
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &kSocketBufferBytes, sizeof kSocketBufferBytes);
  setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &kSocketBufferBytes, sizeof kSocketBufferBytes);
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

// Sends `bytes` on `out` while receiving as many on `in`; returns the seconds it took.
double exchange(int out, int in, std::vector<char>& send_buf, std::vector<char>& recv_buf) {
  const size_t bytes = send_buf.size();
  size_t sent = 0, received = 0;
  const auto start = std::chrono::steady_clock::now();
  while (sent < bytes || received < bytes) {
    pollfd fds[2] = {{out, static_cast<short>(sent < bytes ? POLLOUT : 0), 0},
                     {in, static_cast<short>(received < bytes ? POLLIN : 0), 0}};
    if (poll(fds, 2, 60000) <= 0) die("socket_ring_bw: poll (no progress in 60 s)");
    if (fds[0].revents & (POLLOUT | POLLERR)) {
      const ssize_t n = send(out, send_buf.data() + sent, bytes - sent, 0);
      if (n < 0 && errno != EAGAIN) die("socket_ring_bw: send");
      sent += n > 0 ? n : 0;
    }
    if (fds[1].revents & (POLLIN | POLLERR | POLLHUP)) {
      const ssize_t n = recv(in, recv_buf.data() + received, bytes - received, 0);
      if (n == 0 || (n < 0 && errno != EAGAIN)) die("socket_ring_bw: recv");
      received += n > 0 ? n : 0;
    }
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// One ring member: connects to the next rank's listener, accepts the previous rank, then runs the
// repetitions, writing each one's seconds to `report`.
void run_rank(int rank, int nranks, const std::vector<int>& listeners, const std::vector<sockaddr_in>& addresses,
              size_t bytes, int reps, int report) {
  const int out = socket(AF_INET, SOCK_STREAM, 0);
  const sockaddr_in& next = addresses[(rank + 1) % nranks];
  if (out < 0 || connect(out, reinterpret_cast<const sockaddr*>(&next), sizeof next) != 0)
    die("socket_ring_bw: connect");
  const int in = accept(listeners[rank], nullptr, nullptr);
  if (in < 0) die("socket_ring_bw: accept");
  tune(out);
  tune(in);
  std::vector<char> send_buf(bytes, static_cast<char>(rank)), recv_buf(bytes, 0);
  for (int r = 0; r <= reps; ++r) {  // repetition 0 warms up
    const double seconds = exchange(out, in, send_buf, recv_buf);
    if (recv_buf[bytes - 1] != static_cast<char>((rank + nranks - 1) % nranks)) {
      fprintf(stderr, "socket_ring_bw: rank %d received wrong bytes\n", rank);
      _exit(3);
    }
    if (r > 0 && write(report, &seconds, sizeof seconds) != sizeof seconds) die("socket_ring_bw: report");
  }
  _exit(0);
}

}  // namespace

int main(int argc, char** argv) {
  int nranks = 4, reps = 5;
  size_t bytes = 128u << 20;
  std::string json_path;
  for (int c; (c = getopt(argc, argv, "n:s:r:J:")) != -1;) {
    if (c == 'n') nranks = atoi(optarg);
    else if (c == 's') bytes = strtoull(optarg, nullptr, 10);
    else if (c == 'r') reps = atoi(optarg);
    else if (c == 'J') json_path = optarg;
    else nranks = 0;
  }
  if (nranks < 2 || reps < 1 || bytes == 0) {
    fprintf(stderr, "usage: %s [-n ranks >= 2] [-s bytes] [-r repetitions] [-J json]\n", argv[0]);
    return 1;
  }
  std::vector<int> listeners(nranks);
  std::vector<sockaddr_in> addresses(nranks);
  for (int r = 0; r < nranks; ++r) listeners[r] = listen_on_loopback(addresses[r]);
  std::vector<int> reports(nranks);
  for (int r = 0; r < nranks; ++r) {
    int fds[2];
    if (pipe(fds) != 0) die("socket_ring_bw: pipe");
    if (fork() == 0) {
      close(fds[0]);
      run_rank(r, nranks, listeners, addresses, bytes, reps, fds[1]);
    }
    close(fds[1]);
    reports[r] = fds[0];
  }
  // Per repetition, the ring is as fast as its slowest rank.
  std::vector<double> slowest(reps, 0.0);
  bool complete = true;
  for (int r = 0; r < nranks; ++r) {
    for (int i = 0; i < reps; ++i) {
      double seconds = 0;
      if (read(reports[r], &seconds, sizeof seconds) != sizeof seconds) complete = false;
      slowest[i] = std::max(slowest[i], seconds);
    }
  }
  int failed = 0;
  for (int r = 0; r < nranks; ++r) {
    int status = 0;
    wait(&status);
    failed += !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  if (failed || !complete) {
    fprintf(stderr, "socket_ring_bw: %d rank(s) failed\n", failed);
    return 1;
  }
  std::sort(slowest.begin(), slowest.end());
  const double per_rank_gbs = bytes / slowest[reps / 2] / 1e9;
  printf("socket ring, %d ranks, %zu bytes per rank: %.3f GB/s per rank (median of %d)\n", nranks, bytes, per_rank_gbs,
         reps);
  if (!json_path.empty()) {
    FILE* f = fopen(json_path.c_str(), "w");
    if (!f) return 1;
    fprintf(f, "{\"nranks\": %d, \"bytes\": %zu, \"per_rank_gbs\": %.4f}\n", nranks, bytes, per_rank_gbs);
    fclose(f);
  }
  return 0;
}
