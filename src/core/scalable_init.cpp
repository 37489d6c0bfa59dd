// Bootstrap through several rendezvous roots (ncclCommInitRankScalable). Ranks are spread evenly
// over the k roots: group g = rank * k / nranks. Root 0 serves group 0 together with the leader (the
// lowest rank) of every other group; every other root serves its own group. So no root handles more
// than about nranks/k + k joins:
//   1. a rank of group g >= 1 exchanges cards with its group through root g;
//   2. group 0 and the leaders exchange through root 0, each leader standing for its group: now they
//      know every card;
//   3. each leader connects to its group and hands it the full table; then everyone connects to the
//      rest as after an ordinary bootstrap.
#include <future>
#include <memory>

#include "src/core/bootstrap.h"
#include "src/core/card_list.h"
#include "src/core/peer_setup.h"
#include "src/exec/engine.h"

namespace dc {

namespace {

constexpr uint64_t kTableSeq = 1ull << 61;  // tag of the leader's table, apart from operations

// Moves one message over an established connection, waiting for it (bounded). The buffer belongs
// to the operation, not to this thread: one that times out leaves nothing pointing at its stack.
// A receive (send == false) returns what arrived, at most `capacity` bytes.
std::string transfer(dcComm* comm, int peer, const Tag& tag, bool send, std::string sending, size_t capacity) {
  auto done = std::make_shared<std::promise<std::pair<Status, size_t>>>();
  auto result = done->get_future();
  auto buffer = std::make_shared<std::string>(send ? std::move(sending) : std::string(capacity, '\0'));
  auto links = comm->exec.links;
  Engine::instance().post([links, peer, tag, send, buffer, done] {
    auto completion = [buffer, done](const Status& s, size_t bytes) { done->set_value({s, bytes}); };
    Connection* conn = links->peers[peer].get();
    if (send) conn->send(tag, buffer->data(), buffer->size(), completion);
    else conn->recv(tag, buffer->data(), buffer->size(), completion);
  });
  if (result.wait_for(std::chrono::milliseconds(comm->config.bootstrap_timeout_ms)) != std::future_status::ready) {
    Engine::instance().post([links, peer, tag] { links->peers[peer]->cancel(tag.comm, tag.seq); });
    fail(dcSystemError, "DeepComm: scalable bootstrap timed out passing the card table");
  }
  const auto [status, bytes] = result.get();
  if (!status.ok()) throw Error(status.code, status.message);
  buffer->resize(send ? 0 : bytes);
  return std::move(*buffer);
}

}  // namespace

void connect_comm_scalable(dcComm* comm, const std::vector<dcUniqueId>& ids) {
  const int n = comm->exec.nranks, rank = comm->exec.rank, k = static_cast<int>(ids.size());
  auto group_of = [&](int r) { return static_cast<int>(static_cast<int64_t>(r) * k / n); };
  std::vector<int> first(k, n), size(k, 0);
  for (int r = 0; r < n; ++r) {
    first[group_of(r)] = std::min(first[group_of(r)], r);
    ++size[group_of(r)];
  }
  const int g = group_of(rank);
  const bool leader = rank == first[g];
  const int at_root0 = size[0] + k - 1;  // group 0 and the other groups' leaders
  const int timeout = comm->config.bootstrap_timeout_ms;

  // Every rank holds every id; the connections prove the first one's secret.
  const RankCard card = open_transports(comm, unique_id_secret(ids[0]));
  std::vector<std::string> blobs(n);  // every rank's card, as far as known
  auto take_root0 = [&](const std::vector<std::string>& joined) {
    blobs = cards_from_root0(joined, first, size, RankCard::kMaxBytes);
  };
  std::vector<std::string> group_blobs;
  if (g == 0) {
    take_root0(bootstrap_allgather(ids[0], rank, at_root0, card.encode(), timeout));
  } else {
    group_blobs = bootstrap_allgather(ids[g], rank - first[g], size[g], card.encode(), timeout);
    for (int i = 0; i < size[g]; ++i) blobs[first[g] + i] = group_blobs[i];
    if (leader) take_root0(bootstrap_allgather(ids[0], size[0] + g - 1, at_root0, encode_list(group_blobs), timeout));
  }

  prepare_peer_slots(comm);
  std::vector<RankCard> cards(n);
  auto decode_known = [&] {
    for (int r = 0; r < n; ++r)
      if (!blobs[r].empty()) cards[r] = RankCard::decode(blobs[r]);
  };
  decode_known();
  std::vector<bool> connected(n, false);
  connected[rank] = true;
  const Tag table_tag{unique_id_session(ids[0]), kTableSeq, 0};
  if (g != 0) {
    std::vector<int> partners;
    if (leader) {
      for (int r = first[g] + 1; r < first[g] + size[g]; ++r) partners.push_back(r);
    } else {
      partners.push_back(first[g]);
    }
    connect_peers(comm, cards, partners);
    for (int p : partners) connected[p] = true;
    // The table is bounded by what n cards can take: a leader cannot make its group allocate more.
    const uint64_t max_table = uint64_t(n) * (8 + RankCard::kMaxBytes);
    if (leader) {
      std::string table = encode_list(blobs);
      std::string length(8, '\0');
      for (int i = 0; i < 8; ++i) length[i] = static_cast<char>(uint64_t(table.size()) >> (8 * i));
      for (int p : partners) {
        transfer(comm, p, table_tag, true, length, 0);
        transfer(comm, p, table_tag, true, table, 0);
      }
    } else {
      const std::string length = transfer(comm, first[g], table_tag, false, "", 8);
      uint64_t bytes = 0;
      for (size_t i = 0; i < length.size(); ++i) bytes |= uint64_t(static_cast<uint8_t>(length[i])) << (8 * i);
      if (length.size() != 8 || bytes > max_table)
        fail(dcRemoteError, "DeepComm: scalable bootstrap: the group leader announced a card table of " +
                                std::to_string(bytes) + " bytes");
      const std::string table = transfer(comm, first[g], table_tag, false, "", bytes);
      if (table.size() != bytes) fail(dcRemoteError, "DeepComm: scalable bootstrap: a short card table");
      blobs = decode_list(table, n, RankCard::kMaxBytes);
      decode_known();
    }
  }
  std::vector<int> remaining;
  for (int r = 0; r < n; ++r)
    if (!connected[r]) remaining.push_back(r);
  finish_setup(comm, cards, remaining);
}

}  // namespace dc
