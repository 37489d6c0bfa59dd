#include "src/core/bootstrap/rendezvous_state.h"

namespace dc {

RendezvousState::Outcome RendezvousState::join(const wire::Request& r, std::string blob, std::string* rejection) {
  if (r.session != session_) {
    *rejection = "the unique id's session does not match this root's: it serves another communicator";
    return Outcome::Rejected;
  }
  if (failed()) return Outcome::Failed;
  if (r.nranks < 1 || r.nranks > wire::kMaxRanks) {
    failure_ = "rank " + std::to_string(r.rank) + " joined with nranks " + std::to_string(r.nranks) +
               ", which is out of range";
    return Outcome::Failed;
  }
  if (nranks_ == 0) nranks_ = r.nranks;
  if (r.nranks != nranks_) {
    failure_ = "inconsistent nranks: rank " + std::to_string(r.rank) + " joined with nranks " +
               std::to_string(r.nranks) + " but an earlier rank with nranks " + std::to_string(nranks_);
    return Outcome::Failed;
  }
  if (r.rank < 0 || r.rank >= nranks_) {
    failure_ = "rank " + std::to_string(r.rank) + " is out of range for nranks " + std::to_string(nranks_);
    return Outcome::Failed;
  }
  if (blobs_.count(r.rank)) {
    // The first claim of a rank stands: a second one is turned away without disturbing it.
    *rejection = "rank " + std::to_string(r.rank) + " has already joined this rendezvous; a second claim is refused";
    return Outcome::Rejected;
  }
  blobs_[r.rank] = std::move(blob);
  return static_cast<int>(blobs_.size()) == nranks_ ? Outcome::Complete : Outcome::Accepted;
}

std::vector<std::string> RendezvousState::blobs() const {
  std::vector<std::string> table;
  table.reserve(blobs_.size());
  for (const auto& [rank, blob] : blobs_) table.push_back(blob);
  return table;
}

std::string RendezvousState::progress() const {
  if (nranks_ == 0) return "no rank joined yet";
  const int joined = static_cast<int>(blobs_.size());
  std::string text = std::to_string(joined) + " of " + std::to_string(nranks_) + " ranks joined";
  if (joined == nranks_) return text;
  text += " (missing ranks:";
  int listed = 0;
  for (int r = 0; r < nranks_ && listed < 16; ++r)
    if (!blobs_.count(r)) {
      text += " " + std::to_string(r);
      ++listed;
    }
  if (nranks_ - joined > listed) text += " ...";
  return text + ")";
}

}  // namespace dc
