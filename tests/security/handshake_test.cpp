// The challenge-response in memory: both sides agree only with the same secret and session, every
// tampered byte of a proof is caught, and refusals say why.
#include <gtest/gtest.h>

#include "base/handshake.h"

namespace dc::handshake {
namespace {

Secret secret_of(uint8_t seed) {
  Secret s;
  for (size_t i = 0; i < s.bytes.size(); ++i) s.bytes[i] = static_cast<uint8_t>(seed * 31 + i);
  return s;
}

struct Exchange {
  Server::Step server_step = Server::Step::Drop;
  Client::Step client_step = Client::Step::ServerUnproven;
  bool server_accepted = false;
  bool client_accepted = false;
};

Exchange run(const Secret& client_secret, const Secret& server_secret, uint64_t client_session, uint64_t server_session,
             Purpose purpose = Purpose::TcpPeer) {
  Exchange r;
  Client client(client_secret, purpose, client_session);
  Server server(server_secret, server_session, {Purpose::TcpPeer, Purpose::RootJoin});
  Response response;
  r.server_step = server.on_challenge(client.challenge(), &response);
  if (r.server_step == Server::Step::Drop) return r;
  Proof proof;
  r.client_step = client.on_response(response, &proof);
  if (r.client_step != Client::Step::Continue) return r;
  Verdict verdict;
  r.server_accepted = server.on_proof(proof, &verdict);
  r.client_accepted = client.on_verdict(verdict);
  return r;
}

TEST(Handshake, SameSecretAndSessionAgree) {
  const Exchange r = run(secret_of(1), secret_of(1), 42, 42);
  EXPECT_EQ(r.server_step, Server::Step::Continue);
  EXPECT_EQ(r.client_step, Client::Step::Continue);
  EXPECT_TRUE(r.server_accepted);
  EXPECT_TRUE(r.client_accepted);
}

TEST(Handshake, ClientWithAnotherSecretFindsTheServerUnproven) {
  // The client checks the server's proof first, so it learns of the mismatch before it proves.
  const Exchange r = run(secret_of(1), secret_of(2), 42, 42);
  EXPECT_EQ(r.client_step, Client::Step::ServerUnproven);
  EXPECT_FALSE(r.server_accepted);
}

TEST(Handshake, ServerRejectsAForgedProof) {
  Client client(secret_of(1), Purpose::TcpPeer, 7);
  Server server(secret_of(1), 7, {Purpose::TcpPeer});
  Response response;
  ASSERT_EQ(server.on_challenge(client.challenge(), &response), Server::Step::Continue);
  Proof proof;
  ASSERT_EQ(client.on_response(response, &proof), Client::Step::Continue);
  for (size_t i = 0; i < proof.size(); ++i) {
    Server fresh(secret_of(1), 7, {Purpose::TcpPeer});
    Client other(secret_of(1), Purpose::TcpPeer, 7);
    Response r2;
    ASSERT_EQ(fresh.on_challenge(other.challenge(), &r2), Server::Step::Continue);
    Proof good;
    ASSERT_EQ(other.on_response(r2, &good), Client::Step::Continue);
    Proof bad = good;
    bad[i] ^= 0x01;
    Verdict verdict;
    EXPECT_FALSE(fresh.on_proof(bad, &verdict)) << "flipped bit in proof byte " << i;
    EXPECT_FALSE(other.on_verdict(verdict));
  }
}

TEST(Handshake, ProofsDoNotReplayAcrossConnections) {
  // A proof recorded on one connection fails on the next: the server's nonce is fresh.
  Client client(secret_of(3), Purpose::TcpPeer, 9);
  Server first(secret_of(3), 9, {Purpose::TcpPeer});
  Response response;
  ASSERT_EQ(first.on_challenge(client.challenge(), &response), Server::Step::Continue);
  Proof recorded;
  ASSERT_EQ(client.on_response(response, &recorded), Client::Step::Continue);
  Server second(secret_of(3), 9, {Purpose::TcpPeer});
  Response response2;
  ASSERT_EQ(second.on_challenge(client.challenge(), &response2), Server::Step::Continue);
  Verdict verdict;
  EXPECT_FALSE(second.on_proof(recorded, &verdict));
}

TEST(Handshake, OtherSessionAndPurposeAreRefusedWithAReason) {
  const Exchange other_session = run(secret_of(1), secret_of(1), 42, 43);
  EXPECT_EQ(other_session.server_step, Server::Step::Refuse);
  EXPECT_EQ(other_session.client_step, Client::Step::OtherSession);
  const Exchange other_purpose = run(secret_of(1), secret_of(1), 42, 42, Purpose::ShmPeer);
  EXPECT_EQ(other_purpose.server_step, Server::Step::Refuse);
  EXPECT_EQ(other_purpose.client_step, Client::Step::Unsupported);
  EXPECT_NE(describe(Client::Step::OtherSession).find("another communicator"), std::string::npos);
}

TEST(Handshake, GarbageIsDroppedSilently) {
  Server server(secret_of(1), 1, {Purpose::TcpPeer});
  Challenge junk;
  junk.fill('x');
  Response response;
  EXPECT_EQ(server.on_challenge(junk, &response), Server::Step::Drop);
}

TEST(Handshake, TheSecretNeverAppearsInAMessage) {
  const Secret s = secret_of(5);
  Client client(s, Purpose::TcpPeer, 1);
  Server server(s, 1, {Purpose::TcpPeer});
  Response response;
  ASSERT_EQ(server.on_challenge(client.challenge(), &response), Server::Step::Continue);
  Proof proof;
  ASSERT_EQ(client.on_response(response, &proof), Client::Step::Continue);
  auto contains_secret = [&](const uint8_t* p, size_t n) {
    for (size_t i = 0; i + s.bytes.size() <= n; ++i)
      if (std::equal(s.bytes.begin(), s.bytes.end(), p + i)) return true;
    return false;
  };
  EXPECT_FALSE(contains_secret(client.challenge().data(), kChallengeBytes));
  EXPECT_FALSE(contains_secret(response.data(), kResponseBytes));
  EXPECT_FALSE(contains_secret(proof.data(), kProofBytes));
}

}  // namespace
}  // namespace dc::handshake
