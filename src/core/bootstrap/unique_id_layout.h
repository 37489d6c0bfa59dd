// What a dcUniqueId carries, and how it is laid out in its 128 bytes:
//   [0,4)   magic "DCID"          [4]     layout version (2)
//   [5]     flags (bit 0: the root is hosted by rank 0, the NCCL_COMM_ID / torchrun case;
//                  bit 1: the secret is a real one, random or from DEEPCOMM_SECRET)
//   [6,8)   address family (4 or 6, little-endian)
//   [8,10)  TCP port (little-endian)   [16,24) session (little-endian)
//   [24,40) address bytes (IPv4 in the first 4)
//   [40,56) secret: 128 bits every connection proves knowledge of (handshake.h)
//   the rest is zero.
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <cstdint>
#include <string_view>

#include "base/handshake.h"
#include "deepcomm/deepcomm.h"

namespace dc {

struct RootAddress {
  boost::asio::ip::tcp::endpoint endpoint;
  bool hosted_by_rank0 = false;  // rank 0 starts the root in bootstrap_allgather
};

// Who may take part: the session names the rendezvous, the secret is the credential.
struct IdCredentials {
  uint64_t session = 0;
  Secret secret;
  bool authenticated = false;  // false: an all-zero secret (NCCL_COMM_ID/torchrun without DEEPCOMM_SECRET)
};

dcUniqueId encode_unique_id(const RootAddress& root, const IdCredentials& credentials);
// The id must be valid (validate_unique_id).
RootAddress decode_root_address(const dcUniqueId& id);
IdCredentials unique_id_credentials(const dcUniqueId& id);

// A fresh random session and secret (getrandom).
IdCredentials random_credentials();
// A session every rank derives alike from shared text (NCCL_COMM_ID, torchrun's master address),
// for ids that ranks build independently instead of receiving.
uint64_t session_from_text(std::string_view text);

}  // namespace dc
