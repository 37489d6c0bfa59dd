#include "src/exec/links_release.h"

#include <thread>

#include "src/exec/engine.h"

namespace dc {

namespace {

// How often a thread that cannot drive the engine (another thread does) looks again.
constexpr std::chrono::milliseconds kRecheck{1};

}  // namespace

LinksRelease::LinksRelease(const std::shared_ptr<PeerLinks>& links) : links_(links) {
  if (!links) return;
  for (const auto& connection : links->peers)
    if (connection) remains_.push_back(connection->remains());
  // Freed last: each transport's listener goes after the links themselves (see Transport::remains).
  for (const auto& transport : links->transports) remains_.push_back(transport->remains());
}

bool LinksRelease::freed() const {
  for (const auto& remain : remains_)
    if (!remain.expired()) return false;
  return true;
}

bool LinksRelease::wait(std::chrono::steady_clock::time_point deadline) const {
  if (!links_.expired() || freed()) return true;
  Engine& engine = Engine::instance();
  if (engine.drive_until([this] { return freed(); }, deadline)) return true;
  // Another thread drives: the engine runs the remaining handlers there.
  Engine::Waiting waiting(engine);
  while (!freed()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(kRecheck);
  }
  return true;
}

}  // namespace dc
