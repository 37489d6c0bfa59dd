// libFuzzer target: what the scalable bootstrap and every init decode from other ranks: card lists
// (card_list.h) of a claimed group size, root 0's gathered table of k groups, and the cards
// themselves (RankCard::decode). Each must decode within its bounds or fail with dc::Error.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "base/error.h"
#include "src/core/card_list.h"
#include "src/core/peer_setup.h"

namespace {

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "invariant broken: %s\n", what);
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const size_t count = data[0] % 16;
  const int groups = 1 + data[1] % 4;
  const std::string blob(reinterpret_cast<const char*>(data + 2), size - 2);
  try {
    const auto items = dc::decode_list(blob, count, 256);
    check(items.size() == count, "list size");
    for (const auto& item : items) check(item.size() <= 256, "item bound");
    check(dc::encode_list(items) == blob, "a decoded list encodes back to the same bytes");
  } catch (const dc::Error&) {}
  // Root 0's table: group 0 has two ranks, each other group three; the input is split into entries.
  std::vector<int> first{0}, sizes{2};
  for (int g = 1; g < groups; ++g) {
    first.push_back(first.back() + sizes.back());
    sizes.push_back(3);
  }
  std::vector<std::string> joined;
  for (size_t at = 0; at < blob.size() && joined.size() < size_t(2 + groups - 1);) {
    const size_t n = std::min<size_t>(static_cast<uint8_t>(blob[at]), blob.size() - at - 1);
    joined.push_back(blob.substr(at + 1, n));
    at += 1 + n;
  }
  try {
    const auto cards = dc::cards_from_root0(joined, first, sizes, 256);
    check(cards.size() == size_t(first.back() + sizes.back()), "every rank has a card");
  } catch (const dc::Error&) {}
  try {
    const dc::RankCard card = dc::RankCard::decode(blob);
    check(dc::RankCard::decode(card.encode()).encode() == card.encode(), "a card decodes back to itself");
  } catch (const dc::Error&) {}
  return 0;
}
