// plan_to_json: one JSON object, keys in a fixed order, one step per line. A step lists only the
// fields its kind uses.
#include <cmath>
#include <cstdio>
#include <string>

#include "src/plan/plan.h"

namespace dc {
namespace {

const char* buf_name(BufId buf) {
  switch (buf) {
    case BufId::Input: return "input";
    case BufId::Output: return "output";
    case BufId::Scratch: return "scratch";
    case BufId::Bytes: return "bytes";
    case BufId::Residual: return "residual";
  }
  return "unknown";
}

// Names written here are fixed identifiers; algorithm and phase names are escaped all the same.
std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (char ch : text) {
    if (ch == '"' || ch == '\\') {
      out += '\\';
      out += ch;
    } else if (static_cast<unsigned char>(ch) < 0x20) {
      static const char* hex = "0123456789abcdef";
      out += "\\u00";
      out += hex[(ch >> 4) & 0xf];
      out += hex[ch & 0xf];
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

// Seconds with enough digits for microsecond differences; JSON has no NaN or infinity.
std::string number(double seconds) {
  if (!std::isfinite(seconds)) return "null";
  char text[32];
  std::snprintf(text, sizeof text, "%.9g", seconds);
  return text;
}

std::string place(const BufRef& ref) {
  return std::string("{\"buf\":\"") + buf_name(ref.buf) + "\",\"offset\":" + std::to_string(ref.offset) + "}";
}

std::string step_json(const Plan& plan, const Step& step) {
  const StepKind k = step.kind;
  const bool transfer = is_transfer(k);
  const bool message = k >= StepKind::Encode;
  const bool ef = plan.compression && plan.compression->error_feedback;
  const bool has_src = k == StepKind::Send || k == StepKind::RecvReduce || k == StepKind::Copy ||
                       k == StepKind::Reduce || k == StepKind::Encode || k == StepKind::SendMessage ||
                       k == StepKind::Decode;
  const bool has_dst = k != StepKind::Send && k != StepKind::SendMessage;
  const bool has_aux =
      k == StepKind::RecvReduce || k == StepKind::Reduce || k == StepKind::RecvDecode || (k == StepKind::Encode && ef);

  std::string out = std::string("{\"kind\":\"") + step_kind_name(step.kind) + "\"";
  if (transfer) {
    out += ",\"peer\":" + std::to_string(step.peer) + ",\"tag\":" + std::to_string(step.tag);
  }
  out += ",\"count\":" + std::to_string(step.count);
  if (has_src) out += ",\"src\":" + place(step.src);
  if (has_dst) out += ",\"dst\":" + place(step.dst);
  if (has_aux) out += ",\"aux\":" + place(step.aux);
  if (message) out += ",\"bytes\":" + std::to_string(step.bytes);
  if (message && k != StepKind::RecvDecode) out += ",\"slot\":" + std::to_string(step.slot);
  if (k == StepKind::Decode || k == StepKind::RecvDecode)
    out += std::string(",\"overwrite\":") + (step.overwrite ? "true" : "false");
  out += ",\"deps\":[";
  for (uint32_t i = 0; i < step.dep_count; ++i) {
    if (i != 0) out += ",";
    out += std::to_string(plan.deps[step.dep_begin + i]);
  }
  return out + "]}";
}

}  // namespace

std::string plan_to_json(const Plan& plan) {
  std::string out = "{\"collective\":\"";
  out += collective_name(plan.collective);
  out += "\",\"algorithm\":" + quoted(plan.algorithm);
  out += ",\"nranks\":" + std::to_string(plan.nranks);
  out += ",\"rank\":" + std::to_string(plan.rank);
  out += ",\"root\":" + std::to_string(plan.root);
  out += ",\"count\":" + std::to_string(plan.count);
  out += std::string(",\"in_place\":") + (plan.in_place ? "true" : "false");
  out += ",\"sizes\":{\"input\":" + std::to_string(plan.sizes.input) +
         ",\"output\":" + std::to_string(plan.sizes.output) + ",\"scratch\":" + std::to_string(plan.sizes.scratch);
  if (plan.compression)
    out += ",\"bytes\":" + std::to_string(plan.sizes.bytes) + ",\"residual\":" + std::to_string(plan.sizes.residual);
  out += "}";
  if (plan.compression)
    out += ",\"compression\":" + quoted(plan.compression->to_string()) +
           ",\"length_slots\":" + std::to_string(plan.length_slots);
  out += ",\"predicted_seconds\":" + number(plan.predicted_seconds);
  out += std::string(",\"tuned\":") + (plan.tuned ? "true" : "false");
  out += ",\"runner_up\":" + quoted(plan.runner_up);
  out += ",\"runner_up_seconds\":" + number(plan.runner_up_seconds);
  if (!plan.phases.empty()) {
    out += ",\"phases\":[";
    for (size_t i = 0; i < plan.phases.size(); ++i) {
      const PlanPhase& ph = plan.phases[i];
      out += (i == 0 ? "" : ",");
      out += "{\"name\":" + quoted(ph.name) + ",\"algorithm\":" + quoted(ph.algorithm) + ",\"members\":[";
      for (size_t m = 0; m < ph.members.size(); ++m) out += (m ? "," : "") + std::to_string(ph.members[m]);
      out += "],\"first_step\":" + std::to_string(ph.first_step) + ",\"end_step\":" + std::to_string(ph.end_step) + "}";
    }
    out += "]";
  }
  out += ",\"steps\":[";
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    out += i == 0 ? "\n" : ",\n";
    out += step_json(plan, plan.steps[i]);
  }
  out += plan.steps.empty() ? "]}" : "\n]}";
  return out;
}

}  // namespace dc
