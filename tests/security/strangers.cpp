#include "tests/security/strangers.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <random>
#include <thread>

#include "base/random_bytes.h"

namespace dc::test {

Target Target::tcp(const std::string& ip, uint16_t port) {
  Target t;
  auto* sin = reinterpret_cast<sockaddr_in*>(&t.address);
  sin->sin_family = AF_INET;
  sin->sin_port = htons(port);
  inet_pton(AF_INET, ip.c_str(), &sin->sin_addr);
  t.length = sizeof(sockaddr_in);
  return t;
}

Target Target::abstract_unix(const std::string& name) {
  Target t;
  auto* sun = reinterpret_cast<sockaddr_un*>(&t.address);
  sun->sun_family = AF_UNIX;
  std::memcpy(sun->sun_path + 1, name.data(), std::min(name.size(), sizeof sun->sun_path - 1));
  t.length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  return t;
}

int connect_to(const Target& target) {
  const int fd = ::socket(target.address.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  timeval tv{2, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&target.address), target.length) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

namespace {

bool send_all(int fd, const void* data, size_t len) {
  const char* p = static_cast<const char*>(data);
  while (len) {
    const ssize_t n = ::send(fd, p, len, MSG_NOSIGNAL);
    if (n <= 0) return false;
    p += n;
    len -= static_cast<size_t>(n);
  }
  return true;
}

bool recv_all(int fd, void* data, size_t len) {
  char* p = static_cast<char*>(data);
  while (len) {
    const ssize_t n = ::recv(fd, p, len, 0);
    if (n <= 0) return false;
    p += n;
    len -= static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

int play(const Target& target, Stranger kind, uint64_t session, handshake::Purpose purpose) {
  const int fd = connect_to(target);
  if (fd < 0) return -1;
  switch (kind) {
    case Stranger::Idle: break;
    case Stranger::RandomBytes: {
      std::vector<uint8_t> noise(4096);
      random_bytes(noise.data(), noise.size());
      send_all(fd, noise.data(), noise.size());
      break;
    }
    case Stranger::OversizedClaim: {
      // "DCBJ", Join, a session, rank 0 of 2, 1 GiB: what an unauthenticated root once allocated.
      uint8_t join[29] = {'D', 'C', 'B', 'J', 1};
      std::memcpy(join + 5, &session, 8);
      join[17] = 2;
      const uint64_t huge = uint64_t(1) << 30;
      std::memcpy(join + 21, &huge, 8);
      send_all(fd, join, sizeof join);
      break;
    }
    case Stranger::WrongSecret: {
      Secret guess;
      random_bytes(guess.bytes.data(), guess.bytes.size());
      handshake::Client client(guess, purpose, session);
      handshake::Response response;
      handshake::Proof proof;
      if (send_all(fd, client.challenge().data(), client.challenge().size()) &&
          recv_all(fd, response.data(), response.size()))
        client.on_response(response, &proof);  // fails: the server proved another secret
      break;
    }
    case Stranger::ForgedProof: {
      Secret guess;
      random_bytes(guess.bytes.data(), guess.bytes.size());
      handshake::Client client(guess, purpose, session);
      handshake::Response response;
      if (send_all(fd, client.challenge().data(), client.challenge().size()) &&
          recv_all(fd, response.data(), response.size())) {
        handshake::Proof forged{'D', 'C', 'A', '3'};
        random_bytes(&forged[8], 32);
        send_all(fd, forged.data(), forged.size());
      }
      break;
    }
  }
  return fd;
}

bool closed_by_peer(int fd, int timeout_ms) {
  pollfd p{fd, POLLIN, 0};
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
    if (::poll(&p, 1, static_cast<int>(std::max<int64_t>(left.count(), 0))) != 1) return false;
    char buf[256];
    const ssize_t n = ::recv(fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) return true;
  }
}

int wait_until_open_at_most(const std::vector<int>& fds, int limit, int timeout_ms) {
  std::vector<bool> closed(fds.size(), false);
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    int open = 0;
    for (size_t i = 0; i < fds.size(); ++i) {
      if (!closed[i]) closed[i] = closed_by_peer(fds[i], 0);
      open += closed[i] ? 0 : 1;
    }
    if (open <= limit || std::chrono::steady_clock::now() >= until) return open;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

int prove(const Target& target, const Secret& secret, uint64_t session, handshake::Purpose purpose) {
  const int fd = connect_to(target);
  if (fd < 0) return -1;
  handshake::Client client(secret, purpose, session);
  handshake::Response response;
  handshake::Proof proof;
  handshake::Verdict verdict;
  if (send_all(fd, client.challenge().data(), client.challenge().size()) &&
      recv_all(fd, response.data(), response.size()) &&
      client.on_response(response, &proof) == handshake::Client::Step::Continue &&
      send_all(fd, proof.data(), proof.size()) && recv_all(fd, verdict.data(), verdict.size()) &&
      client.on_verdict(verdict))
    return fd;
  ::close(fd);
  return -1;
}

}  // namespace dc::test
