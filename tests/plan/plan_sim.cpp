#include "tests/plan/plan_sim.h"

#include <cstring>
#include <map>
#include <random>
#include <tuple>

#include "base/error.h"
#include "compression/compression.h"
#include "kernels/reduce.h"

namespace dc::sim {
namespace {

uint64_t in_place_input_base(const Plan& plan) {
  return plan.collective == dcCollAllGather ? static_cast<uint64_t>(plan.rank) * plan.count : 0;
}

uint64_t in_place_output_base(const Plan& plan) {
  return plan.collective == dcCollReduceScatter ? static_cast<uint64_t>(plan.rank) * plan.count : 0;
}

uint64_t buffer_size(const Plan& plan, BufId buf) {
  switch (buf) {
    case BufId::Input: return plan.sizes.input;
    case BufId::Output: return plan.sizes.output;
    case BufId::Scratch: return plan.sizes.scratch;
    case BufId::Bytes: return plan.sizes.bytes;
    case BufId::Residual: return plan.sizes.residual;
  }
  return 0;
}

struct StepId {
  int rank;
  uint32_t index;
};

// Which receive kinds a send kind pairs with.
bool pairs_with(StepKind send, StepKind receive) {
  if (send == StepKind::Send) return receive == StepKind::Recv || receive == StepKind::RecvReduce;
  return receive == StepKind::RecvMessage || receive == StepKind::RecvDecode;
}

bool is_send(StepKind k) { return k == StepKind::Send || k == StepKind::SendMessage; }

// Decodes a message piece by piece, the pieces' sizes drawn at random (as a transport hands them).
void decode_in_pieces(std::span<const uint8_t> message, const compression::Target& target, std::mt19937_64& random) {
  compression::PieceDecoder decoder(target);
  size_t at = 0;
  while (at < message.size()) {
    const size_t len = std::min<size_t>(message.size() - at, 1 + random() % 4096);
    decoder.consume(message.subspan(at, len));
    at += len;
  }
  decoder.finish();
}

}  // namespace

RankMemory allocate(const Plan& plan, size_t elem_size) {
  RankMemory m;
  m.in_place = plan.in_place;
  m.scratch.resize(plan.sizes.scratch * elem_size);
  m.bytes.resize(plan.sizes.bytes);
  m.residual.resize(plan.sizes.residual);
  if (plan.in_place) {
    m.input_base = in_place_input_base(plan);
    m.output_base = in_place_output_base(plan);
    const uint64_t elems = std::max(m.input_base + plan.sizes.input, m.output_base + plan.sizes.output);
    m.shared.resize(elems * elem_size);
  } else {
    m.input.resize(plan.sizes.input * elem_size);
    m.output.resize(plan.sizes.output * elem_size);
  }
  return m;
}

Location locate(const RankMemory& memory, BufRef ref) {
  switch (ref.buf) {
    case BufId::Input: return memory.in_place ? Location{2, memory.input_base + ref.offset} : Location{0, ref.offset};
    case BufId::Output: return memory.in_place ? Location{2, memory.output_base + ref.offset} : Location{1, ref.offset};
    case BufId::Scratch: return {3, ref.offset};
    case BufId::Bytes: return {4, ref.offset};
    case BufId::Residual: return {5, ref.offset};
  }
  return {};
}

std::byte* address(RankMemory& memory, BufRef ref, size_t elem_size) {
  const Location at = locate(memory, ref);
  if (at.memory == 4) return memory.bytes.data() + at.offset;
  if (at.memory == 5) return reinterpret_cast<std::byte*>(memory.residual.data() + at.offset);
  std::vector<std::byte>* bytes[] = {&memory.input, &memory.output, &memory.shared, &memory.scratch};
  return bytes[at.memory]->data() + at.offset * elem_size;
}

std::string run(const std::vector<Plan>& plans, std::vector<RankMemory>& memories, dcDataType_t datatype, dcRedOp_t op,
                uint64_t seed) {
  const size_t elem = datatype_size(datatype);
  const int n = static_cast<int>(plans.size());
  auto where = [&](StepId id) {
    return "rank " + std::to_string(id.rank) + " step " + std::to_string(id.index) + " (" +
           step_kind_name(plans[id.rank].steps[id.index].kind) + ")";
  };

  // Bounds of every place a step uses.
  for (int r = 0; r < n; ++r) {
    const bool ef = plans[r].compression && plans[r].compression->error_feedback;
    for (uint32_t i = 0; i < plans[r].steps.size(); ++i) {
      const Step& s = plans[r].steps[i];
      if (s.kind >= StepKind::Encode && !plans[r].compression) return where({r, i}) + " needs a compression spec";
      if (s.kind >= StepKind::Encode && s.kind != StepKind::RecvDecode && s.slot >= plans[r].length_slots)
        return where({r, i}) + " uses a length slot the plan does not have";
      for (const StepAccess& a : step_accesses(s, ef))
        if (a.place.offset + a.size > buffer_size(plans[r], a.place.buf))
          return where({r, i}) + " is outside its buffer";
    }
  }

  // Match every send with exactly one receive.
  std::map<std::tuple<int, int, uint32_t>, StepId> sends, receives;
  for (int r = 0; r < n; ++r) {
    for (uint32_t i = 0; i < plans[r].steps.size(); ++i) {
      const Step& s = plans[r].steps[i];
      if (!is_transfer(s.kind)) continue;
      if (s.peer < 0 || s.peer >= n) return where({r, i}) + " has peer out of range";
      auto key = is_send(s.kind) ? std::make_tuple(r, s.peer, s.tag) : std::make_tuple(s.peer, r, s.tag);
      auto& table = is_send(s.kind) ? sends : receives;
      if (!table.emplace(key, StepId{r, i}).second) return where({r, i}) + " reuses a tag";
    }
  }
  std::vector<std::vector<StepId>> partner(n);
  for (int r = 0; r < n; ++r) partner[r].assign(plans[r].steps.size(), StepId{-1, 0});
  for (const auto& [key, send] : sends) {
    auto it = receives.find(key);
    if (it == receives.end()) return where(send) + " has no matching receive";
    const StepId recv = it->second;
    if (!pairs_with(plans[send.rank].steps[send.index].kind, plans[recv.rank].steps[recv.index].kind))
      return where(send) + " is received by " + where(recv);
    if (plans[send.rank].steps[send.index].count != plans[recv.rank].steps[recv.index].count) {
      return where(send) + " and " + where(recv) + " disagree on the count";
    }
    partner[send.rank][send.index] = recv;
    partner[recv.rank][recv.index] = send;
    receives.erase(it);
  }
  if (!receives.empty()) return where(receives.begin()->second) + " has no matching send";

  // Dependency counters and reverse edges.
  std::vector<std::vector<uint32_t>> waiting(n);
  std::vector<std::vector<std::vector<uint32_t>>> dependents(n);
  size_t remaining = 0;
  std::vector<StepId> ready;  // local steps, and sends whose receive is also ready
  std::vector<std::vector<bool>> deps_done(n);
  std::vector<std::vector<bool>> completed(n);
  auto became_ready = [&](StepId id) {
    deps_done[id.rank][id.index] = true;
    const Step& s = plans[id.rank].steps[id.index];
    if (is_transfer(s.kind)) {
      const StepId other = partner[id.rank][id.index];
      if (!deps_done[other.rank][other.index]) return;
      ready.push_back(is_send(s.kind) ? id : other);
    } else {
      ready.push_back(id);
    }
  };
  for (int r = 0; r < n; ++r) {
    const Plan& p = plans[r];
    waiting[r].resize(p.steps.size());
    dependents[r].resize(p.steps.size());
    deps_done[r].assign(p.steps.size(), false);
    completed[r].assign(p.steps.size(), false);
    remaining += p.steps.size();
    for (uint32_t i = 0; i < p.steps.size(); ++i) {
      const Step& s = p.steps[i];
      if (s.dep_begin + s.dep_count > p.deps.size()) return where({r, i}) + " has bad deps";
      for (uint32_t d = 0; d < s.dep_count; ++d) {
        const uint32_t dep = p.deps[s.dep_begin + d];
        if (dep >= i) return where({r, i}) + " depends on a later step";
        dependents[r][dep].push_back(i);
      }
      waiting[r][i] = s.dep_count;
    }
  }
  for (int r = 0; r < n; ++r) {
    for (uint32_t i = 0; i < plans[r].steps.size(); ++i) {
      if (waiting[r][i] == 0) became_ready({r, i});
    }
  }

  auto complete = [&](StepId id) {
    --remaining;
    completed[id.rank][id.index] = true;
    for (uint32_t next : dependents[id.rank][id.index]) {
      if (--waiting[id.rank][next] == 0) became_ready({id.rank, next});
    }
  };
  auto at = [&](int r, BufRef ref) { return address(memories[r], ref, elem); };
  // Compressed plans: each rank's run-time message lengths.
  std::vector<std::vector<uint64_t>> lengths(n);
  for (int r = 0; r < n; ++r) lengths[r].assign(plans[r].length_slots, 0);
  auto bytes_at = [&](int r, BufRef ref) { return reinterpret_cast<uint8_t*>(at(r, ref)); };
  auto target = [&](int r, const Step& s) { return compression::Target{datatype, at(r, s.dst), s.count, s.overwrite}; };

  std::mt19937_64 random(seed);
  while (!ready.empty()) {
    const size_t pick = std::uniform_int_distribution<size_t>(0, ready.size() - 1)(random);
    const StepId id = ready[pick];
    ready[pick] = ready.back();
    ready.pop_back();
    const Step& s = plans[id.rank].steps[id.index];
    const size_t bytes = s.count * elem;
    switch (s.kind) {
      case StepKind::Send: {
        const StepId rid = partner[id.rank][id.index];
        const Step& r = plans[rid.rank].steps[rid.index];
        if (r.kind == StepKind::Recv) {
          std::memmove(at(rid.rank, r.dst), at(id.rank, s.src), bytes);
        } else {
          std::memmove(at(rid.rank, r.aux), at(id.rank, s.src), bytes);
          reduce(datatype, op, at(rid.rank, r.dst), at(rid.rank, r.src), at(rid.rank, r.aux), s.count);
        }
        complete(id);
        complete(rid);
        break;
      }
      case StepKind::SendMessage: {
        const StepId rid = partner[id.rank][id.index];
        const Step& r = plans[rid.rank].steps[rid.index];
        const uint64_t length = lengths[id.rank][s.slot];
        if (length > r.bytes) return where(id) + " sends more than " + where(rid) + " can hold";
        const std::span<const uint8_t> message(bytes_at(id.rank, s.src), length);
        try {
          if (r.kind == StepKind::RecvMessage) {
            std::memcpy(bytes_at(rid.rank, r.dst), message.data(), length);
            lengths[rid.rank][r.slot] = length;
          } else {
            std::memcpy(bytes_at(rid.rank, r.aux), message.data(), length);
            decode_in_pieces(message, target(rid.rank, r), random);
          }
        } catch (const Error& e) {
          return where(rid) + ": " + e.what();
        }
        complete(id);
        complete(rid);
        break;
      }
      case StepKind::Encode:
        try {
          const compression::Spec& spec = *plans[id.rank].compression;
          float* residual = spec.error_feedback ? reinterpret_cast<float*>(at(id.rank, s.aux)) : nullptr;
          compression::Encoder encoder;
          const std::span<float> r = residual ? std::span<float>(residual, s.count) : std::span<float>();
          lengths[id.rank][s.slot] = encoder
                                         .encode(spec, datatype, at(id.rank, s.src), s.count, r, seed + id.index,
                                                 {bytes_at(id.rank, s.dst), s.bytes})
                                         .bytes;
        } catch (const Error& e) {
          return where(id) + ": " + e.what();
        }
        complete(id);
        break;
      case StepKind::Decode:
        try {
          compression::decode_accumulate({bytes_at(id.rank, s.src), lengths[id.rank][s.slot]}, target(id.rank, s));
        } catch (const Error& e) {
          return where(id) + ": " + e.what();
        }
        complete(id);
        break;
      case StepKind::Copy:
        std::memmove(at(id.rank, s.dst), at(id.rank, s.src), bytes);
        complete(id);
        break;
      case StepKind::Reduce:
        reduce(datatype, op, at(id.rank, s.dst), at(id.rank, s.src), at(id.rank, s.aux), s.count);
        complete(id);
        break;
      case StepKind::Finalize:
        if (op == dcAvg) finalize_avg(datatype, at(id.rank, s.dst), s.count, n);
        complete(id);
        break;
      default: return where(id) + " was scheduled alone";
    }
  }
  if (remaining != 0) {
    for (int r = 0; r < n; ++r) {
      for (uint32_t i = 0; i < plans[r].steps.size(); ++i) {
        if (deps_done[r][i] && !completed[r][i]) {
          if (is_transfer(plans[r].steps[i].kind)) {
            return "deadlock: " + std::to_string(remaining) + " steps left, e.g. " + where({r, i}) +
                   " waits for its peer";
          }
        }
      }
    }
    return "deadlock: " + std::to_string(remaining) + " steps left";
  }
  return "";
}

}  // namespace dc::sim
