#include <cstring>

#include "base/error.h"
#include "base/random_bytes.h"
#include "src/core/bootstrap.h"
#include "src/core/bootstrap/unique_id_layout.h"

namespace dc {

namespace {

constexpr char kMagic[4] = {'D', 'C', 'I', 'D'};
constexpr uint8_t kVersion = 2;
constexpr uint8_t kFlagHostedByRank0 = 1;
constexpr uint8_t kFlagAuthenticated = 2;
constexpr size_t kFlagsAt = 5, kFamilyAt = 6, kPortAt = 8, kSessionAt = 16, kAddressAt = 24, kSecretAt = 40;
constexpr size_t kUsedBytes = kSecretAt + sizeof(Secret::bytes);

void put_le(char* at, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) at[i] = static_cast<char>((value >> (8 * i)) & 0xff);
}

uint64_t get_le(const char* at, int bytes) {
  uint64_t value = 0;
  for (int i = 0; i < bytes; ++i) value |= uint64_t(static_cast<uint8_t>(at[i])) << (8 * i);
  return value;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

dcUniqueId encode_unique_id(const RootAddress& root, const IdCredentials& credentials) {
  dcUniqueId id{};
  char* b = id.internal;
  std::memcpy(b, kMagic, sizeof kMagic);
  b[4] = static_cast<char>(kVersion);
  b[kFlagsAt] = static_cast<char>((root.hosted_by_rank0 ? kFlagHostedByRank0 : 0) |
                                  (credentials.authenticated ? kFlagAuthenticated : 0));
  const auto& address = root.endpoint.address();
  if (address.is_v4()) {
    put_le(b + kFamilyAt, 4, 2);
    auto bytes = address.to_v4().to_bytes();
    std::memcpy(b + kAddressAt, bytes.data(), bytes.size());
  } else {
    put_le(b + kFamilyAt, 6, 2);
    auto bytes = address.to_v6().to_bytes();
    std::memcpy(b + kAddressAt, bytes.data(), bytes.size());
  }
  put_le(b + kPortAt, root.endpoint.port(), 2);
  put_le(b + kSessionAt, credentials.session, 8);
  std::memcpy(b + kSecretAt, credentials.secret.bytes.data(), credentials.secret.bytes.size());
  return id;
}

void validate_unique_id(const dcUniqueId& id) {
  const char* b = id.internal;
  if (std::memcmp(b, kMagic, sizeof kMagic) != 0)
    fail(dcInvalidArgument, "the id is not a DeepComm unique id (bad magic); make it with dcGetUniqueId");
  if (static_cast<uint8_t>(b[4]) != kVersion)
    fail(dcInvalidArgument, "the id is not a DeepComm unique id of this version (layout " +
                                std::to_string(static_cast<uint8_t>(b[4])) + ", expected " + std::to_string(kVersion) +
                                ")");
  uint64_t family = get_le(b + kFamilyAt, 2);
  if ((family != 4 && family != 6) || get_le(b + kPortAt, 2) == 0)
    fail(dcInvalidArgument, "the id is not a DeepComm unique id (corrupt root address)");
  const auto flags = static_cast<uint8_t>(b[kFlagsAt]);
  bool padding_clear = b[kPortAt + 2] == 0 && b[kPortAt + 3] == 0;
  for (size_t i = kPortAt + 4; i < kSessionAt; ++i) padding_clear = padding_clear && b[i] == 0;
  for (size_t i = kUsedBytes; i < DC_UNIQUE_ID_BYTES; ++i) padding_clear = padding_clear && b[i] == 0;
  if (family == 4)
    for (size_t i = kAddressAt + 4; i < kSecretAt; ++i) padding_clear = padding_clear && b[i] == 0;
  if ((flags & ~(kFlagHostedByRank0 | kFlagAuthenticated)) != 0 || !padding_clear)
    fail(dcInvalidArgument, "the id is not a DeepComm unique id (unknown flags or bytes set)");
}

RootAddress decode_root_address(const dcUniqueId& id) {
  const char* b = id.internal;
  boost::asio::ip::address address;
  if (get_le(b + kFamilyAt, 2) == 4) {
    boost::asio::ip::address_v4::bytes_type bytes;
    std::memcpy(bytes.data(), b + kAddressAt, bytes.size());
    address = boost::asio::ip::address_v4(bytes);
  } else {
    boost::asio::ip::address_v6::bytes_type bytes;
    std::memcpy(bytes.data(), b + kAddressAt, bytes.size());
    address = boost::asio::ip::address_v6(bytes);
  }
  RootAddress root;
  root.endpoint = {address, static_cast<unsigned short>(get_le(b + kPortAt, 2))};
  root.hosted_by_rank0 = (static_cast<uint8_t>(b[kFlagsAt]) & kFlagHostedByRank0) != 0;
  return root;
}

uint64_t unique_id_session(const dcUniqueId& id) { return get_le(id.internal + kSessionAt, 8); }

Secret unique_id_secret(const dcUniqueId& id) { return unique_id_credentials(id).secret; }

IdCredentials unique_id_credentials(const dcUniqueId& id) {
  IdCredentials c;
  c.session = unique_id_session(id);
  std::memcpy(c.secret.bytes.data(), id.internal + kSecretAt, c.secret.bytes.size());
  c.authenticated = (static_cast<uint8_t>(id.internal[kFlagsAt]) & kFlagAuthenticated) != 0;
  return c;
}

IdCredentials random_credentials() {
  IdCredentials c;
  random_bytes(&c.session, sizeof c.session);
  random_bytes(c.secret.bytes.data(), c.secret.bytes.size());
  c.authenticated = true;
  return c;
}

uint64_t session_from_text(std::string_view text) {
  uint64_t hash = 0xcbf29ce484222325ull;  // FNV-1a
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 0x100000001b3ull;
  }
  return hash;
}

std::string unique_id_to_hex(const dcUniqueId& id) {
  static const char digits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(2 * DC_UNIQUE_ID_BYTES);
  for (char c : id.internal) {
    auto byte = static_cast<uint8_t>(c);
    hex.push_back(digits[byte >> 4]);
    hex.push_back(digits[byte & 15]);
  }
  return hex;
}

dcUniqueId unique_id_from_hex(const std::string& hex) {
  if (hex.size() != 2 * DC_UNIQUE_ID_BYTES)
    fail(dcInvalidArgument, "a unique id in hex has " + std::to_string(2 * DC_UNIQUE_ID_BYTES) + " digits, got " +
                                std::to_string(hex.size()));
  dcUniqueId id{};
  for (size_t i = 0; i < DC_UNIQUE_ID_BYTES; ++i) {
    int high = hex_digit(hex[2 * i]), low = hex_digit(hex[2 * i + 1]);
    if (high < 0 || low < 0)
      fail(dcInvalidArgument,
           "a unique id in hex has a non-hex character at offset " + std::to_string(high < 0 ? 2 * i : 2 * i + 1));
    id.internal[i] = static_cast<char>(high << 4 | low);
  }
  return id;
}

}  // namespace dc
