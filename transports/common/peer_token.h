// A transport's token: 128 random bits drawn when the transport is made and published in its
// address, so in the card its rank presents at the rendezvous. A connection that claims a rank must
// carry that rank's token (frame.h's Hello), which binds it to that card: another process holding
// the secret (a stale rank of an earlier job with the same DEEPCOMM_SECRET) cannot take the place of
// a real rank. It is no secret; the handshake's HMAC is the credential.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace dc {

using PeerToken = std::array<uint8_t, 16>;

PeerToken random_token();
std::string token_hex(const PeerToken& token);
// False unless `hex` is exactly 32 hex digits.
bool token_from_hex(std::string_view hex, PeerToken* token);

}  // namespace dc
