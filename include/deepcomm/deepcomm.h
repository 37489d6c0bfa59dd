/* DeepComm native C API.
 *
 * Everything NCCL offers on host memory, plus what NCCL lacks: requests for overlapping
 * communication with computation, communicators created from the launcher's environment,
 * plan inspection and transport counters. The NCCL ABI (libnccl.so.2) is a thin translation
 * onto this API; enum values are the same as NCCL's so that translation is a cast.
 *
 * Semantics on host memory: with a blocking communicator a call returns when the operation has
 * completed; inside dcGroupStart/dcGroupEnd the calls complete at the outermost dcGroupEnd. A call
 * given a non-NULL request pointer starts the operation and returns at once; dcTest/dcWait then
 * complete it. All errors are returned as dcResult_t; dcGetLastError() gives the message.
 *
 * Buffers are host memory: these calls take no stream, and the engine's threads read and write
 * them. Device buffers go through the NCCL ABI (libnccl.so.2), which serves them on the caller's
 * stream, DEEPCOMM_COMPRESS included.
 */
#ifndef DEEPCOMM_DEEPCOMM_H_
#define DEEPCOMM_DEEPCOMM_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DEEPCOMM_VERSION_MAJOR 0
#define DEEPCOMM_VERSION_MINOR 1
#define DEEPCOMM_VERSION_PATCH 0

typedef enum {
  dcSuccess = 0,
  dcUnhandledCudaError = 1,
  dcSystemError = 2,
  dcInternalError = 3,
  dcInvalidArgument = 4,
  dcInvalidUsage = 5,
  dcRemoteError = 6,
  dcInProgress = 7,
  dcNumResults = 8
} dcResult_t;

typedef enum {
  dcInt8 = 0,
  dcUint8 = 1,
  dcInt32 = 2,
  dcUint32 = 3,
  dcInt64 = 4,
  dcUint64 = 5,
  dcFloat16 = 6,
  dcFloat32 = 7,
  dcFloat64 = 8,
  dcBfloat16 = 9,
  dcFloat8e4m3 = 10,
  dcFloat8e5m2 = 11,
  dcNumTypes = 12
} dcDataType_t;

/* Values >= dcNumOps are operators made by dcRedOpCreatePreMulSum. */
typedef enum {
  dcSum = 0,
  dcProd = 1,
  dcMax = 2,
  dcMin = 3,
  dcAvg = 4,
  dcNumOps = 5,
  dcMaxRedOp = 0x7fffffff
} dcRedOp_t;

typedef enum {
  dcCollAllReduce = 0,
  dcCollBroadcast = 1,
  dcCollReduce = 2,
  dcCollAllGather = 3,
  dcCollReduceScatter = 4,
  dcCollAlltoAll = 5,
  dcCollGather = 6,
  dcCollScatter = 7,
  dcCollSend = 8,
  dcCollRecv = 9,
  dcNumCollectives = 10
} dcCollective_t;

typedef struct dcComm* dcComm_t;
typedef struct dcRequest* dcRequest_t;

#define DC_UNIQUE_ID_BYTES 128
typedef struct {
  char internal[DC_UNIQUE_ID_BYTES];
} dcUniqueId;

/* Communicator options. Start from DC_CONFIG_INIT; fields may be added at the end (size tells). */
typedef struct {
  size_t size;
  /* 1: init, split and calls return when complete. 0 (nonblocking): they start the work and
   * return dcInProgress; dcCommGetAsyncError reports dcInProgress until it finished, then
   * dcSuccess or the error. Buffers of a call may be reused once that happened. */
  int blocking;
  const char* commName; /* shown in logs; may be NULL */
  /* Contexts of the one-sided operations (dcPutSignal's ctx is in [0, rmaContexts)); 0: none. */
  int rmaContexts;
} dcConfig_t;
#define DC_CONFIG_INIT \
  { sizeof(dcConfig_t), 1, NULL, 1 }

/* Bytes moved by this communicator's rank, per transport. */
typedef struct {
  uint64_t shmBytesSent;
  uint64_t shmBytesReceived;
  uint64_t tcpBytesSent;
  uint64_t tcpBytesReceived;
  /* Of shmBytesReceived, large messages that were copied through the connection's shared segment
   * (the fallback where single copy is not possible), and those copied straight out of the
   * sender's registered dcMemAlloc/ncclMemAlloc memory mapped into this process. */
  uint64_t shmBytesStaged;
  uint64_t shmBytesFromRegistered;
  /* Through UCX (DEEPCOMM_TRANSPORT=ucx or ucx-all). */
  uint64_t ucxBytesSent;
  uint64_t ucxBytesReceived;
} dcCounters_t;

const char* dcGetErrorString(dcResult_t result);
/* Message of the last error on the calling thread ("" when none). */
const char* dcGetLastError(void);
dcResult_t dcGetVersion(int* version);

/* Makes an id and starts the rendezvous root in this process (it serves until all ranks joined
 * or the bootstrap deadline passed). The id may be passed to other processes by any means. */
dcResult_t dcGetUniqueId(dcUniqueId* uniqueId);
dcResult_t dcCommInitRank(dcComm_t* comm, int nranks, const dcUniqueId* uniqueId, int rank, const dcConfig_t* config);
/* The same with nIds unique ids (1 <= nIds <= nranks, the same array on every rank): ranks are
 * spread over the ids' rendezvous roots so that no root serves all of them. */
dcResult_t dcCommInitRankScalable(dcComm_t* comm, int nranks, int rank, int nIds, const dcUniqueId* ids,
                                  const dcConfig_t* config);
/* nranks ranks as threads of this process; comms[i] is rank i. */
dcResult_t dcCommInitAll(dcComm_t* comms, int nranks);
/* Rank and size from the launcher: DeepComm's own launcher (DEEPCOMM_RANK, DEEPCOMM_NRANKS,
 * DEEPCOMM_UNIQUE_ID), Open MPI / srun through PMIx, or torchrun's RANK, WORLD_SIZE, MASTER_ADDR,
 * MASTER_PORT. */
dcResult_t dcCommInitFromEnv(dcComm_t* comm, const dcConfig_t* config);
/* color < 0 (DC_SPLIT_NOCOLOR) returns *newcomm = NULL for this rank. */
#define DC_SPLIT_NOCOLOR -1
dcResult_t dcCommSplit(dcComm_t comm, int color, int key, dcComm_t* newcomm, const dcConfig_t* config);
dcResult_t dcCommFinalize(dcComm_t comm);
dcResult_t dcCommDestroy(dcComm_t comm);

/* Fault tolerance. A rank that dies, a peer that stops calling (DEEPCOMM_TIMEOUT), mismatched
 * calls, an abort or a revoke fail the communicator on every rank: pending calls return an error
 * (dcRemoteError, dcSystemError or dcInvalidUsage with a message) instead of hanging, and later
 * calls fail at once. dcCommGetAsyncError reports it. */
/* Fails every pending operation of comm (also one blocked in another thread, within a second),
 * tells the other ranks, and frees comm. */
dcResult_t dcCommAbort(dcComm_t comm);
/* Marks comm revoked on every rank: pending and later operations fail with dcInvalidUsage; split,
 * shrink and destroy still work. */
dcResult_t dcCommRevoke(dcComm_t comm);
/* Ranks of comm this rank saw die (connection lost without an orderly destroy), for choosing what
 * to exclude in dcCommShrink. *count = how many (at most capacity are written). */
dcResult_t dcCommFailedRanks(dcComm_t comm, int* ranks, int capacity, int* count);
/* A communicator of the ranks of comm not in excludeRanks (e.g. the survivors of a failure),
 * without a rendezvous: it reuses comm's connections. Every remaining rank calls it with the same
 * list. DC_SHRINK_ABORT first fails comm's pending operations. */
#define DC_SHRINK_DEFAULT 0
#define DC_SHRINK_ABORT 1
dcResult_t dcCommShrink(dcComm_t comm, const int* excludeRanks, int excludeCount, dcComm_t* newcomm,
                        const dcConfig_t* config, int flags);
/* Elastic communicators (docs/elastic.md): new ranks join a communicator, e.g. to replace those a
 * shrink removed. One rank of comm gets a one-time grow id: it carries a fresh secret, and a
 * rendezvous root in this process serves one grow until the bootstrap deadline
 * (DEEPCOMM_BOOTSTRAP_TIMEOUT). Asking again while this rank holds an unused one: dcInvalidUsage. */
dcResult_t dcCommGrowId(dcComm_t comm, dcUniqueId* growId);
/* The communicator of nranks (> comm's size) made of comm's ranks, which keep their numbers, and
 * nranks - size new ones. Existing ranks pass comm and rank -1; the rank that got the id passes
 * it, the others NULL (they learn it over comm, which stays usable). New processes pass comm NULL,
 * the id and their rank in [size, nranks). The id is consumed by the grow: a second use, an id of
 * another communicator or a wrong secret is refused with an error, and a rank that does not come
 * fails the grow on every rank at the bootstrap deadline. */
dcResult_t dcCommGrow(dcComm_t comm, int nranks, const dcUniqueId* growId, int rank, dcComm_t* newcomm,
                      const dcConfig_t* config);

/* Suspending. dcCommSuspend frees the memory comm can make again on demand (its scratch buffers,
 * its connections' shared-memory copy-through segments where no transfer uses them, and the
 * process's idle UCX bounce buffers and codec scratch) and keeps the rest (error-feedback
 * residuals, registrations, connections, the flat board). It is local (no message to other ranks) and refused with dcInvalidUsage while an
 * operation of comm is in flight or queued in the calling thread's open group. While suspended,
 * operations, split and shrink on comm fail with dcInvalidUsage; queries, registration, revoke,
 * finalize, destroy and abort work. dcCommResume makes it usable again; results are the same as
 * those of a communicator never suspended. */
dcResult_t dcCommSuspend(dcComm_t comm);
dcResult_t dcCommResume(dcComm_t comm);
/* Bytes of host memory comm holds: releasable (what dcCommSuspend frees: scratch and the
 * connections' copy-through segments; connections are shared with the communicators split or
 * shrunk from comm, and a segment one of them uses stays, so releasable is 0 while suspended
 * unless they do) and persistent (what stays: residuals, the flat board's segment). User buffers,
 * also registered ones, and process-wide pools are not counted. dcInvalidUsage while a nonblocking set-up of comm runs. */
typedef struct {
  uint64_t releasableBytes;
  uint64_t persistentBytes;
  int suspended;
} dcCommMemory_t;
dcResult_t dcCommMemory(dcComm_t comm, dcCommMemory_t* memory);
dcResult_t dcCommCount(dcComm_t comm, int* count);
dcResult_t dcCommRank(dcComm_t comm, int* rank);
dcResult_t dcCommGetAsyncError(dcComm_t comm, dcResult_t* asyncError);
dcResult_t dcCommGetCounters(dcComm_t comm, dcCounters_t* counters);

/* Writes the JSON of the plan this rank would run for the operation into buf (NUL-terminated).
 * *len is the buffer size on entry and the needed size (with NUL) on return. An all-reduce (with
 * sum) that DEEPCOMM_COMPRESS applies to shows its compressed plan. */
dcResult_t dcCommPlanJson(dcComm_t comm, dcCollective_t coll, size_t count, dcDataType_t datatype, int root, char* buf,
                          size_t* len);

/* Collectives and point-to-point. request == NULL: complete on return (or at dcGroupEnd inside a
 * group). request != NULL: start and return; complete with dcTest/dcWait (not inside a group). */
dcResult_t dcAllReduce(const void* sendbuf, void* recvbuf, size_t count, dcDataType_t datatype, dcRedOp_t op,
                       dcComm_t comm, dcRequest_t* request);
dcResult_t dcBroadcast(const void* sendbuf, void* recvbuf, size_t count, dcDataType_t datatype, int root, dcComm_t comm,
                       dcRequest_t* request);
dcResult_t dcReduce(const void* sendbuf, void* recvbuf, size_t count, dcDataType_t datatype, dcRedOp_t op, int root,
                    dcComm_t comm, dcRequest_t* request);
dcResult_t dcAllGather(const void* sendbuf, void* recvbuf, size_t sendcount, dcDataType_t datatype, dcComm_t comm,
                       dcRequest_t* request);
dcResult_t dcReduceScatter(const void* sendbuf, void* recvbuf, size_t recvcount, dcDataType_t datatype, dcRedOp_t op,
                           dcComm_t comm, dcRequest_t* request);
dcResult_t dcAlltoAll(const void* sendbuf, void* recvbuf, size_t count, dcDataType_t datatype, dcComm_t comm,
                      dcRequest_t* request);
dcResult_t dcGather(const void* sendbuf, void* recvbuf, size_t count, dcDataType_t datatype, int root, dcComm_t comm,
                    dcRequest_t* request);
dcResult_t dcScatter(const void* sendbuf, void* recvbuf, size_t count, dcDataType_t datatype, int root, dcComm_t comm,
                     dcRequest_t* request);
dcResult_t dcSend(const void* sendbuf, size_t count, dcDataType_t datatype, int peer, dcComm_t comm,
                  dcRequest_t* request);
dcResult_t dcRecv(void* recvbuf, size_t count, dcDataType_t datatype, int peer, dcComm_t comm, dcRequest_t* request);

dcResult_t dcGroupStart(void);
dcResult_t dcGroupEnd(void);
/* Ends the outermost group without running it: *seconds = the cost model's estimate of its
 * operations. Every rank must simulate the same group (it takes the operations' turns). */
dcResult_t dcGroupSimulateEnd(double* seconds);

/* *done = 1 when the operation completed; the request is then freed and the operation's result
 * returned. */
dcResult_t dcTest(dcRequest_t request, int* done);
/* Waits for completion (bounded by DEEPCOMM_TIMEOUT), frees the request, returns the result. */
dcResult_t dcWait(dcRequest_t request);

/* Compressed all-reduce (docs/compression.md). The codec is a spec string in the grammar of
 * docs/configuration.md ("topk:0.001,q8,huffman,ef", "q8,ef", "auto", ...): every rank passes the
 * same spec, else the call fails with dcInvalidUsage naming the mismatch. Datatypes dcFloat32,
 * dcFloat16, dcBfloat16; ops dcSum, dcAvg. All ranks receive bitwise-identical results. A
 * corrupted message fails the call (and the communicator) with dcRemoteError.
 *
 * Error feedback (the spec's "ef"): what compression left out of a call is added to the next
 * call's input, per element, in float32 (also for float16/bfloat16 buffers). That state belongs to
 * the buffer: a residual handle of count elements, used by every call on that buffer (and by no
 * other buffer). A spec with ef needs a residual; one without ef takes NULL. A residual must not
 * be reset or destroyed while an operation using it is pending (dcInvalidUsage). */
typedef struct dcResidual* dcResidual_t;
dcResult_t dcResidualCreate(dcResidual_t* residual, size_t count);
/* Zeroes the state (e.g. when the model is re-initialized). */
dcResult_t dcResidualReset(dcResidual_t residual);
dcResult_t dcResidualDestroy(dcResidual_t residual);

/* What one compressed all-reduce did on this rank. */
typedef struct {
  uint64_t rawBytes;        /* the elements of the messages this rank sent, at the datatype's size */
  uint64_t wireBytes;       /* the bytes of those messages (forwarded ones included) */
  double ratio;             /* rawBytes / wireBytes; 0 when this rank sent nothing */
  uint64_t messages;        /* messages this rank sent */
  double selectSeconds;     /* encoders: selection (top-k) or quantization, with error feedback */
  double encodeSeconds;     /* encoders: code tables and writing the messages */
  double decodeSeconds;     /* decoders: checking and unpacking messages */
  double accumulateSeconds; /* decoders: adding (or writing) decoded values into the output */
  double totalSeconds;      /* from the start of the operation on the progress engine to its end */
  char algorithm[24];       /* the plan that ran: "twophase", "sparsegather" (or "local": 1 rank) */
} dcCompressStats_t;

/* stats (may be NULL) is written when the operation completes: before the call returns, or, with
 * a request, before dcWait/dcTest reports it complete (it must stay valid until then). */
dcResult_t dcCompressedAllReduce(const void* sendbuf, void* recvbuf, size_t count, dcDataType_t datatype, dcRedOp_t op,
                                 const char* spec, dcResidual_t residual, dcComm_t comm, dcRequest_t* request,
                                 dcCompressStats_t* stats);
/* Drops the error feedback the NCCL path (DEEPCOMM_COMPRESS) keeps for comm's buffers. */
dcResult_t dcCommResetCompression(dcComm_t comm);

/* op = sum of (scalar * input) over ranks; *scalar is read before the call returns. */
dcResult_t dcRedOpCreatePreMulSum(dcRedOp_t* op, const void* scalar, dcDataType_t datatype, dcComm_t comm);
dcResult_t dcRedOpDestroy(dcRedOp_t op, dcComm_t comm);

/* Registers a buffer with comm's transports (RDMA transports pin it; shared memory and TCP move
 * any host buffer without staging, reading peers' buffers in place by cross-memory attach). The
 * handle is released by dcCommDeregister or with the communicator. */
dcResult_t dcCommRegister(dcComm_t comm, void* buf, size_t size, void** handle);
dcResult_t dcCommDeregister(dcComm_t comm, void* handle);
/* A window: memory every rank registers, for collectives and one-sided operations (flags: 0, or
 * 1 for symmetric use). Registration is collective: every rank registers its window (sizes may
 * differ) in the same order with the communicator's other collectives, and learns every rank's
 * size; a rank's handle then names that window on every rank. */
typedef struct dcWindow* dcWindow_t;
dcResult_t dcCommWindowRegister(dcComm_t comm, void* buf, size_t size, dcWindow_t* win, int flags);
dcResult_t dcCommWindowDeregister(dcComm_t comm, dcWindow_t win);

/* One-sided operations on host memory. dcPutSignal writes count elements of localbuf into peer's
 * window win at byteOffset, then counts one signal (sigIdx, ctx) from this rank at the peer; it
 * returns once localbuf may be reused. The peer takes no part: it sees the data once
 * dcWaitSignal took the signal. Puts and signals to one peer land in the order they were issued.
 * sigIdx is in [0, DC_SIGNALS_PER_CONTEXT), ctx in [0, the config's rmaContexts). Bad arguments
 * (a peer out of range, a range past the end of the peer's window, a foreign window) are refused
 * before anything is sent. Inside a group they run at its outermost end, the waits last. */
#define DC_SIGNALS_PER_CONTEXT 16
dcResult_t dcPutSignal(const void* localbuf, size_t count, dcDataType_t datatype, int peer, dcWindow_t win,
                       size_t byteOffset, int sigIdx, int ctx, dcComm_t comm);
/* A signal without data. */
dcResult_t dcSignal(int peer, int sigIdx, int ctx, dcComm_t comm);
/* Waits until opCount signals (beyond those taken before) arrived from peer on (sigIdx, ctx), for
 * every entry, and takes them; bounded by DEEPCOMM_TIMEOUT, and ends with the communicator's
 * error when it fails meanwhile (a peer dies, an abort). */
typedef struct {
  int opCount;
  int peer;
  int sigIdx;
  int ctx;
} dcSignalWait_t;
dcResult_t dcWaitSignal(int nWaits, const dcSignalWait_t* waits, dcComm_t comm);
/* Where this process can load and store peer's window win at byteOffset: this rank's own buffer,
 * or a peer's window mapped here (a window in dcMemAlloc memory of a rank on this host that is
 * reached over shared memory; a put to such a window is a store by the origin). dcInvalidUsage
 * where the peer's window is not mapped here. */
dcResult_t dcWindowPeerPointer(dcComm_t comm, dcWindow_t win, size_t byteOffset, int peer, void** ptr);
/* The ranks [*first, *first + *size) whose windows in dcMemAlloc memory this rank can reach by
 * load and store (NCCL's LSA team): this host's ranks when they are consecutive, every host has as
 * many and they are connected over shared memory; otherwise the rank alone. */
dcResult_t dcCommLoadStoreTeam(dcComm_t comm, int* first, int* size);

/* Host memory that the shared-memory transport can hand to peers without a copy (memfd-backed). */
dcResult_t dcMemAlloc(void** ptr, size_t size);
dcResult_t dcMemFree(void* ptr);

#ifdef __cplusplus
}
#endif

#endif /* DEEPCOMM_DEEPCOMM_H_ */
