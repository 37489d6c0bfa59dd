// Lists of byte strings as the scalable bootstrap passes them (a group's cards through root 0, the
// whole table from a leader to its group): each item as a little-endian u64 length, then its bytes.
// Decoding checks every length against what is left and against the bounds before it allocates.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace dc {

std::string encode_list(const std::vector<std::string>& items);
// Throws dc::Error(dcRemoteError) unless blob holds exactly `count` items of at most item_bytes each.
std::vector<std::string> decode_list(const std::string& blob, size_t count, size_t item_bytes);

// Every rank's card from what root 0 gathered: the cards of group 0 (ranks first[0]..), then one
// list per other group, from its leader. Throws dc::Error(dcRemoteError) for a list of the wrong
// size or a malformed one.
std::vector<std::string> cards_from_root0(const std::vector<std::string>& joined, const std::vector<int>& first,
                                          const std::vector<int>& size, size_t card_bytes);

}  // namespace dc
