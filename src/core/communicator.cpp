#include "src/core/communicator.h"

#include <set>
#include <sstream>

#include "src/core/registration.h"
#include "src/exec/flat_board.h"
#include "src/exec/engine.h"

void dcComm::set_error(dcResult_t code, const std::string& message) {
  std::lock_guard<std::mutex> lock(error_mutex);
  if (async_error.load() == dcSuccess) {
    error_message = message;
    async_error.store(code);
  }
}

dcComm::dcComm() = default;  // here, where Registration and FlatBoard are complete
dcComm::~dcComm() = default;

dc::Status dcComm::error() {
  std::lock_guard<std::mutex> lock(error_mutex);
  return dc::Status{static_cast<dcResult_t>(async_error.load()), error_message};
}

namespace dc {

PeerLinks::~PeerLinks() = default;

namespace {

std::mutex g_registry_mutex;
std::set<dcComm*>& registry() {
  static auto* comms = new std::set<dcComm*>();
  return *comms;
}

std::string plan_key(const PlanRequest& r) {
  std::ostringstream k;
  k << r.collective << '/' << r.count << '/' << r.elem_size << '/' << r.root << '/' << r.in_place;
  return k.str();
}

std::shared_ptr<const PreparedPlan> prepare(Plan plan) {
  auto prepared = std::make_shared<PreparedPlan>();
  const size_t n = plan.steps.size();
  std::vector<uint32_t> counts(n + 1, 0);
  for (const Step& s : plan.steps)
    for (uint32_t d = 0; d < s.dep_count; ++d) ++counts[plan.deps[s.dep_begin + d] + 1];
  for (size_t i = 0; i < n; ++i) counts[i + 1] += counts[i];
  prepared->dependents_begin = counts;
  prepared->dependents.resize(counts[n]);
  std::vector<uint32_t> fill(counts.begin(), counts.end() - 1);
  for (uint32_t i = 0; i < n; ++i) {
    const Step& s = plan.steps[i];
    for (uint32_t d = 0; d < s.dep_count; ++d) prepared->dependents[fill[plan.deps[s.dep_begin + d]]++] = i;
  }
  prepared->plan = std::move(plan);
  return prepared;
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
  const std::string key = plan_key(request);
  auto it = comm->plan_cache.find(key);
  if (it != comm->plan_cache.end()) return it->second;
  if (comm->plan_cache.size() >= 256) comm->plan_cache.clear();
  auto prepared = prepare(make_plan(request));
  comm->plan_cache.emplace(key, prepared);
  return prepared;
}

}  // namespace dc
