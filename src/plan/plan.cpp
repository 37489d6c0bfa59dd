#include "src/plan/plan.h"

#include <string>

#include "base/error.h"

namespace dc {

uint32_t Plan::add(Step step, std::initializer_list<uint32_t> after) { return add(step, std::vector<uint32_t>(after)); }

uint32_t Plan::add(Step step, const std::vector<uint32_t>& after) {
  const auto index = static_cast<uint32_t>(steps.size());
  for (uint32_t dep : after) {
    if (dep >= index) {
      fail(dcInternalError, "plan step " + std::to_string(index) + " depends on step " + std::to_string(dep) +
                                ", which is not an earlier step");
    }
  }
  step.dep_begin = static_cast<uint32_t>(deps.size());
  step.dep_count = static_cast<uint32_t>(after.size());
  deps.insert(deps.end(), after.begin(), after.end());
  steps.push_back(step);
  return index;
}

std::vector<StepAccess> step_accesses(const Step& s, bool error_feedback) {
  const uint64_t n = s.count;
  switch (s.kind) {
    case StepKind::Send: return {{s.src, n, false}};
    case StepKind::Recv: return {{s.dst, n, true}};
    case StepKind::RecvReduce: return {{s.src, n, false}, {s.aux, n, true}, {s.dst, n, true}};
    case StepKind::Copy: return {{s.src, n, false}, {s.dst, n, true}};
    case StepKind::Reduce: return {{s.src, n, false}, {s.aux, n, false}, {s.dst, n, true}};
    case StepKind::Finalize: return {{s.dst, n, true}};
    case StepKind::Encode: {
      std::vector<StepAccess> a = {{s.src, n, false}, {s.dst, s.bytes, true}};
      if (error_feedback) a.push_back({s.aux, n, true});
      return a;
    }
    case StepKind::SendMessage: return {{s.src, s.bytes, false}};
    case StepKind::RecvMessage: return {{s.dst, s.bytes, true}};
    case StepKind::Decode: return {{s.src, s.bytes, false}, {s.dst, n, true}};
    case StepKind::RecvDecode: return {{s.aux, s.bytes, true}, {s.dst, n, true}};
  }
  return {};
}

bool is_transfer(StepKind k) { return k == StepKind::Send || k == StepKind::SendMessage || is_receive(k); }

bool is_receive(StepKind k) {
  return k == StepKind::Recv || k == StepKind::RecvReduce || k == StepKind::RecvMessage || k == StepKind::RecvDecode;
}

bool is_point_to_point(dcCollective_t c) { return c == dcCollSend || c == dcCollRecv; }

bool is_rooted(dcCollective_t c) {
  return c == dcCollBroadcast || c == dcCollReduce || c == dcCollGather || c == dcCollScatter || is_point_to_point(c);
}

bool is_reduction(dcCollective_t c) { return c == dcCollAllReduce || c == dcCollReduce || c == dcCollReduceScatter; }

const char* collective_name(dcCollective_t c) {
  switch (c) {
    case dcCollAllReduce: return "AllReduce";
    case dcCollBroadcast: return "Broadcast";
    case dcCollReduce: return "Reduce";
    case dcCollAllGather: return "AllGather";
    case dcCollReduceScatter: return "ReduceScatter";
    case dcCollAlltoAll: return "AlltoAll";
    case dcCollGather: return "Gather";
    case dcCollScatter: return "Scatter";
    case dcCollSend: return "Send";
    case dcCollRecv: return "Recv";
    case dcNumCollectives: break;
  }
  return "Unknown";
}

const char* step_kind_name(StepKind k) {
  switch (k) {
    case StepKind::Send: return "Send";
    case StepKind::Recv: return "Recv";
    case StepKind::RecvReduce: return "RecvReduce";
    case StepKind::Copy: return "Copy";
    case StepKind::Reduce: return "Reduce";
    case StepKind::Finalize: return "Finalize";
    case StepKind::Encode: return "Encode";
    case StepKind::SendMessage: return "SendMessage";
    case StepKind::RecvMessage: return "RecvMessage";
    case StepKind::Decode: return "Decode";
    case StepKind::RecvDecode: return "RecvDecode";
  }
  return "Unknown";
}

}  // namespace dc
