// Send and Recv: one step to or from the peer (carried in the request's root field).
#include "src/plan/generators.h"

namespace dc {

using namespace plan_build;

void build_p2p(const PlanRequest& request, Plan& plan) {
  if (request.collective == dcCollSend) {
    plan.add(send(request.root, 0, input(0), request.count));
  } else {
    plan.add(recv(request.root, 0, output(0), request.count));
  }
}

}  // namespace dc
