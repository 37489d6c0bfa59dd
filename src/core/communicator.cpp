#include "src/core/communicator.h"

#include <set>
#include <sstream>

#include "src/core/registration.h"
#include "src/exec/prepared_plan.h"

dcComm::dcComm() = default;  // here, where Registration and PreparedPlan are complete
dcComm::~dcComm() = default;

namespace dc {

namespace {

std::mutex g_registry_mutex;
std::set<dcComm*>& registry() {
  static auto* comms = new std::set<dcComm*>();
  return *comms;
}

}  // namespace

void register_comm(dcComm* comm) {
  std::lock_guard<std::mutex> lock(g_registry_mutex);
  registry().insert(comm);
}

void unregister_comm(dcComm* comm) {
  std::lock_guard<std::mutex> lock(g_registry_mutex);
  registry().erase(comm);
}

dcComm* checked_comm(dcComm* comm) {
  if (!comm) fail(dcInvalidArgument, "DeepComm: communicator is NULL");
  std::lock_guard<std::mutex> lock(g_registry_mutex);
  if (!registry().count(comm))
    fail(dcInvalidArgument, "DeepComm: communicator is not valid (destroyed, or never created)");
  return comm;
}

// Called from the issuing thread only (one thread per communicator), so the cache needs no lock
// against other callers; the engine only reads the shared_ptr it is handed.
std::shared_ptr<const PreparedPlan> prepared_plan(dcComm* comm, const PlanRequest& request) {
  const std::string key = request.key();
  auto it = comm->plan_cache.find(key);
  if (it != comm->plan_cache.end()) return it->second;
  if (comm->plan_cache.size() >= 256) comm->plan_cache.clear();
  auto prepared = prepare_plan(make_plan(request));
  comm->plan_cache.emplace(key, prepared);
  return prepared;
}

}  // namespace dc
