// Collectives, point-to-point and groups of the NCCL ABI. On device memory a call is enqueued on
// its stream through the communicator's stream bridge (device_runtime.h) and returns at once. On
// host memory the stream argument is accepted and ignored: a blocking call has completed when it
// returns, as the native API does, after the communicator's earlier device calls ran.
#include "src/core/issue.h"
#include "src/nccl/api.h"
#include "src/nccl/device_runtime.h"

using dc::nccl::device_bridge;
using dc::nccl::guarded;
using dc::nccl::on_device;
using dc::nccl::stream_of;
using dc::nccl::to_dc;
using dc::nccl::to_nccl;
using dc::nccl::wait_for_device_calls;

DEEPCOMM_NCCL_API(ncclResult_t, ncclAllReduce, const void* sendbuff, void* recvbuff, size_t count,
                  ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  return guarded([&] {
    if (on_device({sendbuff, recvbuff}))
      return to_nccl(
          device_bridge(comm).all_reduce(sendbuff, recvbuff, count, to_dc(datatype), to_dc(op), stream_of(stream)));
    wait_for_device_calls(comm);
    return to_nccl(dcAllReduce(sendbuff, recvbuff, count, to_dc(datatype), to_dc(op), to_dc(comm), nullptr));
  });
}

DEEPCOMM_NCCL_API(ncclResult_t, ncclBroadcast, const void* sendbuff, void* recvbuff, size_t count,
                  ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream) {
  return guarded([&] {
    if (on_device({sendbuff, recvbuff}))
      return to_nccl(
          device_bridge(comm).broadcast(sendbuff, recvbuff, count, to_dc(datatype), root, stream_of(stream)));
    wait_for_device_calls(comm);
    return to_nccl(dcBroadcast(sendbuff, recvbuff, count, to_dc(datatype), root, to_dc(comm), nullptr));
  });
}

// The older in-place form of ncclBroadcast.
DEEPCOMM_NCCL_API(ncclResult_t, ncclBcast, void* buff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm,
                  cudaStream_t stream) {
  return guarded([&] {
    if (on_device({buff}))
      return to_nccl(device_bridge(comm).broadcast(buff, buff, count, to_dc(datatype), root, stream_of(stream)));
    wait_for_device_calls(comm);
    return to_nccl(dcBroadcast(buff, buff, count, to_dc(datatype), root, to_dc(comm), nullptr));
  });
}

DEEPCOMM_NCCL_API(ncclResult_t, ncclReduce, const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                  ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream) {
  return guarded([&] {
    if (on_device({sendbuff, recvbuff}))
      return to_nccl(
          device_bridge(comm).reduce(sendbuff, recvbuff, count, to_dc(datatype), to_dc(op), root, stream_of(stream)));
    wait_for_device_calls(comm);
    return to_nccl(dcReduce(sendbuff, recvbuff, count, to_dc(datatype), to_dc(op), root, to_dc(comm), nullptr));
  });
}

DEEPCOMM_NCCL_API(ncclResult_t, ncclAllGather, const void* sendbuff, void* recvbuff, size_t sendcount,
                  ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream) {
  return guarded([&] {
    if (on_device({sendbuff, recvbuff}))
      return to_nccl(device_bridge(comm).all_gather(sendbuff, recvbuff, sendcount, to_dc(datatype), stream_of(stream)));
    wait_for_device_calls(comm);
    return to_nccl(dcAllGather(sendbuff, recvbuff, sendcount, to_dc(datatype), to_dc(comm), nullptr));
  });
}

DEEPCOMM_NCCL_API(ncclResult_t, ncclReduceScatter, const void* sendbuff, void* recvbuff, size_t recvcount,
                  ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  return guarded([&] {
    if (on_device({sendbuff, recvbuff}))
      return to_nccl(device_bridge(comm).reduce_scatter(sendbuff, recvbuff, recvcount, to_dc(datatype), to_dc(op),
                                                        stream_of(stream)));
    wait_for_device_calls(comm);
    return to_nccl(dcReduceScatter(sendbuff, recvbuff, recvcount, to_dc(datatype), to_dc(op), to_dc(comm), nullptr));
  });
}

DEEPCOMM_NCCL_API(ncclResult_t, ncclAlltoAll, const void* sendbuff, void* recvbuff, size_t count,
                  ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream) {
  return guarded([&] {
    if (on_device({sendbuff, recvbuff}))
      return to_nccl(device_bridge(comm).all_to_all(sendbuff, recvbuff, count, to_dc(datatype), stream_of(stream)));
    wait_for_device_calls(comm);
    return to_nccl(dcAlltoAll(sendbuff, recvbuff, count, to_dc(datatype), to_dc(comm), nullptr));
  });
}

DEEPCOMM_NCCL_API(ncclResult_t, ncclGather, const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                  int root, ncclComm_t comm, cudaStream_t stream) {
  return guarded([&] {
    if (on_device({sendbuff, recvbuff}))
      return to_nccl(device_bridge(comm).gather(sendbuff, recvbuff, count, to_dc(datatype), root, stream_of(stream)));
    wait_for_device_calls(comm);
    return to_nccl(dcGather(sendbuff, recvbuff, count, to_dc(datatype), root, to_dc(comm), nullptr));
  });
}

DEEPCOMM_NCCL_API(ncclResult_t, ncclScatter, const void* sendbuff, void* recvbuff, size_t count,
                  ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream) {
  return guarded([&] {
    if (on_device({sendbuff, recvbuff}))
      return to_nccl(device_bridge(comm).scatter(sendbuff, recvbuff, count, to_dc(datatype), root, stream_of(stream)));
    wait_for_device_calls(comm);
    return to_nccl(dcScatter(sendbuff, recvbuff, count, to_dc(datatype), root, to_dc(comm), nullptr));
  });
}

DEEPCOMM_NCCL_API(ncclResult_t, ncclSend, const void* sendbuff, size_t count, ncclDataType_t datatype, int peer,
                  ncclComm_t comm, cudaStream_t stream) {
  return guarded([&] {
    if (on_device({sendbuff}))
      return to_nccl(device_bridge(comm).send(sendbuff, count, to_dc(datatype), peer, stream_of(stream)));
    wait_for_device_calls(comm);
    return to_nccl(dcSend(sendbuff, count, to_dc(datatype), peer, to_dc(comm), nullptr));
  });
}

DEEPCOMM_NCCL_API(ncclResult_t, ncclRecv, void* recvbuff, size_t count, ncclDataType_t datatype, int peer,
                  ncclComm_t comm, cudaStream_t stream) {
  return guarded([&] {
    if (on_device({recvbuff}))
      return to_nccl(device_bridge(comm).recv(recvbuff, count, to_dc(datatype), peer, stream_of(stream)));
    wait_for_device_calls(comm);
    return to_nccl(dcRecv(recvbuff, count, to_dc(datatype), peer, to_dc(comm), nullptr));
  });
}

DEEPCOMM_NCCL_API(ncclResult_t, ncclGroupStart, void) {
  return guarded([] { return to_nccl(dcGroupStart()); });
}

// The outermost end also enqueues the group's device calls, one operation per communicator.
DEEPCOMM_NCCL_API(ncclResult_t, ncclGroupEnd, void) {
  return guarded([] {
    const dcResult_t host = dcGroupEnd();
    const dcResult_t device = dc::group_open() ? dcSuccess : dc::nccl::end_device_group(false);
    return to_nccl(host != dcSuccess ? host : device);
  });
}

// Ends the group without running it; estimatedTime is the cost model's estimate in microseconds.
// simInfo is read as far as its size says (NCCL's size- and version-tolerant rule).
DEEPCOMM_NCCL_API(ncclResult_t, ncclGroupSimulateEnd, ncclSimInfo_t* simInfo) {
  return guarded([&] {
    dc::nccl::require_output(simInfo, "ncclGroupSimulateEnd", "simInfo");
    if (simInfo->magic != 0x74685283u)
      dc::fail(dcInvalidArgument, "DeepComm: ncclGroupSimulateEnd: simInfo was not set from NCCL_SIM_INFO_INITIALIZER");
    if (simInfo->size < offsetof(ncclSimInfo_t, estimatedTime) + sizeof(float))
      dc::fail(dcInvalidArgument, "DeepComm: ncclGroupSimulateEnd: simInfo is too small");
    double seconds = 0;
    const dcResult_t result = dcGroupSimulateEnd(&seconds);
    dc::nccl::end_device_group(true);  // nothing runs: the group's device calls are dropped
    if (result == dcSuccess) simInfo->estimatedTime = static_cast<float>(seconds * 1e6);
    return to_nccl(result);
  });
}
