// The challenge-response every DeepComm connection starts with (rendezvous root, TCP peers,
// shared-memory peers): both sides prove they hold the 128-bit secret of the unique id, and nothing
// else is read or allocated before the client has. The secret never travels: only HMACs over fresh
// nonces of both sides, compared in constant time. Four fixed-size messages (integers little-endian):
//   1 client -> server  Challenge  "DCA1", version 1, purpose, 2 zero bytes, session u64,
//                                  client nonce (16)                                     32 bytes
//   2 server -> client  Response   "DCA2", verdict (0 go on, 1 another session, 2 unknown purpose
//                                  or version), 3 zero bytes, server nonce (16), server proof (32)  56 bytes
//   3 client -> server  Proof      "DCA3", 4 zero bytes, client proof (32)                 40 bytes
//   4 server -> client  Verdict    "DCAY" accepted or "DCAN" rejected                       4 bytes
// proof = HMAC-SHA-256(secret, label || "DeepComm handshake 1" || purpose || session ||
//                      client nonce || server nonce), label "server" or "client".
// The session is no credential (ids made from NCCL_COMM_ID share it); it lets a server tell a
// client of another communicator why it is turned away.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace dc {

struct Secret {
  std::array<uint8_t, 16> bytes{};
  bool operator==(const Secret&) const = default;
};

namespace handshake {

enum class Purpose : uint8_t { RootJoin = 1, RootStatus = 2, TcpPeer = 3, ShmPeer = 4, UcxPeer = 5 };

constexpr size_t kChallengeBytes = 32;
constexpr size_t kResponseBytes = 56;
constexpr size_t kProofBytes = 40;
constexpr size_t kVerdictBytes = 4;
constexpr size_t kNonceBytes = 16;

// A listener gives a stranger this long to prove the secret, and holds at most this many
// connections that have not yet: a new one beyond that evicts the oldest.
constexpr std::chrono::seconds kDeadline{5};
constexpr size_t kMaxPending = 64;

using Challenge = std::array<uint8_t, kChallengeBytes>;
using Response = std::array<uint8_t, kResponseBytes>;
using Proof = std::array<uint8_t, kProofBytes>;
using Verdict = std::array<uint8_t, kVerdictBytes>;

class Server {
 public:
  enum class Step {
    Continue,  // send the response, then read the proof
    Refuse,    // send the response (it says why), then close
    Drop,      // not a DeepComm handshake: close without a word
  };
  Server(const Secret& secret, uint64_t session, std::vector<Purpose> accepted);
  Step on_challenge(const Challenge& in, Response* out);
  // Whether the client proved the secret; *out is the verdict to send either way.
  bool on_proof(const Proof& in, Verdict* out);
  Purpose purpose() const { return purpose_; }

 private:
  Secret secret_;
  uint64_t session_;
  std::vector<Purpose> accepted_;
  Purpose purpose_{};
  std::array<uint8_t, kNonceBytes> client_nonce_{}, server_nonce_{};
  bool challenged_ = false;
};

class Client {
 public:
  enum class Step {
    Continue,        // send the proof, then read the verdict
    OtherSession,    // the server serves another communicator
    Unsupported,     // the server does not serve this purpose (or this version)
    ServerUnproven,  // the server did not prove the secret, or spoke garbage
  };
  Client(const Secret& secret, Purpose purpose, uint64_t session);  // draws the nonce
  const Challenge& challenge() const { return challenge_; }
  Step on_response(const Response& in, Proof* out);
  // True when the server accepted the proof; false for a rejection or garbage.
  bool on_verdict(const Verdict& in) const;

 private:
  Secret secret_;
  Purpose purpose_;
  uint64_t session_;
  Challenge challenge_{};
};

// Why a client gave up, in words for an error message.
std::string describe(Client::Step step);

}  // namespace handshake
}  // namespace dc
