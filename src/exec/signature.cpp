#include "src/exec/signature.h"

#include "kernels/reduce.h"
#include "src/plan/plan.h"

namespace dc {

namespace {

// bit 63: valid; 59-62 collective; 55-58 datatype; 49-54 op (63: a user op); 35-48 root + 1, or for
// a compressed all-reduce kCompressed plus 13 bits of its spec's hash; 0-34 count.
constexpr uint64_t kValid = 1ull << 63;
constexpr uint64_t kCountMask = (1ull << 35) - 1;
constexpr int kUserOp = 63;
constexpr uint64_t kCompressed = 0x2000;

}  // namespace

uint64_t operation_signature(const OpArgs& a) {
  if (is_point_to_point(a.collective)) return 0;
  const uint64_t op = !is_reduction(a.collective) ? 0 : a.op < dcNumOps ? static_cast<uint64_t>(a.op) : kUserOp;
  uint64_t root = is_rooted(a.collective) ? static_cast<uint64_t>(a.root + 1) & 0x3fff : 0;
  if (a.compressed) root = kCompressed | (a.compressed->spec_hash & (kCompressed - 1));
  return kValid | (static_cast<uint64_t>(a.collective) << 59) | (static_cast<uint64_t>(a.datatype) << 55) | (op << 49) |
         (root << 35) | (a.count & kCountMask);
}

std::string describe_signature(uint64_t s) {
  const auto coll = static_cast<dcCollective_t>((s >> 59) & 0xf);
  const auto type = static_cast<dcDataType_t>((s >> 55) & 0xf);
  const int op = static_cast<int>((s >> 49) & 0x3f);
  const uint64_t root_bits = (s >> 35) & 0x3fff;
  const bool compressed = coll == dcCollAllReduce && (root_bits & kCompressed);
  const int root = compressed ? -1 : static_cast<int>(root_bits) - 1;
  std::string text =
      std::string(collective_name(coll)) + "(count=" + std::to_string(s & kCountMask) + ", " + datatype_name(type);
  if (is_reduction(coll))
    text += std::string(", ") + (op == kUserOp ? "premulsum" : redop_name(static_cast<dcRedOp_t>(op)));
  if (root >= 0) text += ", root=" + std::to_string(root);
  if (compressed) text += ", compressed with spec #" + std::to_string(root_bits & (kCompressed - 1));
  return text + ")";
}

}  // namespace dc
