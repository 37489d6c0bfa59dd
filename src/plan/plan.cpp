#include "src/plan/plan.h"

#include <string>

#include "src/base/error.h"

namespace dc {

uint32_t Plan::add(Step step, std::initializer_list<uint32_t> after) {
  return add(step, std::vector<uint32_t>(after));
}

uint32_t Plan::add(Step step, const std::vector<uint32_t>& after) {
  const auto index = static_cast<uint32_t>(steps.size());
  for (uint32_t dep : after) {
    if (dep >= index) {
      fail(dcInternalError, "plan step " + std::to_string(index) + " depends on step " +
                                std::to_string(dep) + ", which is not an earlier step");
    }
  }
  step.dep_begin = static_cast<uint32_t>(deps.size());
  step.dep_count = static_cast<uint32_t>(after.size());
  deps.insert(deps.end(), after.begin(), after.end());
  steps.push_back(step);
  return index;
}

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
  }
  return "Unknown";
}

}  // namespace dc
