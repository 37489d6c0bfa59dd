#include "src/core/peer_setup.h"

#include <sys/random.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <sstream>

#include "base/log.h"
#include "src/core/flat_setup.h"
#include "src/core/local_node.h"
#include "src/exec/comm_failure.h"
#include "src/exec/engine.h"
#include "src/exec/engine_call.h"
#include "transports/self/self_connection.h"

namespace dc {

std::string RankCard::encode() const {
  std::ostringstream out;
  out << "host=" << host << '\n' << "pid=" << pid << '\n' << "nonce=" << nonce << '\n' << "node=" << node << '\n';
  for (const auto& c : config) out << "config=" << c << '\n';
  out << "in_place=" << receives_in_place << '\n';
  for (const auto& [name, addr] : addresses) out << "addr." << name << '=' << addr << '\n';
  return out.str();
}

RankCard RankCard::decode(const std::string& blob) {
  if (blob.size() > kMaxBytes)
    fail(dcRemoteError, "DeepComm: a rank's card of " + std::to_string(blob.size()) + " bytes");
  RankCard card;
  std::istringstream in(blob);
  std::string line;
  while (std::getline(in, line)) {
    auto eq = line.find('=');
    if (eq == std::string::npos) continue;
    std::string key = line.substr(0, eq), value = line.substr(eq + 1);
    if (key == "host") card.host = value;
    else if (key == "pid") card.pid = value;
    else if (key == "nonce") {
      char* end = nullptr;
      errno = 0;
      card.nonce = std::strtoull(value.c_str(), &end, 10);
      if (value.empty() || *end || errno || value[0] == '-')
        fail(dcRemoteError, "DeepComm: a rank's card has a bad nonce");
    } else if (key == "node") card.node = value;
    else if (key == "config") card.config.push_back(value);
    else if (key == "in_place") card.receives_in_place = value == "1";
    else if (key.rfind("addr.", 0) == 0) card.addresses[key.substr(5)] = value;
  }
  return card;
}

namespace {

std::shared_ptr<PeerLinks> make_links() {
  // Transports and connections belong to the engine thread: free them there.
  return std::shared_ptr<PeerLinks>(new PeerLinks(),
                                    [](PeerLinks* links) { Engine::instance().post([links] { delete links; }); });
}

// Every rank must run the same plans: compare the plan-shaping configuration of all ranks.
}  // namespace

RankCard open_transports(dcComm* comm, const Secret& secret) {
  comm->exec.links = make_links();
  TransportOptions options;
  options.io = &Engine::instance().io();
  options.rank = comm->exec.rank;
  options.session = comm->exec.id;
  options.host_id = host_identity();
  options.secret = secret;
  RankCard card;
  card.host = options.host_id;
  card.pid = std::to_string(getpid());
  card.nonce = random_nonce();
  card.config = comm->config.plan_shaping_entries();
  card.node = summary_to_card(local_node_summary());
  auto links = comm->exec.links;
  const TransportChoice choice = comm->config.transport;
  // `auto` offers UCX too where this node has an RDMA port that is up; a peer on another host
  // that offers it as well is then reached through UCX (pick_transport).
  const bool auto_ucx = choice == TransportChoice::Auto && topo::has_active_rdma_port(local_node_summary());
  struct Published {
    std::map<std::string, std::string> addresses;
    bool receives_in_place = false;
  };
  Published published = call_on_engine(
      [links, options, choice, auto_ucx] {
        Published out;
        using T = TransportChoice;
        if (choice == T::Auto || choice == T::Tcp) links->transports.push_back(make_tcp_transport(options));
        if (choice == T::Auto || choice == T::Shm || choice == T::Ucx)
          links->transports.push_back(make_shm_transport(options));
        if (choice == T::Ucx || choice == T::UcxAll) links->transports.push_back(make_ucx_transport(options));
        if (auto_ucx) {
          // Optional here: without UCX (not built, libucp not loadable) the hosts talk over TCP.
          try {
            links->transports.push_back(make_ucx_transport(options));
          } catch (const Error& e) {
            DC_INFO("DeepComm: an RDMA port is up but UCX is not usable, so TCP carries the bytes between hosts: %s",
                    e.what());
          }
        }
        for (auto& t : links->transports) out.addresses[t->name()] = t->address();
        // Only where whichever transport reaches a local peer receives in place (ucx-all's UCX alone).
        out.receives_in_place = std::all_of(links->transports.begin(), links->transports.end(),
                                            [](const auto& t) { return t->receives_in_place_on_host(); });
        return out;
      },
      comm->config.connect_timeout_ms, "creating transports");
  card.addresses = std::move(published.addresses);
  card.receives_in_place = published.receives_in_place;
  return card;
}

void check_agreement(const std::vector<RankCard>& cards, int rank) {
  const auto& mine = cards[rank].config;
  for (size_t r = 0; r < cards.size(); ++r) {
    const auto& theirs = cards[r].config;
    for (size_t i = 0; i < std::max(mine.size(), theirs.size()); ++i) {
      std::string a = i < mine.size() ? mine[i] : "(missing)";
      std::string b = i < theirs.size() ? theirs[i] : "(missing)";
      if (a != b) {
        std::string variable = a.substr(0, a.find('='));
        fail(dcInvalidUsage, "DeepComm: ranks disagree on " + variable + ": rank " + std::to_string(rank) + " has " +
                                 a + ", rank " + std::to_string(r) + " has " + b +
                                 " (plan-shaping settings must be the same on every rank)");
      }
    }
  }
}

namespace {

const char* pick_transport(const Config& config, const RankCard& me, const RankCard& peer, int peer_rank) {
  const bool same_host = me.host == peer.host;
  switch (config.transport) {
    case TransportChoice::Tcp: return "tcp";
    case TransportChoice::Shm:
      if (!same_host)
        fail(dcInvalidUsage,
             "DeepComm: DEEPCOMM_TRANSPORT=shm but rank " + std::to_string(peer_rank) + " is on another host");
      return "shm";
    case TransportChoice::Ucx: return same_host ? "shm" : "ucx";
    case TransportChoice::UcxAll: return "ucx";
    case TransportChoice::Auto: break;
  }
  if (same_host) return "shm";
  // Both ends offer UCX only where their nodes have an RDMA port up: the choice is the same on both.
  const bool both_ucx = me.addresses.count("ucx") && peer.addresses.count("ucx");
  return both_ucx ? "ucx" : "tcp";
}

}  // namespace

void prepare_peer_slots(dcComm* comm) {
  comm->exec.links->peers.assign(comm->exec.nranks, nullptr);
  comm->exec.links->peers[comm->exec.rank] = make_self_connection(Engine::instance().io());
}

void connect_peers(dcComm* comm, const std::vector<RankCard>& cards, const std::vector<int>& peers) {
  auto& links = *comm->exec.links;
  const RankCard& me = cards[comm->exec.rank];
  struct Pending {
    std::mutex mutex;
    std::condition_variable cv;
    int left = 0;
    Status status;
  };
  auto pending = std::make_shared<Pending>();
  pending->left = static_cast<int>(peers.size());
  if (peers.empty()) return;
  std::vector<std::pair<Transport*, std::string>> plan(comm->exec.nranks, {nullptr, ""});
  for (int p : peers) {
    std::string name = pick_transport(comm->config, me, cards[p], p);
    auto it = cards[p].addresses.find(name);
    if (it == cards[p].addresses.end())
      fail(dcInvalidUsage, "DeepComm: rank " + std::to_string(p) + " offers no " + name + " transport");
    for (auto& t : links.transports)
      if (name == t->name()) plan[p] = {t.get(), it->second};
  }
  const int timeout = comm->config.connect_timeout_ms;
  auto links_ptr = comm->exec.links;
  Engine::instance().post([links_ptr, plan, peers, pending, timeout] {
    for (int p : peers) {
      plan[p].first->connect(p, plan[p].second, timeout,
                             [links_ptr, pending, p](const Status& s, std::shared_ptr<Connection> c) {
                               std::lock_guard<std::mutex> lock(pending->mutex);
                               if (s.ok()) links_ptr->peers[p] = std::move(c);
                               else if (pending->status.ok()) pending->status = s;
                               if (--pending->left == 0) pending->cv.notify_all();
                             });
    }
  });
  Engine::Waiting waiting(Engine::instance());
  std::unique_lock<std::mutex> lock(pending->mutex);
  bool finished =
      pending->cv.wait_for(lock, std::chrono::milliseconds(timeout + 5000), [&] { return pending->left == 0; });
  if (!finished) fail(dcSystemError, "DeepComm: connecting to peers timed out");
  if (!pending->status.ok()) throw Error(pending->status.code, pending->status.message);
}

std::shared_ptr<const ClusterView> build_cluster_view(const Config& config, const std::vector<RankCard>& cards) {
  ClusterInputs in;
  for (size_t r = 0; r < cards.size(); ++r) {
    in.host_ids.push_back(cards[r].host);
    try {
      in.nodes.push_back(summary_from_card(cards[r].node));
    } catch (const Error& e) {
      fail(dcInvalidUsage, "DeepComm: rank " + std::to_string(r) + "'s node summary: " + e.what());
    }
  }
  in.file = config.topology_file.get();
  in.shared_memory = config.transport != TransportChoice::Tcp && config.transport != TransportChoice::UcxAll;
  in.receives_in_place = std::all_of(cards.begin(), cards.end(), [](const RankCard& c) { return c.receives_in_place; });
  return ClusterView::build(in);
}

void dump_cluster_view(const ClusterView& view, const std::string& path) {
  try {
    topo::dump_topology_file(topo::topology_file_of(view), path);
    DC_INFO("wrote the cluster's topology to %s", path.c_str());
  } catch (const Error& e) {
    DC_WARN("DEEPCOMM_TOPO_DUMP_FILE: %s", e.what());
  }
}

void finish_setup(dcComm* comm, const std::vector<RankCard>& cards, const std::vector<int>& remaining) {
  check_agreement(cards, comm->exec.rank);
  // With NCCL_COMM_ID or torchrun every id names the same address, so the id's session is not
  // unique per communicator: rank 0's random nonce is.
  comm->exec.id = cards[0].nonce;
  comm->cluster = build_cluster_view(comm->config, cards);
  if (comm->exec.rank == 0 && !comm->config.topology_dump_path.empty())
    dump_cluster_view(*comm->cluster, comm->config.topology_dump_path);
  connect_peers(comm, cards, remaining);
  comm->exec.link_index.resize(comm->exec.nranks);
  for (int r = 0; r < comm->exec.nranks; ++r) comm->exec.link_index[r] = r;
  comm->exec.reset_p2p_sequences();
  start_services(comm);
  DC_INFO("comm %016llx rank %d/%d ready", static_cast<unsigned long long>(comm->exec.id), comm->exec.rank,
          comm->exec.nranks);
}

void start_services(dcComm* comm) {
  call_on_engine([comm] { start_control_channel(&comm->exec); }, comm->config.connect_timeout_ms,
                 "starting the control channel");
  attach_flat_board(comm);
}

uint64_t random_nonce() {
  uint64_t v = 0;
  if (getrandom(&v, sizeof v, 0) != sizeof v) fail(dcSystemError, "DeepComm: getrandom failed");
  return v;
}

}  // namespace dc
