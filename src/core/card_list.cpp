#include "src/core/card_list.h"

#include <cstdint>

#include "base/error.h"

namespace dc {

std::string encode_list(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) {
    uint8_t length[8];
    for (int i = 0; i < 8; ++i) length[i] = static_cast<uint8_t>(uint64_t(item.size()) >> (8 * i));
    out.append(reinterpret_cast<const char*>(length), sizeof length);
    out += item;
  }
  return out;
}

std::vector<std::string> decode_list(const std::string& blob, size_t count, size_t item_bytes) {
  std::vector<std::string> items;
  size_t at = 0;
  while (at < blob.size()) {
    if (items.size() == count) fail(dcRemoteError, "DeepComm: scalable bootstrap: a card list longer than its group");
    if (blob.size() - at < 8) fail(dcRemoteError, "DeepComm: scalable bootstrap: a card list ends inside a length");
    uint64_t n = 0;
    for (int i = 0; i < 8; ++i) n |= uint64_t(static_cast<uint8_t>(blob[at + i])) << (8 * i);
    at += 8;
    if (n > item_bytes || n > blob.size() - at)
      fail(dcRemoteError, "DeepComm: scalable bootstrap: a card of " + std::to_string(n) + " bytes in a list");
    items.push_back(blob.substr(at, n));
    at += n;
  }
  if (items.size() != count)
    fail(dcRemoteError, "DeepComm: scalable bootstrap: a card list of " + std::to_string(items.size()) +
                            " cards for a group of " + std::to_string(count));
  return items;
}

std::vector<std::string> cards_from_root0(const std::vector<std::string>& joined, const std::vector<int>& first,
                                          const std::vector<int>& size, size_t card_bytes) {
  const size_t groups = first.size();
  if (size.size() != groups || groups == 0 || joined.size() != size_t(size[0]) + groups - 1)
    fail(dcRemoteError, "DeepComm: scalable bootstrap: root 0 gathered " + std::to_string(joined.size()) + " entries");
  size_t total = 0;
  for (int s : size) total += static_cast<size_t>(s);
  std::vector<std::string> cards(total);
  for (int i = 0; i < size[0]; ++i) cards[first[0] + i] = joined[i];
  for (size_t j = 1; j < groups; ++j) {
    std::vector<std::string> group = decode_list(joined[size[0] + j - 1], size[j], card_bytes);
    for (size_t i = 0; i < group.size(); ++i) cards[first[j] + i] = std::move(group[i]);
  }
  return cards;
}

}  // namespace dc
