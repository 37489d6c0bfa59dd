// The `deepcomm` torch.distributed backend: a c10d::Backend on one DeepComm communicator per
// process group, for CPU tensors. Every call checks its tensors in the calling thread (bad input
// raises at once), stages them when a layout needs it, starts DeepComm requests in issue order
// (one lock per group, whichever thread calls) and hands them to the group's CompletionQueue.
// Like ProcessGroupGloo, calls must be made in the same order on every rank of a group.
#pragma once

#include "completion_queue.h"
#include "residual.h"

#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include <memory>
#include <mutex>

namespace deepcomm_torch {

class DeepCommBackend : public c10d::Backend {
 public:
  // Joins the group's communicator: rank 0 makes the unique id and publishes it through store.
  DeepCommBackend(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size, std::chrono::milliseconds timeout);
  ~DeepCommBackend() override;

  const std::string getBackendName() const override { return "deepcomm"; }
  // Operations started on this group other than send and recv, from 0: the same on every rank of
  // a group whose ranks made the same calls (torch's desynchronization checks, object collectives).
  uint64_t getSequenceNumberForGroup() override;

  c10::intrusive_ptr<c10d::Work> broadcast(std::vector<at::Tensor>& tensors,
                                           const c10d::BroadcastOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allreduce(std::vector<at::Tensor>& tensors,
                                           const c10d::AllreduceOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allreduce_coalesced(std::vector<at::Tensor>& tensors,
                                                     const c10d::AllreduceCoalescedOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce(std::vector<at::Tensor>& tensors, const c10d::ReduceOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allgather(std::vector<std::vector<at::Tensor>>& outputs,
                                           std::vector<at::Tensor>& inputs,
                                           const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> _allgather_base(at::Tensor& output, at::Tensor& input,
                                                 const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allgather_coalesced(std::vector<std::vector<at::Tensor>>& outputs,
                                                     std::vector<at::Tensor>& inputs,
                                                     const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allgather_into_tensor_coalesced(std::vector<at::Tensor>& outputs,
                                                                 std::vector<at::Tensor>& inputs,
                                                                 const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> gather(std::vector<std::vector<at::Tensor>>& outputs, std::vector<at::Tensor>& inputs,
                                        const c10d::GatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> scatter(std::vector<at::Tensor>& outputs, std::vector<std::vector<at::Tensor>>& inputs,
                                         const c10d::ScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce_scatter(std::vector<at::Tensor>& outputs,
                                                std::vector<std::vector<at::Tensor>>& inputs,
                                                const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> _reduce_scatter_base(at::Tensor& output, at::Tensor& input,
                                                      const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce_scatter_tensor_coalesced(std::vector<at::Tensor>& outputs,
                                                                 std::vector<at::Tensor>& inputs,
                                                                 const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> alltoall_base(at::Tensor& output, at::Tensor& input,
                                               std::vector<int64_t>& output_splits, std::vector<int64_t>& input_splits,
                                               const c10d::AllToAllOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> alltoall(std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
                                          const c10d::AllToAllOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> send(std::vector<at::Tensor>& tensors, int dst, int tag) override;
  c10::intrusive_ptr<c10d::Work> recv(std::vector<at::Tensor>& tensors, int src, int tag) override;
  c10::intrusive_ptr<c10d::Work> barrier(const c10d::BarrierOptions& opts) override;

  // DeepComm's compressed all-reduce of t in place (docs/compression.md), the average or the sum,
  // in this group's issue order: deepcomm.torch.compressed_allreduce_hook's call. spec is in the
  // grammar of docs/configuration.md; residual is t's error feedback (null when spec has no ef).
  // The work holds residual and stats until it completed; stats is written by then.
  c10::intrusive_ptr<c10d::Work> compressed_allreduce(const at::Tensor& t, const std::string& spec,
                                                      std::shared_ptr<Residual> residual, bool average,
                                                      std::shared_ptr<dcCompressStats_t> stats);

 private:
  // Starts an operation: start() makes the DeepComm calls through the Starter, in this group's
  // issue order, and the work is queued for completion.
  class Starter;
  c10::intrusive_ptr<DeepCommWork> start(c10d::OpType type, const char* name, std::vector<at::Tensor> outputs,
                                         const std::function<void(Starter&)>& calls);
  // An all-reduce (or reduce to root >= 0) of one contiguous tensor in place.
  void reduce_call(Starter& s, const at::Tensor& buffer, const c10d::ReduceOp& op, int root);
  void reduce_scatter_call(Starter& s, const at::Tensor& input, const at::Tensor& output, const c10d::ReduceOp& op);
  // Rank p's sends[p] become its receives[p] on every p: all-to-all by point-to-point requests.
  c10::intrusive_ptr<c10d::Work> exchange(const char* name, std::vector<at::Tensor> outputs,
                                          std::vector<at::Tensor> sends, std::vector<at::Tensor> receives);

  dcComm_t comm_ = nullptr;
  std::unique_ptr<CompletionQueue> queue_;
  std::mutex issue_mutex_;
  uint64_t sequence_number_ = 0;  // under issue_mutex_
};

// The id every rank of the group joins with: rank 0 makes it and sets it in store, the others get
// it (store->get waits within the store's timeout). Each creation on the same store gets its own key.
dcUniqueId exchange_unique_id(const c10::intrusive_ptr<c10d::Store>& store, int rank);

}  // namespace deepcomm_torch
