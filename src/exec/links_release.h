// Waiting until a communicator's connections are freed. The last communicator using a PeerLinks
// lets go of it; the engine then deletes it, each connection closes its channel, and the channel
// is freed when the last handler pending on it (a read the close aborted) has run: several engine
// turns after the communicator is gone. Destroy waits for them, so that it returns with the
// communicator's memory given back (what a caller measuring its heap right after sees).
#pragma once

#include <chrono>
#include <memory>
#include <vector>

#include "src/exec/exec_comm.h"

namespace dc {

class LinksRelease {
 public:
  // Notes what of `links` outlives them; call on the engine thread, before letting go of them.
  explicit LinksRelease(const std::shared_ptr<PeerLinks>& links);
  // Once nothing holds the links any more, waits until everything they held is freed, or the
  // deadline; whether it is (true also while another communicator still uses them).
  bool wait(std::chrono::steady_clock::time_point deadline) const;

 private:
  bool freed() const;

  std::weak_ptr<PeerLinks> links_;
  std::vector<std::weak_ptr<const void>> remains_;
};

}  // namespace dc
