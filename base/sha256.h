// SHA-256 (FIPS 180-4) and HMAC-SHA-256 (RFC 2104), written here rather than linked from a crypto
// library: libnccl.so.2 is often preloaded into programs that bring their own OpenSSL, and two
// libraries exporting the same symbols is how such programs break. Everything here has hidden
// visibility (the project's default), so nothing can clash.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace dc {

using Digest = std::array<uint8_t, 32>;

class Sha256 {
 public:
  Sha256();
  void update(const void* data, size_t len);
  Digest finish();  // the object is spent afterwards

 private:
  void compress(const uint8_t* block);

  uint32_t state_[8];
  uint8_t buffer_[64];
  size_t buffered_ = 0;
  uint64_t total_bytes_ = 0;
};

Digest sha256(const void* data, size_t len);

// Incremental HMAC-SHA-256: the message may be fed in pieces.
class HmacSha256 {
 public:
  HmacSha256(const void* key, size_t key_len);
  void update(const void* data, size_t len) { inner_.update(data, len); }
  Digest finish();

 private:
  Sha256 inner_;
  uint8_t outer_key_[64];
};

Digest hmac_sha256(const void* key, size_t key_len, const void* data, size_t len);

// Compares without data-dependent branches or early exit, so the time taken says nothing about
// where two proofs first differ.
bool constant_time_equal(const void* a, const void* b, size_t len);

}  // namespace dc
