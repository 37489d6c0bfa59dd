#include <algorithm>
#include <vector>

#include "compression/form/message_form.h"
#include "src/plan/cost_model.h"

namespace dc {

namespace {

double busiest(const std::vector<double>& loads) {
  return loads.empty() ? 0.0 : *std::max_element(loads.begin(), loads.end());
}

}  // namespace

Traffic::Traffic(const ClusterView& view)
    : view_(&view),
      network_out_(view.nhosts(), 0.0),
      network_in_(view.nhosts(), 0.0),
      stream_(view.nranks(), 0.0),
      memory_(view.nranks(), 0.0) {}

void Traffic::hops(int count, int a, int b) { hops(count, view_->tier_between(a, b).latency_s); }

void Traffic::hops(int count, double latency_s) { latency_ += count * latency_s; }

void Traffic::transfer(int from, int to, double bytes, bool reduce) {
  if (from == to) return;
  if (!view_->same_host(from, to)) {
    network_out_[view_->host_of(from)] += bytes;
    network_in_[view_->host_of(to)] += bytes;
  } else if (!view_->shared_memory()) {
    stream_[from] += bytes;
  } else {
    memory_[to] += 2 * bytes;  // the receiver reads the sender's memory and writes its own
  }
  if (reduce) memory_[to] += (view_->same_host(from, to) && view_->shared_memory() ? 1 : 2) * bytes;
}

void Traffic::memory(int rank, double bytes) { memory_[rank] += bytes; }

void Traffic::add(const Traffic& phase) {
  add_loads(phase);
  latency_ += phase.latency_;
}

void Traffic::add_alongside(const Traffic& other) {
  add_loads(other);
  latency_ = std::max(latency_, other.latency_);
}

void Traffic::add_loads(const Traffic& phase) {
  for (size_t h = 0; h < network_out_.size(); ++h) {
    network_out_[h] += phase.network_out_[h];
    network_in_[h] += phase.network_in_[h];
  }
  for (size_t r = 0; r < memory_.size(); ++r) {
    stream_[r] += phase.stream_[r];
    memory_[r] += phase.memory_[r];
  }
}

double Traffic::seconds() const {
  std::vector<double> host_memory(view_->nhosts(), 0.0);
  for (size_t r = 0; r < memory_.size(); ++r) host_memory[view_->host_of(static_cast<int>(r))] += memory_[r];
  const double network = std::max(busiest(network_out_), busiest(network_in_)) / view_->inter_host().bandwidth_Bps;
  const double streams = view_->shared_memory() ? 0.0 : busiest(stream_) / view_->intra_host().bandwidth_Bps;
  const double rank_memory = busiest(memory_) / view_->rank_memory_bandwidth();
  const double hosts_memory = busiest(host_memory) / view_->memory_bandwidth();
  return latency_ + std::max({network, streams, rank_memory, hosts_memory});
}

double plan_time_seconds(const Plan& plan, const PlanRequest& request) {
  const ClusterView& view = *request.cluster;
  std::vector<double> finish(plan.steps.size(), 0.0);
  double longest = 0;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const Step& s = plan.steps[i];
    double start = 0;
    for (uint32_t d = 0; d < s.dep_count; ++d) start = std::max(start, finish[plan.deps[s.dep_begin + d]]);
    const double elements = static_cast<double>(s.count * request.elem_size);
    // A compressed message moves its expected size; its codec work is priced like a local pass.
    const bool message = plan.compression && s.kind >= StepKind::Encode;
    const double bytes =
        message ? static_cast<double>(compression::expected_message_bytes(*plan.compression, s.count)) : elements;
    const bool transfer = is_transfer(s.kind);
    double seconds = 3 * elements / view.rank_memory_bandwidth();  // a local copy, sum, scaling or codec pass
    if (transfer) {
      const LinkTier& tier = view.tier_between(plan.rank, s.peer);
      const bool through_memory = view.same_host(plan.rank, s.peer) && view.shared_memory();
      seconds = tier.latency_s + (through_memory ? 2 * bytes / view.rank_memory_bandwidth() : bytes / tier.bandwidth_Bps);
      if (s.kind == StepKind::RecvDecode) seconds += 3 * elements / view.rank_memory_bandwidth();
    }
    finish[i] = start + seconds;
    longest = std::max(longest, finish[i]);
  }
  return longest;
}

}  // namespace dc
