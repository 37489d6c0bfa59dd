#include "base/poll_hooks.h"

#include <memory>
#include <mutex>
#include <utility>
#include <vector>

namespace dc::poll_hooks {

namespace {

using Hooks = std::vector<std::pair<uint64_t, std::shared_ptr<const Hook>>>;

struct Registry {
  std::mutex mutex;
  // Replaced, never changed in place: a caller iterates its own snapshot while hooks come and go
  // (a hook's own call may remove it).
  std::shared_ptr<const Hooks> hooks = std::make_shared<const Hooks>();
  uint64_t next_id = 1;
};

Registry& registry() {
  static Registry* r = new Registry();  // lives until exit: drivers may outlive statics
  return *r;
}

std::shared_ptr<const Hooks> snapshot() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  return r.hooks;
}

thread_local bool t_polling = false;

}  // namespace

uint64_t add(Hook hook) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto hooks = std::make_shared<Hooks>(*r.hooks);
  const uint64_t id = r.next_id++;
  hooks->emplace_back(id, std::make_shared<const Hook>(std::move(hook)));
  r.hooks = std::move(hooks);
  return id;
}

void remove(uint64_t id) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto hooks = std::make_shared<Hooks>();
  for (const auto& entry : *r.hooks)
    if (entry.first != id) hooks->push_back(entry);
  r.hooks = std::move(hooks);
}

bool poll_all() {
  bool worked = false;
  for (const auto& entry : *snapshot()) worked = entry.second->poll() || worked;
  return worked;
}

bool arm_all() {
  bool armed = true;
  for (const auto& entry : *snapshot()) armed = entry.second->arm() && armed;
  return armed;
}

void settle_all() {
  for (const auto& entry : *snapshot()) entry.second->settle();
}

bool polling_here() { return t_polling; }

PollingScope::PollingScope() { t_polling = true; }
PollingScope::~PollingScope() { t_polling = false; }

}  // namespace dc::poll_hooks
