// A hostile neighbour, for the stranger tests: raw clients that connect to DeepComm's listeners
// without the secret (or with a wrong one) and misbehave, and the process measurements the tests
// bound (resident memory, open descriptors).
#pragma once

#include <sys/socket.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "base/handshake.h"
#include "tests/support/process_state.h"

namespace dc::test {

// An address to connect to: a TCP endpoint or an abstract Unix socket name.
struct Target {
  sockaddr_storage address{};
  socklen_t length = 0;
  static Target tcp(const std::string& ip, uint16_t port);
  static Target abstract_unix(const std::string& name);  // without the leading NUL
};

// A connected socket (blocking, 2 s receive timeout), or -1.
int connect_to(const Target& target);

enum class Stranger {
  Idle,            // connects and says nothing
  RandomBytes,     // 4 KiB of noise
  OversizedClaim,  // a pre-handshake rendezvous join claiming a 1 GiB blob
  WrongSecret,     // a well-formed handshake with another secret: proves nothing
  ForgedProof,     // the right session, a random proof
};

// Plays one stranger against target and returns its socket still open (the caller closes it),
// or -1 if the connection failed.
int play(const Target& target, Stranger kind, uint64_t session, handshake::Purpose purpose);

// Whether the other end closed `fd` (EOF or reset) within timeout_ms.
bool closed_by_peer(int fd, int timeout_ms);
// How many of fds the other end still holds open once at most `limit` are, or after timeout_ms.
int wait_until_open_at_most(const std::vector<int>& fds, int limit, int timeout_ms);

// Completes the handshake with `secret` and returns the socket, or -1 if not accepted.
int prove(const Target& target, const Secret& secret, uint64_t session, handshake::Purpose purpose);

using dctest::open_fds;
using dctest::resident_bytes;

}  // namespace dc::test
