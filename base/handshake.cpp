#include "base/handshake.h"

#include <algorithm>
#include <cstring>

#include "base/random_bytes.h"
#include "base/sha256.h"

namespace dc::handshake {

namespace {

constexpr uint8_t kVersion = 1;
constexpr char kDomain[] = "DeepComm handshake 1";
constexpr uint8_t kChallengeMagic[4] = {'D', 'C', 'A', '1'};
constexpr uint8_t kResponseMagic[4] = {'D', 'C', 'A', '2'};
constexpr uint8_t kProofMagic[4] = {'D', 'C', 'A', '3'};
constexpr uint8_t kAccepted[4] = {'D', 'C', 'A', 'Y'};
constexpr uint8_t kRejected[4] = {'D', 'C', 'A', 'N'};

enum ResponseCode : uint8_t { kGoOn = 0, kOtherSession = 1, kUnsupported = 2 };

void put_u64(uint8_t* at, uint64_t v) {
  for (int i = 0; i < 8; ++i) at[i] = static_cast<uint8_t>(v >> (8 * i));
}

uint64_t get_u64(const uint8_t* at) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t(at[i]) << (8 * i);
  return v;
}

Digest proof(const Secret& secret, const char* label, Purpose purpose, uint64_t session, const uint8_t* client_nonce,
             const uint8_t* server_nonce) {
  HmacSha256 h(secret.bytes.data(), secret.bytes.size());
  h.update(label, std::strlen(label) + 1);
  h.update(kDomain, sizeof kDomain);
  const uint8_t p = static_cast<uint8_t>(purpose);
  h.update(&p, 1);
  uint8_t s[8];
  put_u64(s, session);
  h.update(s, sizeof s);
  h.update(client_nonce, kNonceBytes);
  h.update(server_nonce, kNonceBytes);
  return h.finish();
}

bool all_zero(const uint8_t* p, size_t n) {
  return std::all_of(p, p + n, [](uint8_t b) { return b == 0; });
}

}  // namespace

Server::Server(const Secret& secret, uint64_t session, std::vector<Purpose> accepted)
    : secret_(secret), session_(session), accepted_(std::move(accepted)) {}

Server::Step Server::on_challenge(const Challenge& in, Response* out) {
  if (challenged_ || std::memcmp(in.data(), kChallengeMagic, 4) != 0 || !all_zero(&in[6], 2)) return Step::Drop;
  challenged_ = true;
  out->fill(0);
  std::memcpy(out->data(), kResponseMagic, 4);
  purpose_ = static_cast<Purpose>(in[5]);
  const bool known = in[4] == kVersion && std::find(accepted_.begin(), accepted_.end(), purpose_) != accepted_.end();
  if (!known) {
    (*out)[4] = kUnsupported;
    return Step::Refuse;
  }
  if (get_u64(&in[8]) != session_) {
    (*out)[4] = kOtherSession;
    return Step::Refuse;
  }
  std::memcpy(client_nonce_.data(), &in[16], kNonceBytes);
  random_bytes(server_nonce_.data(), kNonceBytes);
  std::memcpy(&(*out)[8], server_nonce_.data(), kNonceBytes);
  const Digest mine = proof(secret_, "server", purpose_, session_, client_nonce_.data(), server_nonce_.data());
  std::memcpy(&(*out)[24], mine.data(), mine.size());
  return Step::Continue;
}

bool Server::on_proof(const Proof& in, Verdict* out) {
  const Digest expected = proof(secret_, "client", purpose_, session_, client_nonce_.data(), server_nonce_.data());
  const bool good = challenged_ && std::memcmp(in.data(), kProofMagic, 4) == 0 && all_zero(&in[4], 4) &&
                    constant_time_equal(&in[8], expected.data(), expected.size());
  std::memcpy(out->data(), good ? kAccepted : kRejected, 4);
  challenged_ = false;  // one proof per challenge
  return good;
}

Client::Client(const Secret& secret, Purpose purpose, uint64_t session)
    : secret_(secret), purpose_(purpose), session_(session) {
  std::memcpy(challenge_.data(), kChallengeMagic, 4);
  challenge_[4] = kVersion;
  challenge_[5] = static_cast<uint8_t>(purpose);
  put_u64(&challenge_[8], session);
  random_bytes(&challenge_[16], kNonceBytes);
}

Client::Step Client::on_response(const Response& in, Proof* out) {
  if (std::memcmp(in.data(), kResponseMagic, 4) != 0 || !all_zero(&in[5], 3)) return Step::ServerUnproven;
  if (in[4] == kOtherSession) return Step::OtherSession;
  if (in[4] == kUnsupported) return Step::Unsupported;
  if (in[4] != kGoOn) return Step::ServerUnproven;
  const Digest expected = proof(secret_, "server", purpose_, session_, &challenge_[16], &in[8]);
  if (!constant_time_equal(&in[24], expected.data(), expected.size())) return Step::ServerUnproven;
  const Digest mine = proof(secret_, "client", purpose_, session_, &challenge_[16], &in[8]);
  out->fill(0);
  std::memcpy(out->data(), kProofMagic, 4);
  std::memcpy(&(*out)[8], mine.data(), mine.size());
  return Step::Continue;
}

bool Client::on_verdict(const Verdict& in) const { return std::memcmp(in.data(), kAccepted, 4) == 0; }

std::string describe(Client::Step step) {
  switch (step) {
    case Client::Step::Continue: return "handshake in progress";
    case Client::Step::OtherSession:
      return "it serves another communicator (the unique id is stale or names another job)";
    case Client::Step::Unsupported: return "it does not serve this kind of connection (another DeepComm version?)";
    case Client::Step::ServerUnproven:
      return "it did not prove knowledge of the unique id's secret (a different secret, or not DeepComm)";
  }
  return "unknown handshake failure";
}

}  // namespace dc::handshake
