// Connecting one rank to its peers: the card each rank publishes at bootstrap (host identity,
// transport addresses, plan-shaping settings), the check that all ranks agree, and connection
// set-up per peer over the transport chosen by host identity.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "src/core/communicator.h"

namespace dc {

// What each rank tells the others at bootstrap: "key=value" lines.
struct RankCard {
  // The longest card a rank accepts from another (a few hundred bytes in practice).
  static constexpr size_t kMaxBytes = 64 * 1024;

  std::string host;
  std::string pid;
  uint64_t nonce = 0;                            // rank 0's becomes the communicator id
  std::vector<std::string> config;               // plan-shaping entries
  std::string node;                              // this rank's node summary (local_node.h), as hex
  std::map<std::string, std::string> addresses;  // transport name -> address
  bool receives_in_place = false;                // Transport::receives_in_place_on_host, over UCX

  std::string encode() const;
  // Throws dc::Error(dcRemoteError) for a card over kMaxBytes or a malformed entry.
  static RankCard decode(const std::string& blob);
};

// Creates comm's links and transports (per DEEPCOMM_TRANSPORT), whose connections prove `secret`;
// returns the card to publish.
RankCard open_transports(dcComm* comm, const Secret& secret);
// The cluster view of the ranks whose cards these are: their host identities and node summaries
// with the agreed topology file applied (the same on every rank). Throws dc::Error naming the
// rank whose summary is malformed, or the file's line that does not fit the cluster.
std::shared_ptr<const ClusterView> build_cluster_view(const Config& config, const std::vector<RankCard>& cards);
// DEEPCOMM_TOPO_DUMP_FILE: writes every host's node and the tiers in the topology file format;
// a path that cannot be written is a warning, not a failed init.
void dump_cluster_view(const ClusterView& view, const std::string& path);
// Fails (dcInvalidUsage, naming the variable) unless every card has this rank's settings.
void check_agreement(const std::vector<RankCard>& cards, int rank);
// Sizes the peer table and adds the self connection; before any connect_peers.
void prepare_peer_slots(dcComm* comm);
// Connects to `peers` (comm ranks whose cards are known), bounded by the connect timeout.
void connect_peers(dcComm* comm, const std::vector<RankCard>& cards, const std::vector<int>& peers);
// The rest of the set-up once every card is known: agreement, the id, connections to the peers
// not yet connected, the control channel.
void finish_setup(dcComm* comm, const std::vector<RankCard>& cards, const std::vector<int>& remaining);
// What a connected communicator runs before use (init, split, shrink): its control channel, then
// its flat board (every rank must call it, as the board's set-up is collective).
void start_services(dcComm* comm);
uint64_t random_nonce();

// Bootstrap through several roots (ncclCommInitRankScalable), then finish_setup.
void connect_comm_scalable(dcComm* comm, const std::vector<dcUniqueId>& ids);

}  // namespace dc
