#include "transports/common/peer_token.h"

#include "base/random_bytes.h"

namespace dc {

namespace {

int digit_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

PeerToken random_token() {
  PeerToken token;
  random_bytes(token.data(), token.size());
  return token;
}

std::string token_hex(const PeerToken& token) {
  static const char digits[] = "0123456789abcdef";
  std::string hex;
  for (uint8_t b : token) {
    hex.push_back(digits[b >> 4]);
    hex.push_back(digits[b & 15]);
  }
  return hex;
}

bool token_from_hex(std::string_view hex, PeerToken* token) {
  if (hex.size() != 2 * token->size()) return false;
  for (size_t i = 0; i < token->size(); ++i) {
    const int high = digit_value(hex[2 * i]), low = digit_value(hex[2 * i + 1]);
    if (high < 0 || low < 0) return false;
    (*token)[i] = static_cast<uint8_t>(high << 4 | low);
  }
  return true;
}

}  // namespace dc
