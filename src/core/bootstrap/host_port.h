// "host:port" and "[ipv6]:port" as NCCL_COMM_ID writes them.
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <string>

namespace dc {

// Resolves host (IPv4 preferred). `what` names the source in errors (e.g. "NCCL_COMM_ID").
// Throws dc::Error(dcInvalidArgument) on a malformed text or an unknown host.
boost::asio::ip::tcp::endpoint parse_host_port(const std::string& text, const std::string& what);

}  // namespace dc
