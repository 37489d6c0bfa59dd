#include <algorithm>
#include <vector>

#include "compression/form/message_form.h"
#include "src/plan/cost_model.h"

namespace dc {

uint64_t Traffic::key(Kind kind, int tier, int host, int index) {
  return (uint64_t{kind} << 61) | (static_cast<uint64_t>(tier) << 56) | (static_cast<uint64_t>(host) << 32) |
         static_cast<uint32_t>(index);
}

void Traffic::hops(int count, int a, int b) { hops(count, view_->tier_between(a, b).latency_s); }

void Traffic::hops(double count, double latency_s) { latency_ += count * latency_s; }

void Traffic::pipeline_fill(double seconds) { fill_ += seconds; }

void Traffic::network(int tier, int host, int rail, bool out, double bytes) {
  loads_.push_back({key(out ? kNetOut : kNetIn, tier, host, rail), bytes});
}

void Traffic::transfer(int from, int to, double bytes, bool reduce, double messages) {
  if (from == to) return;
  const ClusterView& v = *view_;
  message_ends(v.host_of(from), messages);
  message_ends(v.host_of(to), messages);
  const bool same_host = v.same_host(from, to);
  if (!same_host) {
    const int tier = v.tier_index(v.host_of(from), v.host_of(to));
    const bool per_rail = v.network_tier(tier).per_rail;
    network(tier, v.host_of(from), per_rail ? v.rail_of(from) : 0, true, bytes);
    network(tier, v.host_of(to), per_rail ? v.rail_of(to) : 0, false, bytes);
  } else if (!v.shared_memory()) {
    loads_.push_back({key(kStream, 0, v.host_of(from), from), bytes});
  } else {
    memory(to, 2 * bytes);  // the receiver reads the sender's memory and writes its own
  }
  if (reduce) memory(to, (same_host && v.shared_memory() ? 1 : 2) * bytes);
}

void Traffic::rank_link(int rank, int tier, double out, double in) {
  const int rail = view_->network_tier(tier).per_rail ? view_->rail_of(rank) : 0;
  if (out > 0) network(tier, view_->host_of(rank), rail, true, out);
  if (in > 0) network(tier, view_->host_of(rank), rail, false, in);
}

void Traffic::host_link(int host, int tier, double out, double in) {
  const int links = view_->network_tier(tier).per_rail ? view_->rails(host) : 1;
  for (int r = 0; r < links; ++r) {
    if (out > 0) network(tier, host, r, true, out / links);
    if (in > 0) network(tier, host, r, false, in / links);
  }
}

void Traffic::message_ends(int host, double count) { loads_.push_back({key(kCpu, 0, host, 0), count}); }

void Traffic::memory(int rank, double bytes) { loads_.push_back({key(kMemory, 0, view_->host_of(rank), rank), bytes}); }

void Traffic::add(const Traffic& phase) {
  loads_.insert(loads_.end(), phase.loads_.begin(), phase.loads_.end());
  latency_ += phase.latency_;
  fill_ += phase.fill_;
}

void Traffic::add_alongside(const Traffic& other) {
  loads_.insert(loads_.end(), other.loads_.begin(), other.loads_.end());
  latency_ = std::max(latency_, other.latency_);
  fill_ = std::max(fill_, other.fill_);
}

void Traffic::repeat(int times) {
  for (Load& l : loads_) l.amount *= times;
}

std::vector<Traffic::Load> Traffic::totals() const {
  std::vector<Load> sorted = loads_;
  std::sort(sorted.begin(), sorted.end(), [](const Load& a, const Load& b) { return a.key < b.key; });
  std::vector<Load> out;
  for (const Load& l : sorted) {
    if (!out.empty() && out.back().key == l.key) out.back().amount += l.amount;
    else out.push_back(l);
  }
  return out;
}

double Traffic::load_seconds(const std::vector<Load>& totals, bool network_only) const {
  const ClusterView& v = *view_;
  double busiest = 0;
  // Memory loads come sorted by host, then rank: a host's sum is a run of them.
  int host = -1;
  double host_memory = 0;
  for (const Load& l : totals) {
    const Kind kind = kind_of(l.key);
    const int h = host_of(l.key);
    double seconds = 0;
    if (kind == kNetOut || kind == kNetIn) {
      seconds = l.amount / v.network_tier(tier_of(l.key)).bandwidth_Bps;
    } else if (network_only) {
      continue;
    } else if (kind == kStream) {
      seconds = l.amount / v.intra_host().bandwidth_Bps;
    } else if (kind == kCpu) {
      const int cores = v.node(h).cores;
      const int ranks = static_cast<int>(v.ranks_on_host(h).size());
      if (cores > 0 && ranks > cores) seconds = l.amount * default_message_cpu_seconds() / cores;
    } else {
      seconds = l.amount / v.rank_memory_bandwidth();
      if (h != host) {
        host = h;
        host_memory = 0;
      }
      host_memory += l.amount;
      busiest = std::max(busiest, host_memory / v.memory_bandwidth());
    }
    busiest = std::max(busiest, seconds);
  }
  return busiest;
}

double Traffic::seconds() const { return latency_ + fill_ + load_seconds(totals(), false); }

double Traffic::network_seconds() const { return load_seconds(totals(), true); }

std::map<Traffic::Link, double> Traffic::link_bytes() const {
  std::map<Link, double> out;
  for (const Load& l : totals()) {
    const Kind kind = kind_of(l.key);
    if (kind != kNetOut && kind != kNetIn) continue;
    out[Link{tier_of(l.key), host_of(l.key), static_cast<int>(l.key & 0xffffffff), kind == kNetOut}] = l.amount;
  }
  return out;
}

std::map<int, double> Traffic::host_message_ends() const {
  std::map<int, double> out;
  for (const Load& l : totals())
    if (kind_of(l.key) == kCpu) out[host_of(l.key)] = l.amount;
  return out;
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
      seconds =
          tier.latency_s + (through_memory ? 2 * bytes / view.rank_memory_bandwidth() : bytes / tier.bandwidth_Bps);
      if (s.kind == StepKind::RecvDecode) seconds += 3 * elements / view.rank_memory_bandwidth();
    }
    finish[i] = start + seconds;
    longest = std::max(longest, finish[i]);
  }
  return longest;
}

}  // namespace dc
