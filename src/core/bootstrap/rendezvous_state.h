// The root's bookkeeping of one rendezvous, apart from the network: who joined with what, whether
// the joins agree, and what to tell a rank that asks how far it got.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "deepcomm/deepcomm.h"
#include "src/core/bootstrap/wire.h"

namespace dc {

class RendezvousState {
 public:
  enum class Outcome {
    Accepted,  // recorded; more ranks to come
    Complete,  // recorded, and every rank has joined: send the table
    Rejected,  // not for this rendezvous (other session), or a rank already taken: tell only this joiner
    Failed,    // the joins disagree: the whole rendezvous failed (failure())
  };

  explicit RendezvousState(uint64_t session) : session_(session) {}

  Outcome join(const wire::Request& request, std::string blob, std::string* rejection);

  // A joined rank left before every rank joined: the rendezvous cannot complete.
  void fail_for_departure(int rank);

  bool failed() const { return !failure_.empty(); }
  const std::string& failure() const { return failure_; }
  // dcInvalidUsage when the joins disagree, dcRemoteError when a rank left.
  dcResult_t failure_code() const { return failure_code_; }
  // Every rank's blob, in rank order (once complete).
  std::vector<std::string> blobs() const;
  // "3 of 4 ranks joined (missing ranks: 2)".
  std::string progress() const;

 private:
  uint64_t session_;
  int nranks_ = 0;  // learnt from the first join
  // By rank: what was joined so far costs memory, not what nranks claims.
  std::map<int, std::string> blobs_;
  std::string failure_;
  dcResult_t failure_code_ = dcInvalidUsage;
};

}  // namespace dc
