// What a dcUniqueId carries, and how it is laid out in its 128 bytes:
//   [0,4)   magic "DCID"          [4]     layout version (1)
//   [5]     flags (bit 0: the root is hosted by rank 0, the NCCL_COMM_ID / torchrun case)
//   [6,8)   address family (4 or 6, little-endian)
//   [8,10)  TCP port (little-endian)   [16,24) session (little-endian)
//   [24,40) address bytes (IPv4 in the first 4)   the rest is zero.
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <cstdint>
#include <string_view>

#include "deepcomm/deepcomm.h"

namespace dc {

struct RootAddress {
  boost::asio::ip::tcp::endpoint endpoint;
  bool hosted_by_rank0 = false;  // rank 0 starts the root in bootstrap_allgather
};

dcUniqueId encode_unique_id(const RootAddress& root, uint64_t session);
// The id must be valid (validate_unique_id).
RootAddress decode_root_address(const dcUniqueId& id);

// 64 random bits from the kernel (getrandom).
uint64_t random_session();
// A session every rank derives alike from shared text (NCCL_COMM_ID, torchrun's master address),
// for ids that ranks build independently instead of receiving.
uint64_t session_from_text(std::string_view text);

}  // namespace dc
