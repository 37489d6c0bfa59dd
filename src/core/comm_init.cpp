// Creating communicators: from a unique id (bootstrap exchange, then one connection per peer over
// the transport chosen by host identity), by splitting an existing one, and destroying them.

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <optional>
#include <thread>

#include "base/log.h"
#include "src/core/bootstrap.h"
#include "src/core/communicator.h"
#include "src/core/issue.h"
#include "src/core/parent_allgather.h"
#include "src/core/peer_setup.h"
#include "src/core/registration.h"
#include "src/exec/comm_failure.h"
#include "src/exec/engine.h"
#include "src/exec/engine_call.h"
#include "src/exec/links_release.h"
#include "src/exec/operation.h"

namespace dc {

namespace {

// How long abort waits for calls and operations on the communicator to end before it gives up
// freeing it (they were failed; they end at once unless a thread is stuck outside the library).
constexpr int kAbortWaitMs = 5000;
// How long destroy waits for the engine to free the connections: a few handlers' turns, not a
// peer's answer (warned about past it, as the memory then goes later).
constexpr int kReleaseWaitMs = 5000;

// The fields of a caller's dcConfig_t, read only as far as its size says.
const char* user_comm_name(const dcConfig_t* config) {
  return config && config->size >= offsetof(dcConfig_t, commName) + sizeof(char*) ? config->commName : nullptr;
}

void apply_user_options(const dcConfig_t* config, Config* into) {
  if (config && config->size >= offsetof(dcConfig_t, blocking) + sizeof(int)) into->blocking = config->blocking != 0;
  if (config && config->size >= offsetof(dcConfig_t, rmaContexts) + sizeof(int)) {
    if (config->rmaContexts < 0)
      fail(dcInvalidArgument,
           "DeepComm: dcConfig_t.rmaContexts must not be negative, not " + std::to_string(config->rmaContexts));
    into->rma_contexts = config->rmaContexts;
  }
}

// The settings a communicator runs with, also where the executor needs them.
void adopt_config(dcComm* comm, const Config& config) {
  comm->config = config;
  comm->exec.timeout_ms = config.timeout_ms;
  comm->exec.engine_timeout_ms = config.connect_timeout_ms;
}

// Frees a communicator whose operations all ended. Destroy returns with its memory given back: when
// no other communicator shares its connections, the engine has freed them (bounded wait).
void release(dcComm* comm) {
  if (comm->exec.links) release_registrations(comm);
  std::optional<LinksRelease> links;
  call_on_engine(
      [comm, &links] {
        stop_control_channel(&comm->exec);
        links.emplace(comm->exec.links);
      },
      comm->config.connect_timeout_ms, "stopping the control channel");
  delete comm;
  if (!links->wait(std::chrono::steady_clock::now() + std::chrono::milliseconds(kReleaseWaitMs)))
    DC_WARN("comm destroy: the engine had not freed the connections after %d ms; they are freed later", kReleaseWaitMs);
}

uint64_t mix(uint64_t a, uint64_t b) {
  uint64_t h = a ^ (b + 0x9E3779B97F4A7C15ull + (a << 6) + (a >> 2));
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return h;
}

// Bootstrap and connection set-up of a communicator whose fields were filled by init_rank.
void connect_comm(dcComm* comm, const dcUniqueId& id) {
  const RankCard card = open_transports(comm, unique_id_secret(id));
  std::vector<std::string> blobs =
      bootstrap_allgather(id, comm->exec.rank, comm->exec.nranks, card.encode(), comm->config.bootstrap_timeout_ms);
  std::vector<RankCard> cards;
  for (const auto& b : blobs) cards.push_back(RankCard::decode(b));
  prepare_peer_slots(comm);
  std::vector<int> others;
  for (int r = 0; r < comm->exec.nranks; ++r)
    if (r != comm->exec.rank) others.push_back(r);
  finish_setup(comm, cards, others);
}

// A grow id belongs to dcCommGrow: its root serves the grown communicator's size only.
void refuse_grow_id(const dcUniqueId& id) {
  if (grow_id_parent_nranks(id) > 0)
    fail(dcInvalidUsage,
         "DeepComm: the id is a grow id (ncclCommGetUniqueId/dcCommGrowId): pass it to ncclCommGrow/dcCommGrow");
}

}  // namespace

namespace {

// Runs `setup` on comm now (blocking), or on the communicator's own thread with
// dcCommGetAsyncError reporting dcInProgress until it finished; the API accepts comm either way.
dcComm* complete_setup(std::unique_ptr<dcComm> comm, std::function<void(dcComm*)> setup) {
  if (comm->config.blocking) {
    setup(comm.get());
    register_comm(comm.get());
    return comm.release();
  }
  dcComm* shell = comm.release();
  shell->initializing = true;
  register_comm(shell);
  shell->init_thread = std::thread([shell, setup] {
    try {
      setup(shell);
    } catch (const Error& e) {
      shell->exec.set_error(e.code(), e.what());
    } catch (const std::exception& e) {
      shell->exec.set_error(dcInternalError, std::string("DeepComm: internal error: ") + e.what());
    }
    shell->initializing = false;
  });
  return shell;
}

// A communicator of nranks whose connections `connect` sets up: now (blocking), or on the
// communicator's own thread with dcCommGetAsyncError reporting dcInProgress until it finished.
dcComm* start_comm(int nranks, int rank, uint64_t session, const dcConfig_t* config,
                   std::function<void(dcComm*)> connect) {
  if (nranks < 1) fail(dcInvalidArgument, "DeepComm: nranks must be >= 1 (got " + std::to_string(nranks) + ")");
  if (rank < 0 || rank >= nranks)
    fail(dcInvalidArgument,
         "DeepComm: rank " + std::to_string(rank) + " is out of range [0, " + std::to_string(nranks) + ")");
  auto comm = std::make_unique<dcComm>();
  adopt_config(comm.get(), Config::from_environment());
  comm->exec.rank = rank;
  comm->exec.nranks = nranks;
  comm->exec.id = session;
  if (const char* name = user_comm_name(config)) comm->name = name;
  apply_user_options(config, &comm->config);
  return complete_setup(std::move(comm), std::move(connect));
}

}  // namespace

dcComm* init_rank(int nranks, const dcUniqueId& id, int rank, const dcConfig_t* config) {
  validate_unique_id(id);
  refuse_grow_id(id);
  return start_comm(nranks, rank, unique_id_session(id), config, [id](dcComm* c) { connect_comm(c, id); });
}

dcComm* init_rank_when_id_known(int nranks, int rank, std::function<dcUniqueId()> obtain_id, const dcConfig_t* config) {
  return start_comm(nranks, rank, 0, config, [obtain_id](dcComm* c) {
    const dcUniqueId id = obtain_id();
    c->exec.id = unique_id_session(id);  // the transports' handshakes name it
    connect_comm(c, id);
  });
}

dcComm* init_rank_scalable(int nranks, int rank, const std::vector<dcUniqueId>& ids, const dcConfig_t* config) {
  if (ids.empty() || static_cast<int>(ids.size()) > nranks)
    fail(dcInvalidArgument, "DeepComm: scalable init needs 1 to nranks unique ids (got " + std::to_string(ids.size()) +
                                " for " + std::to_string(nranks) + " ranks)");
  for (const auto& id : ids) {
    validate_unique_id(id);
    refuse_grow_id(id);
  }
  return start_comm(nranks, rank, unique_id_session(ids[0]), config,
                    [ids](dcComm* c) { connect_comm_scalable(c, ids); });
}

dcComm* split_comm(dcComm* parent, int color, int key, const dcConfig_t* config) {
  if (color < 0 && color != DC_SPLIT_NOCOLOR)
    fail(dcInvalidArgument, "DeepComm: split color must be >= 0 or DC_SPLIT_NOCOLOR");
  // Everyone learns everyone's (color, key) through an all-gather on the parent, issued now (in
  // order with the parent's other operations).
  std::vector<uint8_t> mine(2 * sizeof(int32_t));
  const int32_t color_key[2] = {color, key};
  std::memcpy(mine.data(), color_key, mine.size());
  auto x = std::make_shared<const ParentAllGather>(parent, std::move(mine), "split");
  const uint64_t split_seq = parent->next_split_seq++;
  auto wait_exchange = [x] {
    const std::vector<uint8_t>& bytes = x->wait();
    std::vector<int32_t> all(bytes.size() / sizeof(int32_t));
    std::memcpy(all.data(), bytes.data(), bytes.size());
    return all;
  };
  if (color == DC_SPLIT_NOCOLOR) {
    wait_exchange();
    return nullptr;
  }

  auto child = std::make_unique<dcComm>();
  adopt_config(child.get(), parent->config);
  apply_user_options(config, &child->config);
  child->exec.links = parent->exec.links;
  child->name = parent->name;
  if (const char* name = user_comm_name(config)) child->name = name;
  const int parent_rank = parent->exec.rank;
  const std::vector<int> parent_links = parent->exec.link_index;
  const uint64_t parent_id = parent->exec.id;
  const std::shared_ptr<const ClusterView> parent_cluster = parent->cluster;
  // Completes the child once the exchange is done (on this thread, or on the child's set-up thread).
  auto finish = [wait_exchange, color, parent_rank, parent_links, parent_id, parent_cluster, split_seq](dcComm* c) {
    const std::vector<int32_t> all = wait_exchange();
    std::vector<std::pair<int32_t, int>> members;  // (key, parent rank)
    for (size_t r = 0; r < parent_links.size(); ++r)
      if (all[2 * r] == color) members.emplace_back(all[2 * r + 1], static_cast<int>(r));
    std::stable_sort(members.begin(), members.end());
    c->exec.nranks = static_cast<int>(members.size());
    c->exec.id = mix(mix(parent_id, split_seq), static_cast<uint64_t>(color));
    std::vector<int> parent_ranks;
    for (int i = 0; i < c->exec.nranks; ++i) {
      c->exec.link_index.push_back(parent_links[members[i].second]);
      parent_ranks.push_back(members[i].second);
      if (members[i].second == parent_rank) c->exec.rank = i;
    }
    c->cluster = parent_cluster->subset(parent_ranks);
    c->exec.reset_p2p_sequences();
    start_services(c);
  };
  return complete_setup(std::move(child), finish);
}

// Tells the peers this rank leaves, then waits (bounded) until every connection of comm handed its
// queued frames (that notice included) to the kernel.
void flush_connections(dcComm* comm) {
  struct Pending {
    std::mutex mutex;
    std::condition_variable cv;
    int left = 0;
  };
  auto pending = std::make_shared<Pending>();
  pending->left = comm->exec.nranks;
  auto links = comm->exec.links;
  std::vector<int> index = comm->exec.link_index;
  Engine::instance().post([comm, links, index, pending] {
    announce_leave(&comm->exec);
    for (int i : index) {
      links->peers[i]->flush([pending] {
        std::lock_guard<std::mutex> lock(pending->mutex);
        if (--pending->left == 0) pending->cv.notify_all();
      });
    }
  });
  Engine::Waiting waiting(Engine::instance());
  std::unique_lock<std::mutex> lock(pending->mutex);
  if (!pending->cv.wait_for(lock, std::chrono::milliseconds(comm->config.connect_timeout_ms),
                            [&] { return pending->left == 0; }))
    DC_WARN("comm destroy: connections did not drain their writes within the deadline");
}

dcComm* shrink_comm(dcComm* parent, std::vector<int> excluded, const dcConfig_t* config, int flags) {
  std::sort(excluded.begin(), excluded.end());
  for (size_t i = 0; i < excluded.size(); ++i) {
    if (excluded[i] < 0 || excluded[i] >= parent->exec.nranks)
      fail(dcInvalidArgument, "DeepComm: excluded rank " + std::to_string(excluded[i]) + " is out of range");
    if (i && excluded[i] == excluded[i - 1])
      fail(dcInvalidArgument, "DeepComm: rank " + std::to_string(excluded[i]) + " is excluded twice");
    if (excluded[i] == parent->exec.rank)
      fail(dcInvalidUsage, "DeepComm: this rank is in the exclude list of its own shrink");
  }
  if (flags & DC_SHRINK_ABORT) {
    fail_comm_from_caller(&parent->exec, Status::failure(dcSystemError, "DeepComm: operations aborted by shrink"));
    parent->exec.wait_idle(1000);
  }
  // Every remaining rank derives the same id from the parent's id, the shrink count and the list.
  uint64_t id = mix(mix(parent->exec.id, 0x5348524b00000000ull + parent->next_shrink_seq++), excluded.size());
  for (int r : excluded) id = mix(id, static_cast<uint64_t>(r));

  auto child = std::make_unique<dcComm>();
  adopt_config(child.get(), parent->config);
  child->exec.id = id;
  child->exec.links = parent->exec.links;
  child->name = parent->name;
  if (const char* name = user_comm_name(config)) child->name = name;
  std::vector<int> parent_ranks;
  for (int r = 0; r < parent->exec.nranks; ++r) {
    if (std::binary_search(excluded.begin(), excluded.end(), r)) continue;
    if (r == parent->exec.rank) child->exec.rank = static_cast<int>(child->exec.link_index.size());
    child->exec.link_index.push_back(parent->exec.link_index[r]);
    parent_ranks.push_back(r);
  }
  child->cluster = parent->cluster->subset(parent_ranks);
  child->exec.nranks = static_cast<int>(child->exec.link_index.size());
  child->exec.reset_p2p_sequences();
  start_services(child.get());
  register_comm(child.get());
  return child.release();
}

void destroy_comm(dcComm* comm) {
  retire_comm(comm);
  if (!wait_until_unused(comm, comm->config.timeout_ms)) {
    DC_WARN("comm destroy: another thread is still inside a call on the communicator; leaking it");
    return;
  }
  if (comm->init_thread.joinable()) comm->init_thread.join();  // bounded by the set-up deadlines
  if (!comm->exec.wait_idle(comm->config.timeout_ms)) {
    // Operations still reference it: leak rather than free memory the engine may touch.
    DC_WARN("comm destroy: operations still pending after the deadline; leaking the communicator");
    return;
  }
  if (comm->exec.control) flush_connections(comm);  // only a communicator whose set-up succeeded is connected
  release(comm);
}

void abort_comm(dcComm* comm) {
  retire_comm(comm);  // no call enters from now on
  if (comm->init_thread.joinable()) comm->init_thread.join();
  fail_comm_from_caller(&comm->exec, Status::failure(dcSystemError, "DeepComm: the communicator was aborted"));
  // Calls already inside (blocked in another thread) return now that their operations failed.
  if (!wait_until_unused(comm, kAbortWaitMs)) {
    DC_WARN("comm abort: a call on another thread did not return; leaking the communicator");
    return;
  }
  if (!comm->exec.wait_idle(kAbortWaitMs)) {
    DC_WARN("comm abort: operations did not end; leaking the communicator");
    return;
  }
  release(comm);
}

}  // namespace dc
