// Growing a communicator (NCCL 2.30's ncclCommGetUniqueId and ncclCommGrow). One existing rank
// gets a one-time grow id: a fresh session and secret, and a root in its process that serves one
// rendezvous of the grown size. The existing ranks learn the id from an all-gather on the parent,
// in which they also agree on the size, and then every rank, old and new, runs init's bootstrap
// with its own rank: the existing ranks keep their numbers and the parent is left as it was.
#include <chrono>
#include <cstring>

#include "src/core/bootstrap.h"
#include "src/core/communicator.h"
#include "src/core/parent_allgather.h"
#include "src/core/settings.h"

namespace dc {

namespace {

// Whether an existing rank passed an id: none, its own unused grow id, or one it may not use.
constexpr int32_t kNoId = 0, kTheId = 1, kRefusedId = 2;

// What each existing rank tells the others before growing.
struct GrowArguments {
  int32_t nranks = 0;
  int32_t id_state = kNoId;
  dcUniqueId id{};
};

std::vector<uint8_t> to_bytes(const GrowArguments& a) {
  std::vector<uint8_t> bytes(sizeof a);
  std::memcpy(bytes.data(), &a, sizeof a);
  return bytes;
}

// The id every existing rank grows with, or the same error on every rank.
dcUniqueId agreed_id(const std::vector<uint8_t>& bytes, int parent_nranks, int nranks) {
  std::vector<GrowArguments> all(parent_nranks);
  std::memcpy(all.data(), bytes.data(), bytes.size());
  int holders = 0;
  dcUniqueId id{};
  for (int r = 0; r < parent_nranks; ++r) {
    if (all[r].nranks != nranks)
      fail(dcInvalidUsage, "DeepComm: grow: ranks disagree on the new size: rank " + std::to_string(r) + " passed " +
                               std::to_string(all[r].nranks) + ", this rank " + std::to_string(nranks));
    if (all[r].id_state == kRefusedId)
      fail(dcInvalidUsage, "DeepComm: grow: rank " + std::to_string(r) +
                               " passed an id that is not this communicator's unused grow id (one from "
                               "dcCommGrowId/ncclCommGetUniqueId on that rank, used once)");
    if (all[r].id_state == kTheId) {
      ++holders;
      id = all[r].id;
    }
  }
  if (holders != 1)
    fail(dcInvalidUsage, "DeepComm: grow: " + std::to_string(holders) +
                             " existing ranks passed a grow id; exactly one (the rank that got it) must");
  if (nranks <= parent_nranks)
    fail(dcInvalidArgument, "DeepComm: grow: the new size " + std::to_string(nranks) + " does not grow the " +
                                std::to_string(parent_nranks) + "-rank communicator");
  return id;
}

}  // namespace

void issue_grow_id(dcComm* comm, dcUniqueId* id) {
  const auto now = std::chrono::steady_clock::now();
  if (comm->grow_id && now < comm->grow_id_expiry)
    fail(dcInvalidUsage,
         "DeepComm: this rank already holds an unused grow id of the communicator; grow with it first (or wait "
         "for its bootstrap deadline to pass)");
  *id = make_grow_id(comm->exec.nranks);
  comm->grow_id = *id;
  comm->grow_id_expiry = now + std::chrono::milliseconds(config::integer(settings::kBootstrapTimeout));
}

dcComm* grow_comm(dcComm* parent, int nranks, const dcUniqueId* id, const dcConfig_t* config) {
  GrowArguments mine;
  mine.nranks = nranks;
  if (id != nullptr) {
    const bool ours = parent->grow_id && std::memcmp(parent->grow_id->internal, id->internal, sizeof *id) == 0;
    mine.id_state = ours ? kTheId : kRefusedId;
    if (ours) mine.id = *id;
    if (ours) parent->grow_id.reset();  // consumed, whatever comes of this grow
  }
  // Issued now, in order with the parent's other operations; every rank fails alike after it.
  auto exchange = std::make_shared<const ParentAllGather>(parent, to_bytes(mine), "grow");
  const int parent_nranks = parent->exec.nranks;
  return init_rank_when_id_known(
      nranks, parent->exec.rank,
      [exchange, parent_nranks, nranks] {
        const dcUniqueId agreed = agreed_id(exchange->wait(), parent_nranks, nranks);
        validate_unique_id(agreed);
        if (grow_id_parent_nranks(agreed) != parent_nranks)
          fail(dcInvalidUsage, "DeepComm: grow: the id was made for another communicator");
        return agreed;
      },
      config);
}

dcComm* join_grow(int nranks, const dcUniqueId& id, int rank, const dcConfig_t* config) {
  validate_unique_id(id);
  const int parent_nranks = grow_id_parent_nranks(id);
  if (parent_nranks == 0)
    fail(dcInvalidUsage,
         "DeepComm: grow: the id is not a grow id (dcGetUniqueId/ncclGetUniqueId make ids for init); a new rank "
         "joins with the id from dcCommGrowId/ncclCommGetUniqueId");
  if (nranks <= parent_nranks || rank < parent_nranks || rank >= nranks)
    fail(dcInvalidArgument, "DeepComm: grow: a new rank of a grown " + std::to_string(parent_nranks) +
                                "-rank communicator takes a rank in [" + std::to_string(parent_nranks) +
                                ", nranks = " + std::to_string(nranks) + "), not " + std::to_string(rank));
  return init_rank_when_id_known(
      nranks, rank, [id] { return id; }, config);
}

}  // namespace dc
