#include "src/plan/opening_messages.h"

#include <algorithm>
#include <array>
#include <optional>

#include "base/error.h"

namespace dc {
namespace {

// Whether `plan` has a transfer with `peer` in the given direction that waits on no other step.
bool opens_with(const Plan& plan, int peer, bool receive) {
  for (const Step& s : plan.steps)
    if (s.dep_count == 0 && is_transfer(s.kind) && is_receive(s.kind) == receive && s.peer == peer) return true;
  return false;
}

// The plans of one rank, out of place and in place; nullopt when either cannot be built.
std::optional<std::array<Plan, 2>> both_plans(PlanRequest request, int rank) {
  request.rank = rank;
  try {
    request.in_place = false;
    Plan out_of_place = make_plan(request);
    request.in_place = true;
    return std::array<Plan, 2>{std::move(out_of_place), make_plan(request)};
  } catch (const Error&) {
    return std::nullopt;
  }
}

bool edge_opens(const std::optional<std::array<Plan, 2>>& sender, int sender_rank,
                const std::optional<std::array<Plan, 2>>& receiver, int receiver_rank) {
  if (!sender || !receiver) return false;
  for (const Plan& plan : *sender)
    if (!opens_with(plan, receiver_rank, false)) return false;
  for (const Plan& plan : *receiver)
    if (!opens_with(plan, sender_rank, true)) return false;
  return true;
}

// Whether every plan of a rank receives something: its operation then cannot end before a peer's
// message of the same operation number arrived, and that message's signature is checked.
bool always_receives(const std::optional<std::array<Plan, 2>>& plans) {
  if (!plans) return false;
  for (const Plan& plan : *plans) {
    const bool receives =
        std::any_of(plan.steps.begin(), plan.steps.end(), [](const Step& s) { return is_receive(s.kind); });
    if (!receives) return false;
  }
  return true;
}

}  // namespace

OpeningMessages ring_opening_messages(PlanRequest request) {
  const int n = request.nranks, self = request.rank;
  // The ring checks collectives only: a point-to-point plan's neighbours were built for nothing.
  if (is_point_to_point(request.collective)) return {};
  if (n < 2 || request.elem_size == 0 || request.count > kOpeningMessagesMaxBytes / request.elem_size) return {};
  const int previous = (self + n - 1) % n, next = (self + 1) % n;
  const auto own = both_plans(request, self);
  const auto before = both_plans(request, previous);
  const auto after = next == previous ? before : both_plans(request, next);
  OpeningMessages no_message{edge_opens(own, self, before, previous), edge_opens(after, next, own, self)};
  // The closing edge, rank 0 to the last: the chain 1 -> 0, ..., n-1 -> n-2 already connects every
  // rank, so the edge finds no mismatch the chain does not. It only keeps the last rank from ending
  // a call no one else made, which a plan that receives does by itself.
  if (self == 0 && always_receives(before)) no_message.to_previous = true;
  if (self == n - 1 && always_receives(own)) no_message.from_next = true;
  return no_message;
}

}  // namespace dc
