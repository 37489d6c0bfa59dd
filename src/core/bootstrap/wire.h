// Messages between a rank and the rendezvous root, after the handshake (handshake.h, purpose
// RootJoin or RootStatus) proved that both hold the unique id's secret; integers are little-endian.
//   Request (rank -> root): magic "DCBJ" u32, kind u8, session u64, rank i32, nranks i32,
//                           blob length u64, then the blob (joins only).
//   Reply (root -> rank):   kind u8, then
//     Table:  count u32, count x length u64, then the blobs back to back
//     Error:  code u32 (a dcResult_t), length u32, message
//     Status: length u32, text (the answer to a status query: who joined so far)
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "deepcomm/deepcomm.h"

namespace dc::wire {

enum class RequestKind : uint8_t { Join = 1, StatusQuery = 2 };
enum class ReplyKind : uint8_t { Table = 'T', Error = 'E', Status = 'S' };

constexpr size_t kRequestBytes = 29;
// Bounds on what either side allocates for the other: one rank's blob (a card, or a scalable
// bootstrap leader's list of its group's cards), the whole table, and a text.
constexpr uint64_t kMaxBlobBytes = uint64_t(64) << 20;
constexpr uint64_t kMaxTableBytes = uint64_t(1) << 30;
constexpr uint32_t kMaxMessageBytes = 1 << 20;
constexpr int kMaxRanks = 1 << 24;

struct Request {
  RequestKind kind = RequestKind::Join;
  uint64_t session = 0;
  int32_t rank = 0;
  int32_t nranks = 0;
  uint64_t blob_bytes = 0;
};

std::array<uint8_t, kRequestBytes> encode_request(const Request& request);
// False when the bytes are no request of ours (bad magic or kind).
bool decode_request(const uint8_t* bytes, Request* request);

std::string encode_error(dcResult_t code, const std::string& message);
std::string encode_status(const std::string& text);
// The table's kind, count and lengths; the blobs follow as they are.
std::string encode_table_header(const std::vector<std::string>& blobs);

void put_u32(std::string& out, uint32_t value);
void put_u64(std::string& out, uint64_t value);
uint32_t get_u32(const uint8_t* at);
uint64_t get_u64(const uint8_t* at);

}  // namespace dc::wire
