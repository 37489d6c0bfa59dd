#include "tests/plan/plan_invariants.h"

#include "compression/form/message_form.h"

#include <map>
#include <set>
#include <tuple>

#include "tests/plan/plan_sim.h"

namespace dc::sim {
namespace {

std::vector<StepAccess> accesses(const Plan& plan, const Step& s) {
  return step_accesses(s, plan.compression && plan.compression->error_feedback);
}

uint64_t size_of(const Plan& plan, BufId buf) {
  switch (buf) {
    case BufId::Input: return plan.sizes.input;
    case BufId::Output: return plan.sizes.output;
    case BufId::Scratch: return plan.sizes.scratch;
    case BufId::Bytes: return plan.sizes.bytes;
    case BufId::Residual: return plan.sizes.residual;
  }
  return 0;
}

// The length slot a message step writes (Encode, RecvMessage) or reads (SendMessage, Decode).
bool writes_slot(StepKind k) { return k == StepKind::Encode || k == StepKind::RecvMessage; }
bool reads_slot(StepKind k) { return k == StepKind::SendMessage || k == StepKind::Decode; }

std::string at(const Plan& plan, size_t i) {
  return "rank " + std::to_string(plan.rank) + " step " + std::to_string(i) + " (" +
         step_kind_name(plan.steps[i].kind) + ")";
}

}  // namespace

std::string check_invariants(const std::vector<Plan>& plans) {
  const int n = static_cast<int>(plans.size());
  using Key = std::tuple<int, int, uint32_t>;  // (from, to, tag)
  std::map<Key, uint64_t> sent, received;
  for (const Plan& plan : plans) {
    if (plan.count == 0 && !plan.steps.empty()) return at(plan, 0) + ": count 0 needs no steps";
    const bool rooted_output =
        (plan.collective == dcCollReduce || plan.collective == dcCollGather) && plan.rank != plan.root;
    if (rooted_output && plan.sizes.output != 0) return "non-root plan declares an Output";
    for (size_t i = 0; i < plan.steps.size(); ++i) {
      const Step& s = plan.steps[i];
      if (s.dep_begin + s.dep_count > plan.deps.size()) return at(plan, i) + ": deps overflow";
      for (uint32_t d = 0; d < s.dep_count; ++d) {
        if (plan.deps[s.dep_begin + d] >= i) return at(plan, i) + ": dependency is not earlier";
      }
      if (s.kind >= StepKind::Encode) {
        if (!plan.compression) return at(plan, i) + ": a message step in a plan without compression";
        if (s.bytes != compression::max_message_bytes(*plan.compression, s.count))
          return at(plan, i) + ": capacity is not the spec's worst case for its elements";
      }
      for (const StepAccess& a : accesses(plan, s)) {
        if (a.place.offset + a.size > size_of(plan, a.place.buf)) {
          return at(plan, i) + ": place beyond the declared buffer size";
        }
        if (a.write && !plan.in_place && a.place.buf == BufId::Input) {
          return at(plan, i) + ": out-of-place plan writes Input";
        }
        if (rooted_output && a.place.buf == BufId::Output) {
          return at(plan, i) + ": non-root plan touches Output";
        }
      }
      if (is_transfer(s.kind)) {
        if (s.peer < 0 || s.peer >= n) return at(plan, i) + ": peer out of range";
        const bool is_send = !is_receive(s.kind);
        const Key key = is_send ? Key{plan.rank, s.peer, s.tag} : Key{s.peer, plan.rank, s.tag};
        if (!(is_send ? sent : received).emplace(key, s.count).second) {
          return at(plan, i) + ": (peer, direction, tag) used twice";
        }
      }
    }
  }
  for (const auto& [key, count] : sent) {
    auto it = received.find(key);
    const std::string what = "message " + std::to_string(std::get<0>(key)) + "->" + std::to_string(std::get<1>(key)) +
                             " tag " + std::to_string(std::get<2>(key));
    if (it == received.end()) return what + " is never received";
    if (it->second != count) return what + " has different send and receive counts";
  }
  if (sent.size() != received.size()) return "a receive has no matching send";
  return "";
}

std::string check_hazards(const std::vector<Plan>& plans, size_t elem_size) {
  for (const Plan& plan : plans) {
    const RankMemory memory = allocate(plan, elem_size);
    const size_t steps = plan.steps.size();
    // before[i] = the steps that happen before step i through local dependencies.
    std::vector<std::vector<bool>> before(steps, std::vector<bool>(steps, false));
    for (size_t i = 0; i < steps; ++i) {
      const Step& s = plan.steps[i];
      for (uint32_t d = 0; d < s.dep_count; ++d) {
        const uint32_t dep = plan.deps[s.dep_begin + d];
        before[i][dep] = true;
        for (size_t k = 0; k < dep; ++k) {
          if (before[dep][k]) before[i][k] = true;
        }
      }
    }
    for (size_t b = 0; b < steps; ++b) {
      for (size_t a = 0; a < b; ++a) {
        if (before[b][a]) continue;
        const Step& sa = plan.steps[a];
        const Step& sb = plan.steps[b];
        const bool same_slot = sa.kind >= StepKind::Encode && sb.kind >= StepKind::Encode && sa.slot == sb.slot;
        if (same_slot && sb.kind != StepKind::RecvDecode && sa.kind != StepKind::RecvDecode &&
            (writes_slot(sa.kind) || writes_slot(sb.kind)))
          return at(plan, a) + " and " + at(plan, b) + " use one length slot, one writing, without an order";
        if (same_slot && reads_slot(sa.kind) && writes_slot(sb.kind))
          return at(plan, a) + " reads a length slot that " + at(plan, b) + " writes later";
        for (const StepAccess& x : accesses(plan, sa)) {
          for (const StepAccess& y : accesses(plan, sb)) {
            if (!x.write && !y.write) continue;
            const Location lx = locate(memory, x.place);
            const Location ly = locate(memory, y.place);
            const uint64_t cx = x.size, cy = y.size;
            if (lx.memory == ly.memory && lx.offset < ly.offset + cy && ly.offset < lx.offset + cx) {
              return at(plan, a) + " and " + at(plan, b) + " touch the same memory, one writing, without an order";
            }
          }
        }
      }
    }
  }
  return "";
}

}  // namespace dc::sim
