#include "src/core/bootstrap/wire.h"

namespace dc::wire {

namespace {
constexpr uint32_t kRequestMagic = 0x4a424344;  // "DCBJ" read as little-endian

void put_le(uint8_t* at, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) at[i] = static_cast<uint8_t>(value >> (8 * i));
}

uint64_t get_le(const uint8_t* at, int bytes) {
  uint64_t value = 0;
  for (int i = 0; i < bytes; ++i) value |= uint64_t(at[i]) << (8 * i);
  return value;
}
}  // namespace

void put_u32(std::string& out, uint32_t value) {
  uint8_t b[4];
  put_le(b, value, 4);
  out.append(reinterpret_cast<const char*>(b), 4);
}

void put_u64(std::string& out, uint64_t value) {
  uint8_t b[8];
  put_le(b, value, 8);
  out.append(reinterpret_cast<const char*>(b), 8);
}

uint32_t get_u32(const uint8_t* at) { return static_cast<uint32_t>(get_le(at, 4)); }
uint64_t get_u64(const uint8_t* at) { return get_le(at, 8); }

std::array<uint8_t, kRequestBytes> encode_request(const Request& r) {
  std::array<uint8_t, kRequestBytes> b{};
  put_le(&b[0], kRequestMagic, 4);
  b[4] = static_cast<uint8_t>(r.kind);
  put_le(&b[5], r.session, 8);
  put_le(&b[13], static_cast<uint32_t>(r.rank), 4);
  put_le(&b[17], static_cast<uint32_t>(r.nranks), 4);
  put_le(&b[21], r.blob_bytes, 8);
  return b;
}

bool decode_request(const uint8_t* b, Request* r) {
  if (get_le(b, 4) != kRequestMagic) return false;
  if (b[4] != uint8_t(RequestKind::Join) && b[4] != uint8_t(RequestKind::StatusQuery)) return false;
  r->kind = static_cast<RequestKind>(b[4]);
  r->session = get_le(b + 5, 8);
  r->rank = static_cast<int32_t>(get_le(b + 13, 4));
  r->nranks = static_cast<int32_t>(get_le(b + 17, 4));
  r->blob_bytes = get_le(b + 21, 8);
  return true;
}

std::string encode_error(dcResult_t code, const std::string& message) {
  std::string out(1, static_cast<char>(ReplyKind::Error));
  put_u32(out, static_cast<uint32_t>(code));
  put_u32(out, static_cast<uint32_t>(message.size()));
  return out + message;
}

std::string encode_status(const std::string& text) {
  std::string out(1, static_cast<char>(ReplyKind::Status));
  put_u32(out, static_cast<uint32_t>(text.size()));
  return out + text;
}

std::string encode_table_header(const std::vector<std::string>& blobs) {
  std::string out(1, static_cast<char>(ReplyKind::Table));
  put_u32(out, static_cast<uint32_t>(blobs.size()));
  for (const auto& blob : blobs) put_u64(out, blob.size());
  return out;
}

}  // namespace dc::wire
