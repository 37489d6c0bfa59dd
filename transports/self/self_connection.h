// A rank's connection to itself: sends and receives to one's own rank (NCCL allows them) match by
// tag in memory and copy once. Engine thread only; completions are posted, never called inside
// send()/recv(), like the other transports.
#pragma once

#include <memory>

#include "transports/transport.h"

namespace dc {

std::shared_ptr<Connection> make_self_connection(boost::asio::io_context& io);

}  // namespace dc
