#include "src/core/communicator.h"

#include <chrono>
#include <condition_variable>
#include <set>
#include <sstream>

#include "src/core/registration.h"
#include "src/exec/prepared_plan.h"

dcComm::dcComm() = default;  // here, where Registration and PreparedPlan are complete
dcComm::~dcComm() = default;

namespace dc {

namespace {

std::mutex g_registry_mutex;
std::condition_variable g_users_left;  // a CommUse ended
std::set<dcComm*>& registry() {
  static auto* comms = new std::set<dcComm*>();
  return *comms;
}

}  // namespace

void register_comm(dcComm* comm) {
  std::lock_guard<std::mutex> lock(g_registry_mutex);
  registry().insert(comm);
}

dcComm* checked_comm(dcComm* comm) {
  if (!comm) fail(dcInvalidArgument, "DeepComm: communicator is NULL");
  std::lock_guard<std::mutex> lock(g_registry_mutex);
  if (!registry().count(comm))
    fail(dcInvalidArgument, "DeepComm: communicator is not valid (destroyed, or never created)");
  return comm;
}

CommUse::CommUse(dcComm* comm) : comm_(comm) {
  if (!comm) fail(dcInvalidArgument, "DeepComm: communicator is NULL");
  std::lock_guard<std::mutex> lock(g_registry_mutex);
  if (!registry().count(comm))
    fail(dcInvalidArgument, "DeepComm: communicator is not valid (destroyed, being destroyed, or never created)");
  ++comm->users;
}

CommUse::~CommUse() {
  std::lock_guard<std::mutex> lock(g_registry_mutex);
  --comm_->users;
  g_users_left.notify_all();
}

void retire_comm(dcComm* comm) {
  if (!comm) fail(dcInvalidArgument, "DeepComm: communicator is NULL");
  std::lock_guard<std::mutex> lock(g_registry_mutex);
  if (registry().erase(comm) == 0)
    fail(dcInvalidArgument, "DeepComm: communicator is not valid (destroyed, being destroyed, or never created)");
}

bool wait_until_unused(dcComm* comm, int timeout_ms) {
  std::unique_lock<std::mutex> lock(g_registry_mutex);
  return g_users_left.wait_for(lock, std::chrono::milliseconds(timeout_ms), [comm] { return comm->users == 0; });
}

// Called from the issuing thread only (one thread per communicator), so the cache needs no lock
// against other callers; the engine only reads the shared_ptr it is handed.
std::shared_ptr<const PreparedPlan> prepared_plan(dcComm* comm, const PlanRequest& request) {
  const PlanRequest::Key key = request.key();
  auto it = comm->plan_cache.find(key);
  if (it != comm->plan_cache.end()) return it->second;
  if (comm->plan_cache.size() >= 256) comm->plan_cache.clear();
  auto prepared = prepare_plan(request);
  comm->plan_cache.emplace(key, prepared);
  return prepared;
}

}  // namespace dc
