// libFuzzer target: the handshake (handshake.h) against a peer that does not know the secret, and
// the peer hello that follows it (frame.h). The input plays the client's challenge and proof to a
// server, the server's response and verdict to a client, then a hello to an acceptor of rank 8.
// Neither side may ever accept: nobody can forge an HMAC over a fresh nonce.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "base/handshake.h"
#include "transports/common/frame.h"

namespace {

template <class Message>
bool take(const uint8_t*& data, size_t& size, Message* m) {
  if (size < m->size()) return false;
  std::memcpy(m->data(), data, m->size());
  data += m->size();
  size -= m->size();
  return true;
}

dc::Secret the_secret() {
  dc::Secret s;
  for (size_t i = 0; i < s.bytes.size(); ++i) s.bytes[i] = static_cast<uint8_t>(0xA5 ^ (i * 29));
  return s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace dc::handshake;
  constexpr uint64_t kSession = 77;
  const dc::Secret secret = the_secret();
  {
    Server server(secret, kSession, {Purpose::RootJoin, Purpose::TcpPeer});
    Challenge challenge;
    Response response;
    Proof proof;
    Verdict verdict;
    if (take(data, size, &challenge) && server.on_challenge(challenge, &response) == Server::Step::Continue &&
        take(data, size, &proof) && server.on_proof(proof, &verdict)) {
      std::fprintf(stderr, "the server accepted a proof made without the secret\n");
      std::abort();
    }
  }
  {
    Client client(secret, Purpose::ShmPeer, kSession);
    Response response;
    Proof proof;
    if (take(data, size, &response) && client.on_response(response, &proof) == Client::Step::Continue) {
      std::fprintf(stderr, "the client took a server's proof made without the secret\n");
      std::abort();
    }
    Verdict verdict;
    if (take(data, size, &verdict)) (void)client.on_verdict(verdict);
  }
  if (size >= sizeof(dc::Hello)) {
    dc::Hello hello;
    std::memcpy(&hello, data, sizeof hello);
    if (dc::hello_claims_a_dialer(hello, 8) && (hello.rank < 0 || hello.rank >= 8)) {
      std::fprintf(stderr, "a hello claiming rank %d passed\n", hello.rank);
      std::abort();
    }
  }
  return 0;
}
