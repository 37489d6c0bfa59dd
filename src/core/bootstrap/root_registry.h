// Where the roots started by this process live: each serves on its own thread, is joined when the
// process exits, and is forgotten by a forked child (its thread does not exist there).
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <chrono>
#include <cstdint>

#include "src/core/bootstrap/unique_id_layout.h"

namespace dc {

// Starts a root for `credentials` (session and secret) on bind_to (port 0: ephemeral) that serves until every rank joined or
// `deadline` passed; returns the endpoint it listens on. Throws dc::Error(dcSystemError) when it
// cannot listen there.
boost::asio::ip::tcp::endpoint start_rendezvous_root(const boost::asio::ip::tcp::endpoint& bind_to, bool reuse_address,
                                                     const IdCredentials& credentials,
                                                     std::chrono::milliseconds deadline);

}  // namespace dc
