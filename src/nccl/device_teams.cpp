// The pure computations of NCCL's device API: teams, rank conversions, and the resource sizes of
// LSA barriers and LL all-to-alls, with NCCL 2.30's formulas. A rank's LSA team (the ranks whose
// windows in ncclMemAlloc memory it can load from and store to) is its host's ranks when they are
// consecutive, equal in number on every host and connected over shared memory, else the rank
// alone (dcCommLoadStoreTeam); the rail team is the outer factor of the world by it.
#include <cstring>

#include "deepcomm/nccl_device_host.h"
#include "src/nccl/checks.h"

using dc::nccl::comm_shape;
using dc::nccl::CommShape;
using dc::nccl::guarded;
using dc::nccl::invalid_argument;
using dc::nccl::lsa_team;
using dc::nccl::LsaTeam;
using dc::nccl::require_output;

namespace {

// The team of comm, or the empty team (with the error in ncclGetLastError) for a bad comm.
template <typename MakeTeam>
ncclTeam_t team_of(ncclComm_t comm, const char* function, MakeTeam make_team) {
  ncclTeam_t team = {0, 0, 0};
  guarded([&] {
    team = make_team(comm_shape(comm, function));
    return ncclSuccess;
  });
  return team;
}

// World rank of rank `rank` of team (NCCL: comm.rank + (rank - team.rank) * team.stride), or -1
// with an error for a bad comm or a rank outside the team.
int team_rank_to_world(ncclComm_t comm, const ncclTeam_t& team, int rank, const char* function) {
  int world = -1;
  guarded([&] {
    const CommShape shape = comm_shape(comm, function);
    if (rank < 0 || rank >= team.nRanks) {
      invalid_argument(function,
                       "rank " + std::to_string(rank) + " is not in the team of " + std::to_string(team.nRanks));
    }
    world = shape.rank + (rank - team.rank) * team.stride;
    return ncclSuccess;
  });
  return world;
}

}  // namespace

DEEPCOMM_NCCL_API(ncclTeam_t, ncclTeamWorld, ncclComm_t comm) {
  return team_of(comm, "ncclTeamWorld", [](const CommShape& shape) { return ncclTeam_t{shape.nranks, shape.rank, 1}; });
}

DEEPCOMM_NCCL_API(ncclTeam_t, ncclTeamLsa, ncclComm_t comm) {
  return team_of(comm, "ncclTeamLsa", [comm](const CommShape& shape) {
    const LsaTeam lsa = lsa_team(comm, "ncclTeamLsa");
    return ncclTeam_t{lsa.size, shape.rank - lsa.first, 1};
  });
}

// NCCL: the outer factor of the world by the LSA team.
DEEPCOMM_NCCL_API(ncclTeam_t, ncclTeamRail, ncclComm_t comm) {
  return team_of(comm, "ncclTeamRail", [comm](const CommShape& shape) {
    const int size = lsa_team(comm, "ncclTeamRail").size;
    return ncclTeam_t{shape.nranks / size, shape.rank / size, size};
  });
}

DEEPCOMM_NCCL_API(int, ncclTeamRankToWorld, ncclComm_t comm, ncclTeam_t team, int rank) {
  return team_rank_to_world(comm, team, rank, "ncclTeamRankToWorld");
}

// NCCL: lsaSelf + (rank - team.rank) * team.stride; -1 (with an error) when that rank is not in
// this rank's LSA team.
DEEPCOMM_NCCL_API(int, ncclTeamRankToLsa, ncclComm_t comm, ncclTeam_t team, int rank) {
  constexpr const char* kFunction = "ncclTeamRankToLsa";
  const int world = team_rank_to_world(comm, team, rank, kFunction);
  if (world < 0) return -1;
  int lsa = -1;
  guarded([&]() -> ncclResult_t {
    const LsaTeam mine = lsa_team(comm, kFunction);
    if (world < mine.first || world >= mine.first + mine.size) {
      invalid_argument(kFunction, "rank " + std::to_string(rank) + " of the team is not in this rank's LSA team");
    }
    lsa = world - mine.first;
    return ncclSuccess;
  });
  return lsa;
}

DEEPCOMM_NCCL_API(int, ncclLLA2ACalcSlots, int maxElts, int maxEltSize) {
  // Each slot holds 8 bytes of an element.
  return maxElts * ((maxEltSize + 7) / 8);
}

DEEPCOMM_NCCL_API(ncclResult_t, ncclLLA2ACreateRequirement, int nBlocks, int nSlots, ncclLLA2AHandle_t* outHandle,
                  ncclDevResourceRequirements_t* outReq) {
  return guarded([&] {
    constexpr const char* kFunction = "ncclLLA2ACreateRequirement";
    require_output(outHandle, kFunction, "outHandle");
    require_output(outReq, kFunction, "outReq");
    if (nBlocks < 0 || nSlots < 0) invalid_argument(kFunction, "nBlocks and nSlots must not be negative");
    outHandle->nSlots = static_cast<uint32_t>(nSlots);
    std::memset(outReq, 0, sizeof *outReq);
    // Per block: an epoch word and two generations of slots, 16 bytes each.
    outReq->bufferSize = static_cast<size_t>(nBlocks) * (1 + 2 * static_cast<size_t>(nSlots)) * 16;
    outReq->bufferAlign = 16;
    outReq->outBufferHandle = &outHandle->bufHandle;
    return ncclSuccess;
  });
}

DEEPCOMM_NCCL_API(ncclResult_t, ncclLsaBarrierCreateRequirement, ncclTeam_t team, int nBarriers,
                  ncclLsaBarrierHandle_t* outHandle, ncclDevResourceRequirements_t* outReq) {
  return guarded([&] {
    constexpr const char* kFunction = "ncclLsaBarrierCreateRequirement";
    require_output(outHandle, kFunction, "outHandle");
    require_output(outReq, kFunction, "outReq");
    if (nBarriers < 0 || team.nRanks < 0) {
      invalid_argument(kFunction, "nBarriers and team.nRanks must not be negative");
    }
    std::memset(outReq, 0, sizeof *outReq);
    outHandle->nBarriers = nBarriers;
    // Per barrier: three state words and one inbox word per team rank.
    outReq->bufferSize =
        (3 * static_cast<size_t>(nBarriers) + static_cast<size_t>(nBarriers) * static_cast<size_t>(team.nRanks)) *
        sizeof(uint32_t);
    outReq->bufferAlign = alignof(uint32_t);
    outReq->outBufferHandle = &outHandle->bufHandle;
    return ncclSuccess;
  });
}
