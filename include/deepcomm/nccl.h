/* DeepComm's NCCL-compatible header.
 *
 * Declares the C ABI of NCCL 2.30.7 (version code 23007) exactly as libnccl.so.2 built by DeepComm
 * exports it: the same macros, enum values, struct tags and layouts, and the same functions with
 * their pncclX twins (profiling entry points). Programs written for NCCL compile against it
 * unchanged. Layouts are checked below and, against NVIDIA's headers (2.30.7 from PyPI, 2.28.9
 * from the CUDA toolkit), by tests/nccl/nccl_abi_test. The host side of NCCL's device API, which
 * NVIDIA declares in nccl_device/core.h and its neighbours (not in nccl.h), is declared in
 * deepcomm/nccl_device_host.h, so that a program including NVIDIA's nccl_device.h after this
 * header (nccl-tests does) compiles; docs/nccl-abi.md says which functions DeepComm implements.
 *
 * The CUDA toolkit is optional: when <cuda_runtime.h> can be found, cudaStream_t is CUDA's own
 * type; otherwise, or when DEEPCOMM_NCCL_WITHOUT_CUDA_RUNTIME is defined (a translation unit that
 * must not see CUDA's headers although the compiler finds them), the same opaque pointer type is
 * declared here. DeepComm works on host memory,
 * where the stream argument of data calls is accepted and ignored.
 */
#ifndef NCCL_H_
#define NCCL_H_

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#ifndef __cplusplus
#include <stdbool.h>
#endif

#if defined(__has_include) && !defined(DEEPCOMM_NCCL_WITHOUT_CUDA_RUNTIME)
#if __has_include(<cuda_runtime.h>)
#include <cuda_runtime.h>
#define DEEPCOMM_NCCL_HAVE_CUDA_RUNTIME 1
#endif
#endif
#ifndef DEEPCOMM_NCCL_HAVE_CUDA_RUNTIME
/* Same type as the CUDA runtime's, so that both definitions agree if both are seen. */
typedef struct CUstream_st* cudaStream_t;
#endif

#define NCCL_MAJOR 2
#define NCCL_MINOR 30
#define NCCL_PATCH 7
#define NCCL_SUFFIX ""

#define NCCL_VERSION_CODE 23007
/* Before 2.9 the code was X*1000 + Y*100 + Z; since then X*10000 + Y*100 + Z. */
#define NCCL_VERSION(X, Y, Z) (((X) <= 2 && (Y) <= 8) ? (X)*1000 + (Y)*100 + (Z) : (X)*10000 + (Y)*100 + (Z))

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ncclComm* ncclComm_t;
typedef struct ncclWindow_vidmem* ncclWindow_t;
#define NCCL_COMM_NULL NULL

#define NCCL_UNIQUE_ID_BYTES 128
typedef struct {
  char internal[NCCL_UNIQUE_ID_BYTES];
} ncclUniqueId;

typedef enum {
  ncclSuccess = 0,
  ncclUnhandledCudaError = 1,
  ncclSystemError = 2,
  ncclInternalError = 3,
  ncclInvalidArgument = 4,
  ncclInvalidUsage = 5,
  ncclRemoteError = 6,
  ncclInProgress = 7,
  ncclTimeout = 8,
  ncclNumResults = 9
} ncclResult_t;

#define NCCL_CONFIG_UNDEF_INT INT_MIN
#define NCCL_CONFIG_UNDEF_PTR NULL
#define NCCL_SPLIT_NOCOLOR -1
#define NCCL_UNDEF_FLOAT -1.0f

/* The magic of every versioned struct (ncclConfig_t, ncclDevCommRequirements_t, ...). */
#define NCCL_API_MAGIC 0xcafebeef

/* Flags of ncclCommWindowRegister. */
#define NCCL_WIN_DEFAULT 0x00
#define NCCL_WIN_COLL_SYMMETRIC 0x01
#define NCCL_WIN_STRICT_ORDERING 0x02

#define NCCL_WIN_REQUIRED_ALIGNMENT 4096

/* Values of ncclConfig_t.CTAPolicy. */
#define NCCL_CTA_POLICY_DEFAULT 0x00
#define NCCL_CTA_POLICY_EFFICIENCY 0x01
#define NCCL_CTA_POLICY_ZERO 0x02

/* Flags of ncclCommShrink: shrink as is, or abort the parent's pending operations first. */
#define NCCL_SHRINK_DEFAULT 0x00
#define NCCL_SHRINK_ABORT 0x01

/* Flags of ncclCommRevoke (only 0 is valid). */
#define NCCL_REVOKE_DEFAULT 0x00

/* Communicator options. Always start from NCCL_CONFIG_INITIALIZER: the library checks magic,
 * reads only the fields that fit in size, and gives fields left at NCCL_CONFIG_UNDEF_* their
 * defaults. The struct tag names the version that added the last field. */
typedef struct ncclConfig_v23000 {
  size_t size;
  unsigned int magic;
  unsigned int version;
  int blocking;
  int cgaClusterSize;
  int minCTAs;
  int maxCTAs;
  const char* netName;
  int splitShare;
  int trafficClass;
  const char* commName;
  int collnetEnable;
  int CTAPolicy;
  int shrinkShare;
  int nvlsCTAs;
  int nChannelsPerNetPeer;
  int nvlinkCentricSched;
  /* Added in 2.30. */
  int graphUsageMode;
  int numRmaCtx; /* contexts of ncclPutSignal/ncclSignal; ctx is in [0, numRmaCtx) */
  int maxP2pPeers;
  int graphStreamOrdering;
} ncclConfig_t;

#define NCCL_CONFIG_INITIALIZER                                                                     \
  {                                                                                                 \
    sizeof(ncclConfig_t), NCCL_API_MAGIC, NCCL_VERSION_CODE, NCCL_CONFIG_UNDEF_INT /* blocking */,  \
        NCCL_CONFIG_UNDEF_INT /* cgaClusterSize */, NCCL_CONFIG_UNDEF_INT /* minCTAs */,            \
        NCCL_CONFIG_UNDEF_INT /* maxCTAs */, NCCL_CONFIG_UNDEF_PTR /* netName */,                   \
        NCCL_CONFIG_UNDEF_INT /* splitShare */, NCCL_CONFIG_UNDEF_INT /* trafficClass */,           \
        NCCL_CONFIG_UNDEF_PTR /* commName */, NCCL_CONFIG_UNDEF_INT /* collnetEnable */,            \
        NCCL_CONFIG_UNDEF_INT /* CTAPolicy */, NCCL_CONFIG_UNDEF_INT /* shrinkShare */,             \
        NCCL_CONFIG_UNDEF_INT /* nvlsCTAs */, NCCL_CONFIG_UNDEF_INT /* nChannelsPerNetPeer */,      \
        NCCL_CONFIG_UNDEF_INT /* nvlinkCentricSched */, NCCL_CONFIG_UNDEF_INT /* graphUsageMode */, \
        NCCL_CONFIG_UNDEF_INT /* numRmaCtx */, NCCL_CONFIG_UNDEF_INT /* maxP2pPeers */,             \
        NCCL_CONFIG_UNDEF_INT /* graphStreamOrdering */                                             \
  }

/* Result of ncclGroupSimulateEnd. Start from NCCL_SIM_INFO_INITIALIZER. */
typedef struct ncclSimInfo_v22200 {
  size_t size;
  unsigned int magic;
  unsigned int version;
  float estimatedTime;
} ncclSimInfo_t;

#define NCCL_SIM_INFO_INITIALIZER \
  { sizeof(ncclSimInfo_t), 0x74685283, NCCL_VERSION_CODE, NCCL_UNDEF_FLOAT }

/* Layout on LP64 platforms, the ABI of libnccl.so.2 on Linux. */
#if defined(__LP64__)
#if defined(__cplusplus)
#define DEEPCOMM_NCCL_LAYOUT_CHECK(cond) static_assert(cond, #cond)
#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define DEEPCOMM_NCCL_LAYOUT_CHECK(cond) _Static_assert(cond, #cond)
#endif
#ifdef DEEPCOMM_NCCL_LAYOUT_CHECK
DEEPCOMM_NCCL_LAYOUT_CHECK(sizeof(ncclUniqueId) == 128);
DEEPCOMM_NCCL_LAYOUT_CHECK(sizeof(ncclConfig_t) == 96);
DEEPCOMM_NCCL_LAYOUT_CHECK(offsetof(ncclConfig_t, size) == 0);
DEEPCOMM_NCCL_LAYOUT_CHECK(offsetof(ncclConfig_t, magic) == 8);
DEEPCOMM_NCCL_LAYOUT_CHECK(offsetof(ncclConfig_t, version) == 12);
DEEPCOMM_NCCL_LAYOUT_CHECK(offsetof(ncclConfig_t, blocking) == 16);
DEEPCOMM_NCCL_LAYOUT_CHECK(offsetof(ncclConfig_t, cgaClusterSize) == 20);
DEEPCOMM_NCCL_LAYOUT_CHECK(offsetof(ncclConfig_t, minCTAs) == 24);
DEEPCOMM_NCCL_LAYOUT_CHECK(offsetof(ncclConfig_t, maxCTAs) == 28);
DEEPCOMM_NCCL_LAYOUT_CHECK(offsetof(ncclConfig_t, netName) == 32);
DEEPCOMM_NCCL_LAYOUT_CHECK(offsetof(ncclConfig_t, splitShare) == 40);
DEEPCOMM_NCCL_LAYOUT_CHECK(offsetof(ncclConfig_t, trafficClass) == 44);
DEEPCOMM_NCCL_LAYOUT_CHECK(offsetof(ncclConfig_t, commName) == 48);
DEEPCOMM_NCCL_LAYOUT_CHECK(offsetof(ncclConfig_t, collnetEnable) == 56);
DEEPCOMM_NCCL_LAYOUT_CHECK(offsetof(ncclConfig_t, CTAPolicy) == 60);
DEEPCOMM_NCCL_LAYOUT_CHECK(offsetof(ncclConfig_t, shrinkShare) == 64);
DEEPCOMM_NCCL_LAYOUT_CHECK(offsetof(ncclConfig_t, nvlsCTAs) == 68);
DEEPCOMM_NCCL_LAYOUT_CHECK(offsetof(ncclConfig_t, nChannelsPerNetPeer) == 72);
DEEPCOMM_NCCL_LAYOUT_CHECK(offsetof(ncclConfig_t, nvlinkCentricSched) == 76);
DEEPCOMM_NCCL_LAYOUT_CHECK(offsetof(ncclConfig_t, graphUsageMode) == 80);
DEEPCOMM_NCCL_LAYOUT_CHECK(offsetof(ncclConfig_t, numRmaCtx) == 84);
DEEPCOMM_NCCL_LAYOUT_CHECK(offsetof(ncclConfig_t, maxP2pPeers) == 88);
DEEPCOMM_NCCL_LAYOUT_CHECK(offsetof(ncclConfig_t, graphStreamOrdering) == 92);
DEEPCOMM_NCCL_LAYOUT_CHECK(sizeof(ncclSimInfo_t) == 24);
DEEPCOMM_NCCL_LAYOUT_CHECK(offsetof(ncclSimInfo_t, size) == 0);
DEEPCOMM_NCCL_LAYOUT_CHECK(offsetof(ncclSimInfo_t, magic) == 8);
DEEPCOMM_NCCL_LAYOUT_CHECK(offsetof(ncclSimInfo_t, version) == 12);
DEEPCOMM_NCCL_LAYOUT_CHECK(offsetof(ncclSimInfo_t, estimatedTime) == 16);
#undef DEEPCOMM_NCCL_LAYOUT_CHECK
#endif
#endif

/* Memory for NCCL operations (DeepComm: host memory that peers on the node can map). */
ncclResult_t ncclMemAlloc(void** ptr, size_t size);
ncclResult_t pncclMemAlloc(void** ptr, size_t size);
ncclResult_t ncclMemFree(void* ptr);
ncclResult_t pncclMemFree(void* ptr);

/* NCCL_VERSION_CODE of the ABI implemented. */
ncclResult_t ncclGetVersion(int* version);
ncclResult_t pncclGetVersion(int* version);

/* Makes the id that all ranks of a new communicator pass to ncclCommInitRank*. */
ncclResult_t ncclGetUniqueId(ncclUniqueId* uniqueId);
ncclResult_t pncclGetUniqueId(ncclUniqueId* uniqueId);

ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank, ncclConfig_t* config);
ncclResult_t pncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank, ncclConfig_t* config);

/* Rank rank of nranks; every rank calls it (from its own thread or process, or in a group). */
ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank);
ncclResult_t pncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank);

/* ndev communicators of one clique in this process; comm[i] is rank i. */
ncclResult_t ncclCommInitAll(ncclComm_t* comm, int ndev, const int* devlist);
ncclResult_t pncclCommInitAll(ncclComm_t* comm, int ndev, const int* devlist);

/* Completes the communicator's pending operations; ncclCommDestroy then frees it. */
ncclResult_t ncclCommFinalize(ncclComm_t comm);
ncclResult_t pncclCommFinalize(ncclComm_t comm);

ncclResult_t ncclCommDestroy(ncclComm_t comm);
ncclResult_t pncclCommDestroy(ncclComm_t comm);

/* Frees the communicator, abandoning operations still running. */
ncclResult_t ncclCommAbort(ncclComm_t comm);
ncclResult_t pncclCommAbort(ncclComm_t comm);

/* Stops in-flight operations; revokeFlags must be NCCL_REVOKE_DEFAULT. */
ncclResult_t ncclCommRevoke(ncclComm_t comm, int revokeFlags);
ncclResult_t pncclCommRevoke(ncclComm_t comm, int revokeFlags);

/* Ranks with the same color form a new communicator, ordered by key; NCCL_SPLIT_NOCOLOR gives
 * *newcomm = NULL. config == NULL inherits the parent's configuration. */
ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm, ncclConfig_t* config);
ncclResult_t pncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm, ncclConfig_t* config);

/* New communicator without the listed ranks (see NCCL_SHRINK_*). */
ncclResult_t ncclCommShrink(ncclComm_t comm, int* excludeRanksList, int excludeRanksCount, ncclComm_t* newcomm,
                            ncclConfig_t* config, int shrinkFlags);
ncclResult_t pncclCommShrink(ncclComm_t comm, int* excludeRanksList, int excludeRanksCount, ncclComm_t* newcomm,
                             ncclConfig_t* config, int shrinkFlags);

/* A one-time id for growing comm: one existing rank asks for it; a second id cannot be had while
 * one is unconsumed, and an id is consumed by the grow that uses it. */
ncclResult_t ncclCommGetUniqueId(ncclComm_t comm, ncclUniqueId* uniqueId);
ncclResult_t pncclCommGetUniqueId(ncclComm_t comm, ncclUniqueId* uniqueId);

/* New communicator of nRanks ranks: existing ranks pass comm and rank -1 (the one that got the id
 * passes it, the others NULL) and keep their numbers; new ranks pass comm NULL, the id and their
 * assigned rank. */
ncclResult_t ncclCommGrow(ncclComm_t comm, int nRanks, const ncclUniqueId* uniqueId, int rank, ncclComm_t* newcomm,
                          ncclConfig_t* config);
ncclResult_t pncclCommGrow(ncclComm_t comm, int nRanks, const ncclUniqueId* uniqueId, int rank, ncclComm_t* newcomm,
                           ncclConfig_t* config);

/* Like ncclCommInitRankConfig with nId ids (the same list on every rank) to spread the init. */
ncclResult_t ncclCommInitRankScalable(ncclComm_t* newcomm, int nranks, int myrank, int nId, ncclUniqueId* commIds,
                                      ncclConfig_t* config);
ncclResult_t pncclCommInitRankScalable(ncclComm_t* newcomm, int nranks, int myrank, int nId, ncclUniqueId* commIds,
                                       ncclConfig_t* config);

const char* ncclGetErrorString(ncclResult_t result);
const char* pncclGetErrorString(ncclResult_t result);

/* Message of the last error of the calling thread. */
const char* ncclGetLastError(ncclComm_t comm);
const char* pncclGetLastError(ncclComm_t comm);

/* Re-reads the logging environment. As in NVIDIA's 2.30 header, declared only where
 * NCCL_OS_LINUX is defined, and otherwise a macro that does nothing. */
#ifdef NCCL_OS_LINUX
__attribute__((deprecated("ncclResetDebugInit is not part of the supported NCCL API"))) void ncclResetDebugInit(void);
__attribute__((deprecated("pncclResetDebugInit is not part of the supported NCCL API"))) void pncclResetDebugInit(void);
#else
#define ncclResetDebugInit()
#define pncclResetDebugInit()
#endif

ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* asyncError);
ncclResult_t pncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* asyncError);

ncclResult_t ncclCommCount(const ncclComm_t comm, int* count);
ncclResult_t pncclCommCount(const ncclComm_t comm, int* count);

/* CUDA device of the communicator (DeepComm on host memory: -1). */
ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int* device);
ncclResult_t pncclCommCuDevice(const ncclComm_t comm, int* device);

ncclResult_t ncclCommUserRank(const ncclComm_t comm, int* rank);
ncclResult_t pncclCommUserRank(const ncclComm_t comm, int* rank);

/* Buffer registration for zero-copy transfers. */
ncclResult_t ncclCommRegister(const ncclComm_t comm, void* buff, size_t size, void** handle);
ncclResult_t pncclCommRegister(const ncclComm_t comm, void* buff, size_t size, void** handle);
ncclResult_t ncclCommDeregister(const ncclComm_t comm, void* handle);
ncclResult_t pncclCommDeregister(const ncclComm_t comm, void* handle);

/* Flags of ncclCommSuspend. */
#define NCCL_SUSPEND_MEM 0x01 /* release the memory the communicator can re-create */

/* A suspended communicator cannot be used until ncclCommResume. */
ncclResult_t ncclCommSuspend(ncclComm_t comm, int flags);
ncclResult_t pncclCommSuspend(ncclComm_t comm, int flags);
ncclResult_t ncclCommResume(ncclComm_t comm);
ncclResult_t pncclCommResume(ncclComm_t comm);

/* What ncclCommMemStats reports (NCCL counts GPU memory; DeepComm the memory it holds). */
typedef enum {
  ncclStatGpuMemSuspend = 0,   /* bytes that suspend releases */
  ncclStatGpuMemSuspended = 1, /* 1 while suspended, else 0 */
  ncclStatGpuMemPersist = 2,   /* bytes that suspend keeps */
  ncclStatGpuMemTotal = 3      /* all bytes tracked */
} ncclCommMemStat_t;

ncclResult_t ncclCommMemStats(ncclComm_t comm, ncclCommMemStat_t stat, uint64_t* value);
ncclResult_t pncclCommMemStats(ncclComm_t comm, ncclCommMemStat_t stat, uint64_t* value);

/* Collective memory windows (see NCCL_WIN_*). */
ncclResult_t ncclCommWindowRegister(ncclComm_t comm, void* buff, size_t size, ncclWindow_t* win, int winFlags);
ncclResult_t pncclCommWindowRegister(ncclComm_t comm, void* buff, size_t size, ncclWindow_t* win, int winFlags);
ncclResult_t ncclCommWindowDeregister(ncclComm_t comm, ncclWindow_t win);
ncclResult_t pncclCommWindowDeregister(ncclComm_t comm, ncclWindow_t win);

/* The buffer that win was registered with. */
ncclResult_t ncclWinGetUserPtr(ncclComm_t comm, ncclWindow_t win, void** outUserPtr);
ncclResult_t pncclWinGetUserPtr(ncclComm_t comm, ncclWindow_t win, void** outUserPtr);

/* Only there to give ncclRedOp_t's largest value the size of an enum. */
typedef enum { ncclNumOps_dummy = 5 } ncclRedOp_dummy_t;
/* Values from ncclNumOps up to ncclMaxRedOp are operators made by ncclRedOpCreate*. */
typedef enum {
  ncclSum = 0,
  ncclProd = 1,
  ncclMax = 2,
  ncclMin = 3,
  ncclAvg = 4,
  ncclNumOps = 5,
  ncclMaxRedOp = 0x7fffffff >> (32 - 8 * sizeof(ncclRedOp_dummy_t))
} ncclRedOp_t;

typedef enum {
  ncclInt8 = 0,
  ncclChar = 0,
  ncclUint8 = 1,
  ncclInt32 = 2,
  ncclInt = 2,
  ncclUint32 = 3,
  ncclInt64 = 4,
  ncclUint64 = 5,
  ncclFloat16 = 6,
  ncclHalf = 6,
  ncclFloat32 = 7,
  ncclFloat = 7,
  ncclFloat64 = 8,
  ncclDouble = 8,
  ncclBfloat16 = 9,
  ncclFloat8e4m3 = 10,
  ncclFloat8e5m2 = 11,
  ncclNumTypes = 12
} ncclDataType_t;

/* Where a scalar argument lives and when it is read. */
typedef enum {
  ncclScalarDevice = 0,       /* device memory, read while the operation runs */
  ncclScalarHostImmediate = 1 /* host memory, read before the creating call returns */
} ncclScalarResidence_t;

/* op = sum over ranks of (*scalar * input), for collectives on comm with this datatype. */
ncclResult_t ncclRedOpCreatePreMulSum(ncclRedOp_t* op, void* scalar, ncclDataType_t datatype,
                                      ncclScalarResidence_t residence, ncclComm_t comm);
ncclResult_t pncclRedOpCreatePreMulSum(ncclRedOp_t* op, void* scalar, ncclDataType_t datatype,
                                       ncclScalarResidence_t residence, ncclComm_t comm);
ncclResult_t ncclRedOpDestroy(ncclRedOp_t op, ncclComm_t comm);
ncclResult_t pncclRedOpDestroy(ncclRedOp_t op, ncclComm_t comm);

/* Collectives. Every rank of comm calls each one in the same order. In place when the buffers
 * coincide as NCCL documents (recvbuff == sendbuff, or at this rank's block). */
ncclResult_t ncclReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclRedOp_t op,
                        int root, ncclComm_t comm, cudaStream_t stream);
ncclResult_t pncclReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclRedOp_t op,
                         int root, ncclComm_t comm, cudaStream_t stream);

/* In-place broadcast (deprecated form of ncclBroadcast). */
ncclResult_t ncclBcast(void* buff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm,
                       cudaStream_t stream);
ncclResult_t pncclBcast(void* buff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm,
                        cudaStream_t stream);

ncclResult_t ncclBroadcast(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                           ncclComm_t comm, cudaStream_t stream);
ncclResult_t pncclBroadcast(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                            ncclComm_t comm, cudaStream_t stream);

ncclResult_t ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclRedOp_t op,
                           ncclComm_t comm, cudaStream_t stream);
ncclResult_t pncclAllReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclRedOp_t op,
                            ncclComm_t comm, cudaStream_t stream);

/* sendbuff holds nranks * recvcount elements; rank i receives block i of the result. */
ncclResult_t ncclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount, ncclDataType_t datatype,
                               ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream);
ncclResult_t pncclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount, ncclDataType_t datatype,
                                ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream);

/* recvbuff holds nranks * sendcount elements; rank i's data lands at block i. */
ncclResult_t ncclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount, ncclDataType_t datatype,
                           ncclComm_t comm, cudaStream_t stream);
ncclResult_t pncclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount, ncclDataType_t datatype,
                            ncclComm_t comm, cudaStream_t stream);

/* Block j of sendbuff goes to rank j; block i of recvbuff comes from rank i. */
ncclResult_t ncclAlltoAll(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclComm_t comm,
                          cudaStream_t stream);
ncclResult_t pncclAlltoAll(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclComm_t comm,
                           cudaStream_t stream);

/* Root receives rank i's count elements at block i of recvbuff. */
ncclResult_t ncclGather(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                        ncclComm_t comm, cudaStream_t stream);
ncclResult_t pncclGather(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                         ncclComm_t comm, cudaStream_t stream);

/* Root sends block i of sendbuff to rank i. */
ncclResult_t ncclScatter(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                         ncclComm_t comm, cudaStream_t stream);
ncclResult_t pncclScatter(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                          ncclComm_t comm, cudaStream_t stream);

/* Point-to-point; the peer posts the matching call with the same count and datatype. Several
 * sends and receives that depend on each other go inside one group. */
ncclResult_t ncclSend(const void* sendbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                      cudaStream_t stream);
ncclResult_t pncclSend(const void* sendbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                       cudaStream_t stream);
ncclResult_t ncclRecv(void* recvbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                      cudaStream_t stream);
ncclResult_t pncclRecv(void* recvbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                       cudaStream_t stream);

/* One-sided: writes count elements of localbuff at peerWinOffset bytes into peer's window
 * peerWin, then signals sigIdx on context ctx (in [0, numRmaCtx)); flags must be 0. Operations
 * to one peer on one context arrive in program order. */
ncclResult_t ncclPutSignal(const void* localbuff, size_t count, ncclDataType_t datatype, int peer, ncclWindow_t peerWin,
                           size_t peerWinOffset, int sigIdx, int ctx, unsigned int flags, ncclComm_t comm,
                           cudaStream_t stream);
ncclResult_t pncclPutSignal(const void* localbuff, size_t count, ncclDataType_t datatype, int peer,
                            ncclWindow_t peerWin, size_t peerWinOffset, int sigIdx, int ctx, unsigned int flags,
                            ncclComm_t comm, cudaStream_t stream);

/* A signal without data. */
ncclResult_t ncclSignal(int peer, int sigIdx, int ctx, unsigned int flags, ncclComm_t comm, cudaStream_t stream);
ncclResult_t pncclSignal(int peer, int sigIdx, int ctx, unsigned int flags, ncclComm_t comm, cudaStream_t stream);

/* Wait for opCnt signals from peer on sigIdx and ctx. */
typedef struct {
  int opCnt;
  int peer;
  int sigIdx;
  int ctx;
} ncclWaitSignalDesc_t;

ncclResult_t ncclWaitSignal(int nDesc, ncclWaitSignalDesc_t* signalDescs, ncclComm_t comm, cudaStream_t stream);
ncclResult_t pncclWaitSignal(int nDesc, ncclWaitSignalDesc_t* signalDescs, ncclComm_t comm, cudaStream_t stream);

/* Calls between ncclGroupStart and the outermost ncclGroupEnd run as one batch. */
ncclResult_t ncclGroupStart(void);
ncclResult_t pncclGroupStart(void);
ncclResult_t ncclGroupEnd(void);
ncclResult_t pncclGroupEnd(void);

/* Prices the pending group without running it. */
ncclResult_t ncclGroupSimulateEnd(ncclSimInfo_t* simInfo);
ncclResult_t pncclGroupSimulateEnd(ncclSimInfo_t* simInfo);

/* Parameters by key: typed through a handle, or as strings. Returned strings and tables belong
 * to the library and stay valid until the next call of the same function on the same thread. */
typedef struct ncclParamHandle* ncclParamHandle_t;

ncclResult_t ncclParamBind(ncclParamHandle_t* out, const char* key);
ncclResult_t pncclParamBind(ncclParamHandle_t* out, const char* key);
ncclResult_t ncclParamGetI8(ncclParamHandle_t h, int8_t* out);
ncclResult_t pncclParamGetI8(ncclParamHandle_t h, int8_t* out);
ncclResult_t ncclParamGetI16(ncclParamHandle_t h, int16_t* out);
ncclResult_t pncclParamGetI16(ncclParamHandle_t h, int16_t* out);
ncclResult_t ncclParamGetI32(ncclParamHandle_t h, int32_t* out);
ncclResult_t pncclParamGetI32(ncclParamHandle_t h, int32_t* out);
ncclResult_t ncclParamGetI64(ncclParamHandle_t h, int64_t* out);
ncclResult_t pncclParamGetI64(ncclParamHandle_t h, int64_t* out);
ncclResult_t ncclParamGetU8(ncclParamHandle_t h, uint8_t* out);
ncclResult_t pncclParamGetU8(ncclParamHandle_t h, uint8_t* out);
ncclResult_t ncclParamGetU16(ncclParamHandle_t h, uint16_t* out);
ncclResult_t pncclParamGetU16(ncclParamHandle_t h, uint16_t* out);
ncclResult_t ncclParamGetU32(ncclParamHandle_t h, uint32_t* out);
ncclResult_t pncclParamGetU32(ncclParamHandle_t h, uint32_t* out);
ncclResult_t ncclParamGetU64(ncclParamHandle_t h, uint64_t* out);
ncclResult_t pncclParamGetU64(ncclParamHandle_t h, uint64_t* out);
ncclResult_t ncclParamGetStr(ncclParamHandle_t h, const char** out);
ncclResult_t pncclParamGetStr(ncclParamHandle_t h, const char** out);
/* Copies the value's bytes into out (maxLen bytes at most); *len is the value's length. */
ncclResult_t ncclParamGet(ncclParamHandle_t h, void* out, int maxLen, int* len);
ncclResult_t pncclParamGet(ncclParamHandle_t h, void* out, int maxLen, int* len);
ncclResult_t ncclParamGetParameter(const char* key, const char** value, int* valueLen);
ncclResult_t pncclParamGetParameter(const char* key, const char** value, int* valueLen);
ncclResult_t ncclParamGetAllParameterKeys(const char*** table, int* tableLen);
ncclResult_t pncclParamGetAllParameterKeys(const char*** table, int* tableLen);
/* Writes every parameter to the log. */
void ncclParamDumpAll(void);
void pncclParamDumpAll(void);

#ifdef __cplusplus
}
#endif

#endif /* NCCL_H_ */
