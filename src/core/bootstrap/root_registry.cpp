#include "src/core/bootstrap/root_registry.h"

#include <pthread.h>
#include <unistd.h>

#include <memory>
#include <mutex>
#include <vector>

#include "src/core/bootstrap/rendezvous_root.h"

namespace dc {

namespace {

struct Registry {
  std::mutex mutex;
  std::vector<std::unique_ptr<RendezvousRoot>> roots;
};

// Replaced, never destroyed, in a forked child: the parent's roots (their threads, their locked
// mutex) do not exist there.
Registry* g_registry = nullptr;

void lock_before_fork() { g_registry->mutex.lock(); }
void unlock_in_parent() { g_registry->mutex.unlock(); }

void forget_parent_roots_in_child() {
  // The child shares the parent's listening sockets; closing its copies keeps a port from staying
  // open after the parent's root closed it.
  for (const auto& root : g_registry->roots)
    if (int fd = root->listen_fd(); fd >= 0) close(fd);
  g_registry = new Registry;
}

// Stops and joins the roots still serving when the process exits.
struct RegistryOwner {
  RegistryOwner() {
    g_registry = new Registry;
    pthread_atfork(lock_before_fork, unlock_in_parent, forget_parent_roots_in_child);
  }
  ~RegistryOwner() {
    std::vector<std::unique_ptr<RendezvousRoot>> roots;
    {
      std::lock_guard<std::mutex> lock(g_registry->mutex);
      roots.swap(g_registry->roots);
    }
    roots.clear();
  }
};

Registry& registry() {
  static RegistryOwner owner;
  return *g_registry;
}

}  // namespace

boost::asio::ip::tcp::endpoint start_rendezvous_root(const boost::asio::ip::tcp::endpoint& bind_to, bool reuse_address,
                                                     const IdCredentials& credentials,
                                                     std::chrono::milliseconds deadline) {
  auto root = std::make_unique<RendezvousRoot>(bind_to, reuse_address, credentials, deadline);
  root->start();
  auto endpoint = root->local_endpoint();
  Registry& r = registry();
  std::vector<std::unique_ptr<RendezvousRoot>> finished;
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    for (auto& old : r.roots)
      if (old->finished()) finished.push_back(std::move(old));
    std::erase(r.roots, nullptr);
    r.roots.push_back(std::move(root));
  }
  return endpoint;  // the finished roots are joined here, outside the lock
}

}  // namespace dc
