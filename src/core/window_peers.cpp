#include "src/core/window_peers.h"

#include <sys/mman.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>

#include "base/log.h"
#include "base/memfd.h"
#include "base/shareable_memory.h"
#include "src/exec/engine.h"
#include "src/exec/engine_call.h"

namespace dc {

namespace {

// The key a rank's region travels under on its connections: apart from the flat board's (the
// communicator id itself) and from other windows'.
uint64_t region_key(const dcComm* comm, uint32_t number) {
  return comm->exec.id ^ (0x57494e0000000000ull + (static_cast<uint64_t>(number) << 8) + 1);
}

// The peers' memfds as they arrive (engine thread) and the waiting caller.
struct Arrivals {
  std::mutex mutex;
  std::condition_variable cv;
  int expected = 0;
  int arrived = 0;
  bool abandoned = false;
  std::vector<UniqueFd> fds;
};

struct Mapping {
  void* base;
  size_t bytes;
};

}  // namespace

LoadStoreTeam load_store_team(const dcComm* comm) {
  const int rank = comm->exec.rank;
  LoadStoreTeam alone{rank, 1};
  if (!comm->cluster || !comm->cluster->shared_memory()) return alone;
  const ClusterView& cluster = *comm->cluster;
  const std::vector<int>& mine = cluster.ranks_on_host(cluster.host_of(rank));
  const int size = static_cast<int>(mine.size());
  for (int host = 0; host < cluster.nhosts(); ++host) {
    const std::vector<int>& ranks = cluster.ranks_on_host(host);
    if (static_cast<int>(ranks.size()) != size) return alone;
    for (int i = 1; i < size; ++i)
      if (ranks[i] != ranks[0] + i) return alone;
  }
  for (int p : mine)
    if (p != rank && std::string(comm->exec.peer(p)->transport_name()) != "shm") return alone;
  return LoadStoreTeam{mine[0], size};
}

WindowEntry describe_window(const Registration& window) {
  WindowEntry entry;
  entry.number = window.window_number;
  entry.bytes = window.size;
  ShareableRegion region;
  if (find_shareable(window.addr, window.size, &region)) {
    entry.shareable = 1;
    entry.region_bytes = region.size;
    entry.region_offset = static_cast<uint64_t>(static_cast<char*>(window.addr) - static_cast<char*>(region.base));
  }
  return entry;
}

void map_peer_windows(dcComm* comm, Registration* window, const std::vector<WindowEntry>& entries) {
  const int nranks = comm->exec.nranks, rank = comm->exec.rank;
  window->window_addresses.assign(nranks, nullptr);
  window->window_addresses[rank] = window->addr;
  const uint64_t key = region_key(comm, window->window_number);
  auto links = comm->exec.links;
  std::vector<int> index = comm->exec.link_index;

  ShareableRegion mine;
  if (entries[rank].shareable && find_shareable(window->addr, window->size, &mine)) {
    // A connection that is not over shared memory takes nothing: that peer waits for nothing either.
    call_on_engine(
        [&] {
          for (int p = 0; p < nranks; ++p)
            if (p != rank) links->peers[index[p]]->pass_memory(key, mine.fd, mine.size);
        },
        comm->exec.engine_timeout_ms, "passing a window");
  }

  auto arrivals = std::make_shared<Arrivals>();
  arrivals->fds.resize(nranks);
  for (int p = 0; p < nranks; ++p) arrivals->expected += p != rank && entries[p].shareable;
  if (arrivals->expected == 0) return;
  Engine::instance().post([links, index, key, entries, rank, arrivals] {
    for (int p = 0; p < static_cast<int>(entries.size()); ++p) {
      if (p == rank || !entries[p].shareable) continue;
      links->peers[index[p]]->receive_memory(key, entries[p].region_bytes, [arrivals, p](int fd) {
        std::lock_guard<std::mutex> lock(arrivals->mutex);
        UniqueFd arrived(fd);
        if (!arrivals->abandoned) arrivals->fds[p] = std::move(arrived);
        ++arrivals->arrived;
        arrivals->cv.notify_all();
      });
    }
  });
  std::vector<UniqueFd> fds;
  {
    Engine::Waiting waiting(Engine::instance());
    std::unique_lock<std::mutex> lock(arrivals->mutex);
    const bool all = arrivals->cv.wait_for(lock, std::chrono::milliseconds(comm->config.connect_timeout_ms),
                                           [&] { return arrivals->arrived == arrivals->expected; });
    arrivals->abandoned = true;
    fds = std::move(arrivals->fds);
    if (!all)
      DC_INFO("DeepComm: window %u: some peers' regions did not arrive; puts to them go as messages",
              window->window_number);
  }

  auto mappings = std::make_shared<std::vector<Mapping>>();
  for (int p = 0; p < nranks; ++p) {
    if (!fds[p]) continue;  // not over shared memory
    const std::string bad = check_received_memfd(fds[p].get(), entries[p].region_bytes);
    if (!bad.empty() || entries[p].region_offset + entries[p].bytes > entries[p].region_bytes) {
      DC_INFO("DeepComm: window %u of rank %d is not mapped: %s", window->window_number, p, bad.c_str());
      continue;
    }
    void* base = nullptr;
    try {
      base = map_memfd(fds[p].get(), entries[p].region_bytes, true, "DeepComm: a peer's window");
    } catch (const Error& e) {
      DC_INFO("%s; puts to rank %d go as messages", e.what(), p);
      continue;
    }
    mappings->push_back({base, entries[p].region_bytes});
    window->window_addresses[p] = static_cast<char*>(base) + entries[p].region_offset;
  }
  window->peer_mappings = std::shared_ptr<void>(nullptr, [mappings](void*) {
    for (const Mapping& m : *mappings) munmap(m.base, m.bytes);
  });
}

}  // namespace dc
