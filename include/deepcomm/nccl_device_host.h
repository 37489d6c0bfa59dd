/* The host side of NCCL 2.30.7's device API, as NVIDIA declares it in nccl_device/core.h and its
 * neighbours rather than in nccl.h: the types a device communicator's requirements, teams and
 * properties take, and the host functions libnccl.so.2 exports for them. Include it after
 * deepcomm/nccl.h, never together with NVIDIA's nccl_device headers (which define the same types);
 * a program written for NCCL includes NVIDIA's. Layouts are checked against NVIDIA's 2.30.7 headers
 * by tests/nccl/nccl_abi_test.
 */
#ifndef DEEPCOMM_NCCL_DEVICE_HOST_H_
#define DEEPCOMM_NCCL_DEVICE_HOST_H_

#include "deepcomm/nccl.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- The host side of NCCL's device API (NVIDIA: nccl_device/core.h and neighbours). ----
 * DeepComm has no device-initiated API yet: ncclDevCommCreate and what needs a device
 * communicator return ncclInvalidUsage; teams and requirement sizes are computed. As in NVIDIA's
 * headers the pncclX twins of these functions are exported but not declared. */

struct ncclDevComm; /* laid out by NVIDIA's nccl_device/impl/comm__types.h */
typedef struct ncclDevComm ncclDevComm_t;
typedef struct ncclWindow_vidmem ncclWindow_vidmem_t;

/* nRanks ranks, this one at rank, spaced stride apart in the world. */
struct ncclTeam {
  int nRanks, rank, stride;
};
typedef struct ncclTeam ncclTeam_t;

typedef uint32_t ncclDevResourceHandle;
typedef ncclDevResourceHandle ncclDevResourceHandle_t;
typedef uint32_t ncclGinSignal_t;
typedef uint32_t ncclGinCounter_t;
typedef struct {
  uint64_t opaque[2];
} ncclGinRequest_t;

struct ncclMultimemHandle {
  void* mcBasePtr;
};
typedef struct ncclMultimemHandle ncclMultimemHandle_t;

struct ncclLsaBarrierHandle {
  ncclDevResourceHandle_t bufHandle;
  int nBarriers;
};
typedef struct ncclLsaBarrierHandle ncclLsaBarrierHandle_t;

struct ncclGinBarrierHandle {
  ncclGinSignal_t signal0;
  ncclDevResourceHandle_t unused;
};
typedef struct ncclGinBarrierHandle ncclGinBarrierHandle_t;

struct ncclLLA2AHandle {
  ncclDevResourceHandle_t bufHandle;
  uint32_t nSlots;
};
typedef struct ncclLLA2AHandle ncclLLA2AHandle_t;

typedef struct ncclDevCommRequirements ncclDevCommRequirements_t;
typedef struct ncclDevResourceRequirements ncclDevResourceRequirements_t;
typedef struct ncclTeamRequirements ncclTeamRequirements_t;
typedef struct ncclCommProperties ncclCommProperties_t;

typedef enum { NCCL_GIN_CONNECTION_NONE, NCCL_GIN_CONNECTION_FULL, NCCL_GIN_CONNECTION_RAIL } ncclGinConnectionType_t;

/* What a device communicator must provide. Start from NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER. */
struct ncclDevCommRequirements {
  size_t size;
  unsigned int magic;
  unsigned int version;
  ncclDevResourceRequirements_t* resourceRequirementsList;
  ncclTeamRequirements_t* teamRequirementsList;
  bool lsaMultimem;
  int barrierCount;
  int lsaBarrierCount;
  int railGinBarrierCount;
  int lsaLLA2ABlockCount, lsaLLA2ASlotCount;
  bool ginForceEnable;
  int ginContextCount;
  int ginSignalCount;
  int ginCounterCount;
  ncclGinConnectionType_t ginConnectionType;
  bool ginExclusiveContexts;
  int ginQueueDepth;
  int ginTrafficClass;
  int worldGinBarrierCount;
  bool ginStrongSignalsRequired;
  bool ginVaSignalsRequired;
};

#define NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER                                                                      \
  {                                                                                                                 \
    sizeof(ncclDevCommRequirements_t), NCCL_API_MAGIC, NCCL_VERSION_CODE, NULL, NULL, false /* lsaMultimem */,      \
        0 /* barrierCount */, 0 /* lsaBarrierCount */, 0 /* railGinBarrierCount */, 0 /* lsaLLA2ABlockCount */,     \
        0 /* lsaLLA2ASlotCount */, false /* ginForceEnable */, 4 /* ginContextCount */, 0 /* ginSignalCount */,     \
        0 /* ginCounterCount */, NCCL_GIN_CONNECTION_NONE, false /* ginExclusiveContexts */, 0 /* ginQueueDepth */, \
        NCCL_CONFIG_UNDEF_INT /* ginTrafficClass */, 0 /* worldGinBarrierCount */,                                  \
        true /* ginStrongSignalsRequired */, true /* ginVaSignalsRequired */                                        \
  }

/* A buffer (and signals, counters) in the device communicator's resource window. */
struct ncclDevResourceRequirements {
  ncclDevResourceRequirements_t* next;
  size_t bufferSize, bufferAlign;
  ncclDevResourceHandle_t* outBufferHandle; /* set by ncclDevCommCreate when not NULL */
  int ginSignalCount;
  int ginCounterCount;
  ncclGinSignal_t* outGinSignalStart;
  ncclGinCounter_t* outGinCounterStart;
};

struct ncclTeamRequirements {
  ncclTeamRequirements_t* next;
  ncclTeam_t team;
  bool multimem;
  ncclMultimemHandle_t* outMultimemHandle;
};

#define NCCL_COMM_PROPERTIES_INITIALIZER \
  { sizeof(ncclCommProperties_t), NCCL_API_MAGIC, NCCL_VERSION_CODE }

typedef enum {
  NCCL_GIN_TYPE_NONE = 0,
  NCCL_GIN_TYPE_PROXY = 2,
  NCCL_GIN_TYPE_GDAKI = 3,
  NCCL_GIN_TYPE_GPI = 4
} ncclGinType_t;

/* What ncclCommQueryProperties reports. Start from NCCL_COMM_PROPERTIES_INITIALIZER. */
struct ncclCommProperties {
  size_t size;
  unsigned int magic;
  unsigned int version;
  int rank;
  int nRanks;
  int cudaDev;
  int nvmlDev;
  bool deviceApiSupport;
  bool multimemSupport;
  ncclGinType_t ginType;
  int nLsaTeams;
  bool hostRmaSupport;
  ncclGinType_t railedGinType;
};

ncclResult_t ncclCommQueryProperties(ncclComm_t comm, ncclCommProperties_t* props);
ncclResult_t ncclDevCommCreate(ncclComm_t comm, ncclDevCommRequirements_t const* reqs, ncclDevComm_t* outDevComm);
ncclResult_t ncclDevCommDestroy(ncclComm_t comm, ncclDevComm_t const* devComm);

/* Addresses in a window: of the multicast mapping, or of a peer's buffer (by LSA or world rank),
 * as seen from this process. DeepComm maps no window into a peer yet: only the rank's own buffer
 * (LSA rank 0, or the rank itself) has an address. */
ncclResult_t ncclGetLsaMultimemDevicePointer(ncclWindow_t window, size_t offset, void** outPtr);
ncclResult_t ncclGetMultimemDevicePointer(ncclWindow_t window, size_t offset, ncclMultimemHandle_t multimem,
                                          void** outPtr);
ncclResult_t ncclGetLsaDevicePointer(ncclWindow_t window, size_t offset, int lsaRank, void** outPtr);
ncclResult_t ncclGetPeerDevicePointer(ncclWindow_t window, size_t offset, int peer, void** outPtr);

/* Teams: the world; the LSA team (ranks whose memory this one can load and store: DeepComm, with
 * no mapped windows yet, has only the rank itself); the rail (the world divided by the LSA team). */
ncclTeam_t ncclTeamWorld(ncclComm_t comm);
ncclTeam_t ncclTeamLsa(ncclComm_t comm);
ncclTeam_t ncclTeamRail(ncclComm_t comm);
/* World (or LSA) rank of rank `rank` of team, a team this rank belongs to. */
int ncclTeamRankToWorld(ncclComm_t comm, ncclTeam_t team, int rank);
int ncclTeamRankToLsa(ncclComm_t comm, ncclTeam_t team, int rank);

/* Requirement builders: the resources a barrier or an LL all-to-all needs. */
ncclResult_t ncclLsaBarrierCreateRequirement(ncclTeam_t team, int nBarriers, ncclLsaBarrierHandle_t* outHandle,
                                             ncclDevResourceRequirements_t* outReq);
ncclResult_t ncclGinBarrierCreateRequirement(ncclComm_t comm, ncclTeam_t team, int nBarriers,
                                             ncclGinBarrierHandle_t* outHandle, ncclDevResourceRequirements_t* outReq);
/* Slots for maxElts elements of up to maxEltSize bytes each. */
int ncclLLA2ACalcSlots(int maxElts, int maxEltSize);
ncclResult_t ncclLLA2ACreateRequirement(int nBlocks, int nSlots, ncclLLA2AHandle_t* outHandle,
                                        ncclDevResourceRequirements_t* outReq);

#ifdef __cplusplus
}
#endif

#endif /* DEEPCOMM_NCCL_DEVICE_HOST_H_ */
