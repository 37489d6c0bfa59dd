#include "src/core/captured_operations.h"

#include <poll.h>

#include <atomic>
#include <thread>

#include "base/error.h"
#include "base/log.h"

namespace dc {

namespace {

// The lists of destroyed bridges whose graphs still live, served by one thread started at the
// first adoption. Never destroyed: graphs may be replayed or dropped until the process ends.
class Keeper {
 public:
  static Keeper& instance() {
    static Keeper* keeper = new Keeper;
    return *keeper;
  }

  void adopt(std::shared_ptr<CapturedList> list, bool until_exit) {
    std::lock_guard<std::mutex> lock(mutex_);
    lists_.push_back({std::move(list), until_exit});
    if (!thread_.joinable()) thread_ = std::thread(&Keeper::serve, this);
    adopted_.ring();
  }

  uint64_t passes() const { return passes_.load(std::memory_order_acquire); }

  size_t operations() {
    std::lock_guard<std::mutex> lock(mutex_);
    size_t total = 0;
    for (const Kept& kept : lists_) total += kept.list->size();
    return total;
  }

 private:
  struct Kept {
    std::shared_ptr<CapturedList> list;
    bool until_exit;  // streams may still write its eventfd outside any graph
    bool warned = false;
  };

  // How long the thread sleeps when nothing rings: only a bound (doorbells and releases wake it).
  static constexpr int kIdlePollMs = 1000;

  Keeper() = default;

  void serve() {
    pthread_setname_np(pthread_self(), "dc-graph-keeper");
    for (;;) {
      std::vector<const EventFd*> rung_by{&adopted_};
      {
        std::lock_guard<std::mutex> lock(mutex_);
        for (Kept& kept : lists_) {
          for (const auto& op : kept.list->take_rung()) {
            kept.list->open_gates(*op);
            if (!kept.warned)
              DC_WARN(
                  "a CUDA graph replayed device operations of a destroyed communicator: they did not run (their "
                  "outputs keep the last bytes of their slots)");
            kept.warned = true;
          }
        }
        std::erase_if(lists_, [](const Kept& kept) { return !kept.until_exit && kept.list->size() == 0; });
        for (const Kept& kept : lists_) rung_by.push_back(&kept.list->wake_event());
      }
      passes_.fetch_add(1, std::memory_order_release);
      // The lists stay alive while polled: only this thread drops them.
      std::vector<pollfd> fds;
      for (const EventFd* event : rung_by) fds.push_back({event->fd(), POLLIN, 0});
      if (poll(fds.data(), fds.size(), kIdlePollMs) > 0)
        for (size_t i = 0; i < fds.size(); ++i)
          if (fds[i].revents & POLLIN) rung_by[i]->drain();
    }
  }

  const EventFd adopted_{"the graph keeper"};
  std::mutex mutex_;
  std::vector<Kept> lists_;
  std::atomic<uint64_t> passes_{0};
  std::thread thread_;
};

uint64_t load(const uint64_t& word) {
  return std::atomic_ref<uint64_t>(const_cast<uint64_t&>(word)).load(std::memory_order_acquire);
}

}  // namespace

bool CapturedBlock::rung() const {
  for (size_t l = 0; l < lanes; ++l)
    if (load(doorbells()[l]) != 1) return false;
  return true;
}

CapturedList::CapturedList(device::StreamQueue& streams) : streams_(streams) {}

Status CapturedList::retain(const std::shared_ptr<CapturedList>& list, device::Stream stream,
                            std::shared_ptr<CapturedBlock> op) {
  // Runs on CUDA's thread, which may make no CUDA call: it only marks the block.
  std::weak_ptr<CapturedList> weak = list;
  Status status = list->streams_.retain_until_graph_destroyed(stream, [weak, op] {
    if (auto alive = weak.lock()) {
      std::lock_guard<std::mutex> lock(alive->mutex_);
      op->released = true;
      alive->wake_.ring();
    }
  });
  if (!status.ok()) return status;
  std::lock_guard<std::mutex> lock(list->mutex_);
  list->ops_.push_back(std::move(op));
  return status;
}

std::vector<std::shared_ptr<CapturedBlock>> CapturedList::take_rung() {
  std::vector<std::shared_ptr<CapturedBlock>> rung;
  std::lock_guard<std::mutex> lock(mutex_);
  std::erase_if(ops_, [&](const std::shared_ptr<CapturedBlock>& op) {
    if (op->released) {
      streams_.free_pinned(op->block);  // no replay of its graph runs any more
      return true;
    }
    if (op->rung()) rung.push_back(op);
    return false;
  });
  // A graph is not released while a replay of it runs: the blocks returned stay.
  for (const auto& op : rung)
    for (size_t l = 0; l < op->lanes; ++l) std::atomic_ref<uint64_t>(op->doorbells()[l]).store(0);
  return rung;
}

void CapturedList::open_gates(const CapturedBlock& op) {
  for (size_t l = 0; l < op.lanes; ++l) streams_.open_gate(&op.gates()[l], 1);
}

size_t CapturedList::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return ops_.size();
}

void keep_after_bridge(std::shared_ptr<CapturedList> list, bool until_exit) {
  Keeper::instance().adopt(std::move(list), until_exit);
}

size_t kept_captured_operations() { return Keeper::instance().operations(); }

uint64_t keeper_passes() { return Keeper::instance().passes(); }

}  // namespace dc
