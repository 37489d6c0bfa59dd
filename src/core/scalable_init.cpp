// Bootstrap through several rendezvous roots (ncclCommInitRankScalable). Ranks are spread evenly
// over the k roots: group g = rank * k / nranks. Root 0 serves group 0 together with the leader (the
// lowest rank) of every other group; every other root serves its own group. So no root handles more
// than about nranks/k + k joins:
//   1. a rank of group g >= 1 exchanges cards with its group through root g;
//   2. group 0 and the leaders exchange through root 0, each leader standing for its group: now they
//      know every card;
//   3. each leader connects to its group and hands it the full table; then everyone connects to the
//      rest as after an ordinary bootstrap.
#include <cstring>
#include <memory>

#include "src/core/bootstrap.h"
#include "src/exec/engine_call.h"
#include "src/core/peer_setup.h"
#include "src/exec/engine.h"

namespace dc {

namespace {

constexpr uint64_t kTableSeq = 1ull << 61;  // tag of the leader's table, apart from operations

std::string encode_list(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) {
    const uint64_t n = item.size();
    out.append(reinterpret_cast<const char*>(&n), sizeof n);
    out += item;
  }
  return out;
}

std::vector<std::string> decode_list(const std::string& blob) {
  std::vector<std::string> items;
  size_t at = 0;
  while (at + sizeof(uint64_t) <= blob.size()) {
    uint64_t n = 0;
    std::memcpy(&n, blob.data() + at, sizeof n);
    at += sizeof n;
    if (n > blob.size() - at) fail(dcInternalError, "DeepComm: malformed card table in scalable bootstrap");
    items.push_back(blob.substr(at, n));
    at += n;
  }
  return items;
}

// Moves one message over an established connection, waiting for it (bounded).
void transfer(dcComm* comm, int peer, bool sending, void* buf, size_t len, const Tag& tag) {
  auto done = std::make_shared<std::promise<Status>>();
  auto result = done->get_future();
  Connection* conn = comm->exec.links->peers[peer].get();
  Engine::instance().post([=] {
    auto completion = [done](const Status& s, size_t) { done->set_value(s); };
    if (sending) conn->send(tag, buf, len, completion);
    else conn->recv(tag, buf, len, completion);
  });
  if (result.wait_for(std::chrono::milliseconds(comm->config.bootstrap_timeout_ms)) != std::future_status::ready)
    fail(dcSystemError, "DeepComm: scalable bootstrap timed out passing the card table");
  const Status s = result.get();
  if (!s.ok()) throw Error(s.code, s.message);
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

  const RankCard card = open_transports(comm);
  std::vector<std::string> blobs(n);  // every rank's card, as far as known
  auto take_root0 = [&](const std::vector<std::string>& joined) {
    for (int i = 0; i < size[0]; ++i) blobs[first[0] + i] = joined[i];
    for (int j = 1; j < k; ++j) {
      std::vector<std::string> group = decode_list(joined[size[0] + j - 1]);
      for (size_t i = 0; i < group.size(); ++i) blobs[first[j] + i] = group[i];
    }
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
    if (leader) {
      std::string table = encode_list(blobs);
      uint64_t length = table.size();
      for (int p : partners) {
        transfer(comm, p, true, &length, sizeof length, table_tag);
        transfer(comm, p, true, table.data(), table.size(), table_tag);
      }
    } else {
      uint64_t length = 0;
      transfer(comm, first[g], false, &length, sizeof length, table_tag);
      std::string table(length, '\0');
      transfer(comm, first[g], false, table.data(), table.size(), table_tag);
      blobs = decode_list(table);
      if (static_cast<int>(blobs.size()) != n) fail(dcInternalError, "DeepComm: incomplete card table from the group leader");
      decode_known();
    }
  }
  std::vector<int> remaining;
  for (int r = 0; r < n; ++r)
    if (!connected[r]) remaining.push_back(r);
  finish_setup(comm, cards, remaining);
}

}  // namespace dc
