/* The device plugin's C ABI: what a library such as libdeepcomm-cuda.so exports so that DeepComm can
 * open it with dlopen (plugin_loader.h) and drive a device queue through it (plugin_queue.h). C, so
 * that the plugin may be built by another compiler (nvcc) and another version of DeepComm can check
 * it before calling anything. No CUDA type appears here: a stream is a 64-bit handle.
 *
 * The library exports one function, DEEPCOMM_DEVICE_PLUGIN_ENTRY ("deepcommDevicePlugin"), that
 * returns a pointer to a static table. The loader refuses the table unless abi_version equals the
 * version it was built with and struct_size is at least the size of that version's table (a newer
 * plugin may append members). Version 1 ran the element steps (copy, reduce, pre-multiply,
 * finalize of an average); version 2 adds the stream bridge's functions (stream_queue.h), which a
 * plugin without streams leaves NULL; version 3 graphs; version 4 the GPU encoder and decoder of
 * compressed messages (compression/gpu); version 5 top-k selection in the encoder (the encode
 * descriptor's last three members, a third result word), sparse messages in the decoder and a
 * decode's length read when the stream runs it (message_bytes_at); version 6 an element step on a
 * stream (enqueue_step: the finalize of a compressed average).
 *
 * The contract is device_queue.h's, function by function:
 *  - create/destroy: any thread, once per queue; destroy only after every accepted step completed.
 *  - post: one thread at a time per queue. Never waits for other steps. Returns 1 when the step ended
 *    inside the call (its dcResult_t in *result, and it never completes later), 0 when it was
 *    accepted (exactly one completion with its tag follows, through poll). Buffers the step names
 *    stay the caller's and untouched until then; the plugin copies the descriptor.
 *  - poll: one thread at a time per queue; never blocks; writes up to max completions, returns how
 *    many. A completion's message stays valid until the next poll of that queue.
 *  - completion_fd: readable while completions wait for poll (or -1: the caller polls); poll clears
 *    its readiness before it collects completions.
 *  - Steps on one stream (handle != 0) run and complete in post order.
 *  - The stream functions (version 2) are stream_queue.h's, taking the queue from create: any
 *    thread; enqueue_* run when the stream (a cudaStream_t as a 64-bit handle; 0 the legacy default
 *    stream) reaches them. Memory from alloc_device is what ncclMemAlloc returns. A call that fails
 *    returns a dcResult_t (or NULL) and leaves its message for last_error on the same thread.
 */
#ifndef DEEPCOMM_DEVICE_PLUGIN_ABI_H
#define DEEPCOMM_DEVICE_PLUGIN_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DEEPCOMM_DEVICE_PLUGIN_ABI_VERSION 6
#define DEEPCOMM_DEVICE_PLUGIN_ENTRY "deepcommDevicePlugin"
#define DEEPCOMM_DEVICE_PLUGIN_EXPORT __attribute__((visibility("default")))

/* Step kinds, numbered as dc::device::StepKind. */
enum {
  dcDeviceStepCopy = 0,        /* dst = src, count bytes */
  dcDeviceStepReduce = 1,      /* dst = src op src2, count elements */
  dcDeviceStepPremultiply = 2, /* dst = src * scalar */
  dcDeviceStepFinalizeAvg = 3  /* dst = dst / divisor */
};

/* Set in flags when every element step posted without a stream ends inside post. */
#define DEEPCOMM_DEVICE_PLUGIN_ENDS_ELEMENT_STEPS_AT_POST 1u

typedef struct {
  uint32_t kind;    /* dcDeviceStep* */
  int32_t datatype; /* dcDataType_t (ncclDataType_t numbering) */
  int32_t op;       /* dcRedOp_t, a built-in op */
  int32_t divisor;  /* FinalizeAvg */
  void* dst;
  const void* src;
  const void* src2;
  uint64_t count;
  uint8_t scalar[8]; /* Premultiply: the factor, in the datatype */
} dcDeviceStep_t;

/* dcDeviceEncode_t's selection: every element, or a top-k (version 5). */
#define DEEPCOMM_DEVICE_SELECT_DENSE 0u
#define DEEPCOMM_DEVICE_SELECT_TOPK_EXACT 1u
#define DEEPCOMM_DEVICE_SELECT_TOPK_SAMPLED 2u
/* dcDeviceEncode_t's values: 8-bit with a scale per block, or float32 as they are (top-k only). */
#define DEEPCOMM_DEVICE_VALUES_Q8 0u
#define DEEPCOMM_DEVICE_VALUES_FLOAT32 1u

/* An encode (version 4: dense q8; version 5: top-k). Every pointer is device (or managed) memory,
 * but result, which may also be pinned host memory. With the members after result zeroed it is a
 * dense q8 encode, as in version 4. */
typedef struct {
  int32_t datatype;    /* dcFloat32, dcFloat16 or dcBfloat16 */
  uint32_t stochastic; /* 1: stochastic rounding, 0: to nearest (q8) */
  uint32_t block;      /* elements per scale (q8) */
  uint32_t chunk_log2; /* elements per chunk, as a power of two */
  uint32_t huffman;    /* 1: Huffman-coded values (and gaps) */
  float beta;          /* residual decay, with a residual */
  const void* input;
  float* residual; /* count floats, updated; NULL without error feedback */
  uint64_t count;
  uint64_t seed;    /* keys stochastic rounding */
  uint8_t* message; /* at least the worst-case message bytes (compression/form/message_form.h) */
  void* workspace;  /* encode_workspace_bytes of it, 256-byte aligned */
  /* The stream writes { message bytes (0: it failed), 1 when an element was not finite, elements
   * sent (version 5) }. */
  uint32_t* result;
  uint32_t selection; /* DEEPCOMM_DEVICE_SELECT_* */
  uint32_t values;    /* DEEPCOMM_DEVICE_VALUES_* */
  uint64_t kept;      /* top-k: the k, in [1, count] (compression/form/spec.h's kept_target) */
} dcDeviceEncode_t;

/* A decode-and-accumulate of a message (version 4: dense; version 5: every message): dst (+)= its
 * values. Every pointer is device (or managed) memory, but error, which may also be pinned host
 * memory. */
typedef struct {
  int32_t datatype;       /* dst's: dcFloat32, dcFloat16 or dcBfloat16 */
  uint32_t overwrite;     /* 1: dst = the values, 0: dst += the values */
  const uint8_t* message; /* message_bytes of it, as received */
  uint64_t message_bytes;
  void* dst;
  uint64_t count;  /* dst's elements */
  void* workspace; /* decode_workspace_bytes of it, 256-byte aligned */
  /* The stream writes why the message was refused, or zeros when dst got its values:
   * { fault | table fault << 8 | chunk << 32, a, b } (compression/gpu/decode_fault.h). */
  uint64_t* error;
  /* Version 5. NULL, or where the stream reads the message's length when it reaches the decode (a
   * length learnt only then, such as a received message's; pinned or device memory): message_bytes
   * is then the most it may be, and a longer one is taken as message_bytes. */
  const uint64_t* message_bytes_at;
} dcDeviceDecode_t;

typedef struct {
  uint64_t tag;        /* the tag given to post */
  int32_t result;      /* dcResult_t */
  const char* message; /* NULL on success */
} dcDeviceCompletion_t;

typedef struct {
  uint32_t abi_version; /* DEEPCOMM_DEVICE_PLUGIN_ABI_VERSION */
  uint32_t struct_size; /* sizeof(dcDevicePlugin_t) as the plugin was built */
  const char* name;     /* e.g. "cuda" */
  uint32_t flags;       /* DEEPCOMM_DEVICE_PLUGIN_* */
  /* 0 and *queue on success; else a dcResult_t with a message written into error. */
  int32_t (*create)(void** queue, char* error, size_t error_size);
  void (*destroy)(void* queue);
  int32_t (*post)(void* queue, const dcDeviceStep_t* step, uint64_t stream, uint64_t tag, int32_t* result);
  int32_t (*poll)(void* queue, dcDeviceCompletion_t* out, int32_t max);
  int32_t (*completion_fd)(void* queue);
  /* Version 2: the stream bridge (all NULL, or all set). */
  void* (*alloc_pinned)(void* queue, uint64_t bytes);
  void (*free_pinned)(void* queue, void* pointer);
  void* (*alloc_device)(void* queue, uint64_t bytes);
  int32_t (*free_device)(void* queue, void* pointer);
  int32_t (*is_device_memory)(void* queue, const void* pointer); /* 1: device (or managed) memory */
  int32_t (*enqueue_copy)(void* queue, uint64_t stream, void* dst, const void* src, uint64_t bytes);
  /* *word = value, then 8 bytes written to the eventfd wake_fd. */
  int32_t (*enqueue_doorbell)(void* queue, uint64_t stream, uint64_t* word, uint64_t value, int32_t wake_fd);
  /* The stream waits until *word >= value. */
  int32_t (*enqueue_gate)(void* queue, uint64_t stream, const uint64_t* word, uint64_t value);
  void (*open_gate)(void* queue, uint64_t* word, uint64_t value); /* host side: *word = value */
  int32_t (*stream_capturing)(void* queue, uint64_t stream);      /* 1 while it captures a graph */
  const char* (*last_error)(void* queue);                         /* this thread's last failure */
  /* Version 3: graphs (set whenever the stream functions are). The stream waits until
   * *word == value, then stores reset into it. */
  int32_t (*enqueue_gate_reset)(void* queue, uint64_t stream, uint64_t* word, uint64_t value, uint64_t reset);
  /* Only while stream captures: release(arg) is called once the graph being captured and every
   * instance of it are destroyed and no replay of it runs (cudaUserObject). */
  int32_t (*retain_until_graph_destroyed)(void* queue, uint64_t stream, void (*release)(void*), void* arg);
  /* Version 4: the GPU codec (set whenever the stream functions are). The workspace sizes are 0
   * when the descriptor is refused (last_error says why). The stream runs an encode or a decode
   * when it reaches it: an encode's message has the CPU encoder's bytes, a decode adds the CPU
   * decoder's values or refuses the message the CPU decoder refuses. */
  uint64_t (*encode_workspace_bytes)(void* queue, const dcDeviceEncode_t* encode);
  int32_t (*enqueue_encode)(void* queue, uint64_t stream, const dcDeviceEncode_t* encode);
  uint64_t (*decode_workspace_bytes)(void* queue, const dcDeviceDecode_t* decode);
  int32_t (*enqueue_decode)(void* queue, uint64_t stream, const dcDeviceDecode_t* decode);
  /* Version 6 (set whenever the stream functions are): an element step (reduce, pre-multiply,
   * finalize of an average; not a copy) that the stream runs when it reaches it. A step the plugin
   * refuses (unknown datatype or op, null or misaligned pointers, a divisor below 1) enqueues
   * nothing. */
  int32_t (*enqueue_step)(void* queue, uint64_t stream, const dcDeviceStep_t* step);
} dcDevicePlugin_t;

typedef const dcDevicePlugin_t* (*dcDevicePluginEntry_t)(void);

#ifdef __cplusplus
}
#endif

#endif /* DEEPCOMM_DEVICE_PLUGIN_ABI_H */
