// The blob each test rank sends: rank 0 an empty one, rank 1 about 1 MiB, the others a few bytes.
#pragma once

#include <string>
#include <vector>

namespace dc::test {

inline std::string blob_of(int rank, int nranks) {
  if (rank == 0) return {};
  if (rank == 1) {
    std::string big((1 << 20) + 17, '\0');
    for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>((i * 131 + nranks) & 0xff);
    return big;
  }
  return "rank " + std::to_string(rank) + " of " + std::to_string(nranks);
}

// Index of the first wrong blob, or -1 when all are right.
inline int first_wrong_blob(const std::vector<std::string>& blobs, int nranks) {
  if (static_cast<int>(blobs.size()) != nranks) return 0;
  for (int r = 0; r < nranks; ++r)
    if (blobs[r] != blob_of(r, nranks)) return r;
  return -1;
}

}  // namespace dc::test
