#include "backend.h"

#include "dc_types.h"
#include "gil.h"

#include <c10/util/Exception.h>

namespace deepcomm_torch {

using c10d::OpType;
using Work = c10::intrusive_ptr<c10d::Work>;

// Makes one operation's DeepComm calls into its work: each call starts a request; the first that
// fails to start is the work's error, and the calls after it are not made. Stages tensors whose
// layout DeepComm cannot use directly and collects the copies back into the outputs.
class DeepCommBackend::Starter {
 public:
  Starter(DeepCommWork& work, dcComm_t comm) : work_(work), comm_(comm) {}
  ~Starter() {
    if (!copy_backs_.empty())
      work_.on_success = [copies = std::move(copy_backs_)] {
        for (const auto& copy : copies) copy();
      };
    if (!cleanups_.empty())
      work_.cleanup = [cleanups = std::move(cleanups_)] {
        for (const auto& cleanup : cleanups) cleanup();
      };
  }

  template <typename Call>  // dcResult_t(dcRequest_t*)
  void call(const char* what, Call call) {
    if (work_.start_error) return;
    dcRequest_t request = nullptr;
    dcResult_t result = call(&request);
    if (result == dcSuccess) work_.requests.push_back(request);
    else fail(std::string(what) + ": " + dcGetErrorString(result) + ": " + dcGetLastError());
  }
  void fail(const std::string& message) {
    if (work_.start_error) return;
    try {
      C10_THROW_ERROR(DistBackendError, "deepcomm: " + work_.name + ": " + message);
    } catch (...) {
      work_.start_error = std::current_exception();
    }
  }
  // A tensor read by the call (contiguous; a copy if it was not).
  at::Tensor in(const at::Tensor& t) { return keep(t.contiguous()); }
  // A tensor written by the call: t, or a contiguous stand-in copied into t once the call succeeded.
  at::Tensor out(const at::Tensor& t) { return stage(t, false); }
  // A tensor read and written in place.
  at::Tensor in_out(const at::Tensor& t) { return stage(t, true); }
  // A contiguous buffer of `parts` copies of t's elements; each part is copied into parts_out[i].
  at::Tensor gathered(const at::Tensor& like, const std::vector<at::Tensor>& parts_out) {
    at::Tensor flat = keep(at::empty({static_cast<int64_t>(parts_out.size()) * like.numel()}, like.options()));
    copy_backs_.push_back([flat, parts_out, numel = like.numel()] {
      for (size_t i = 0; i < parts_out.size(); ++i)
        parts_out[i].copy_(flat.narrow(0, static_cast<int64_t>(i) * numel, numel).view(parts_out[i].sizes()));
    });
    return flat;
  }
  // The parts laid end to end in one contiguous buffer.
  at::Tensor concatenated(const std::vector<at::Tensor>& parts) {
    std::vector<at::Tensor> flat_parts;
    for (const auto& p : parts) flat_parts.push_back(p.reshape({-1}));
    return keep(at::cat(flat_parts));
  }
  // Runs once the requests completed, error or not.
  void on_cleanup(std::function<void()> f) { cleanups_.push_back(std::move(f)); }
  dcComm_t comm() const { return comm_; }

 private:
  at::Tensor keep(at::Tensor t) {
    work_.keep_alive.push_back(t);
    return t;
  }
  at::Tensor stage(const at::Tensor& t, bool copy_in) {
    if (t.is_contiguous()) return keep(t);
    at::Tensor buffer = keep(copy_in ? t.contiguous() : at::empty(t.sizes(), t.options()));
    copy_backs_.push_back([t, buffer]() mutable { t.copy_(buffer); });
    return buffer;
  }

  DeepCommWork& work_;
  dcComm_t comm_;
  std::vector<std::function<void()>> copy_backs_;
  std::vector<std::function<void()>> cleanups_;
};

namespace {

const at::Tensor& single(const std::vector<at::Tensor>& tensors, const char* op) {
  TORCH_CHECK(tensors.size() == 1, "deepcomm: ", op, " takes one tensor per call, got ", tensors.size());
  check_cpu(tensors[0], op);
  return tensors[0];
}

void check_same(const at::Tensor& t, const at::Tensor& like, const char* op, const char* what) {
  check_cpu(t, op);
  TORCH_CHECK(t.scalar_type() == like.scalar_type(), "deepcomm: ", op, ": ", what, " has dtype ", t.scalar_type(),
              ", the input ", like.scalar_type());
  TORCH_CHECK(t.numel() == like.numel(), "deepcomm: ", op, ": ", what, " has ", t.numel(), " elements, the input ",
              like.numel());
}

void check_parts(const std::vector<at::Tensor>& parts, const at::Tensor& like, int size, const char* op,
                 const char* what) {
  TORCH_CHECK(static_cast<int>(parts.size()) == size, "deepcomm: ", op, ": ", what, " has ", parts.size(),
              " tensors, the group ", size, " ranks");
  for (const auto& p : parts) check_same(p, like, op, what);
}

// gather's outputs and scatter's inputs: one list of size parts like `like` on the root, none
// elsewhere. Returns the root's list (empty on the others).
std::vector<at::Tensor> root_list(const std::vector<std::vector<at::Tensor>>& lists, const at::Tensor& like, int size,
                                  bool is_root, const char* op, const char* what) {
  if (!is_root) {
    TORCH_CHECK(lists.empty() || (lists.size() == 1 && lists[0].empty()), "deepcomm: ", op, ": only the root takes an ",
                what);
    return {};
  }
  TORCH_CHECK(lists.size() == 1, "deepcomm: ", op, ": the root takes one ", what, ", got ", lists.size());
  check_parts(lists[0], like, size, op, (std::string("the ") + what).c_str());
  return lists[0];
}

void check_flat(const at::Tensor& big, const at::Tensor& small, int size, const char* op) {
  check_cpu(big, op);
  check_cpu(small, op);
  TORCH_CHECK(big.scalar_type() == small.scalar_type(), "deepcomm: ", op, ": dtypes differ (", big.scalar_type(), ", ",
              small.scalar_type(), ")");
  TORCH_CHECK(big.numel() == small.numel() * size, "deepcomm: ", op, ": the larger tensor must have ", size,
              " times the elements of the smaller, got ", big.numel(), " and ", small.numel());
}

}  // namespace

DeepCommBackend::DeepCommBackend(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                                 std::chrono::milliseconds timeout)
    : c10d::Backend(rank, size) {
  dcUniqueId id = exchange_unique_id(store, rank);
  dcConfig_t config = DC_CONFIG_INIT;
  config.commName = "torch";
  dcResult_t result = dcCommInitRank(&comm_, size, &id, rank, &config);
  if (result != dcSuccess)
    C10_THROW_ERROR(DistBackendError, std::string("deepcomm: joining the group's communicator: ") +
                                          dcGetErrorString(result) + ": " + dcGetLastError());
  queue_ = std::make_unique<CompletionQueue>(comm_, timeout);
}

DeepCommBackend::~DeepCommBackend() {
  GilReleasedIfHeld gil_released;  // the completion thread may need it to finish what is pending
  const bool revoked = queue_->revoked();
  queue_.reset();  // completes what is pending
  dcResult_t state = dcSuccess;
  dcCommGetAsyncError(comm_, &state);
  if (revoked || state != dcSuccess)
    dcCommAbort(comm_);  // a failed communicator: do not wait for peers that may be gone
  else dcCommDestroy(comm_);
}

uint64_t DeepCommBackend::getSequenceNumberForGroup() {
  std::lock_guard<std::mutex> lock(issue_mutex_);
  return sequence_number_;
}

c10::intrusive_ptr<DeepCommWork> DeepCommBackend::start(OpType type, const char* name, std::vector<at::Tensor> outputs,
                                                        const std::function<void(Starter&)>& calls) {
  auto work = c10::make_intrusive<DeepCommWork>(getRank(), type, name, std::move(outputs));
  std::lock_guard<std::mutex> lock(issue_mutex_);
  if (type != OpType::SEND && type != OpType::RECV) ++sequence_number_;
  queue_->begin(work);
  {
    Starter starter(*work, comm_);
    try {
      calls(starter);
    } catch (...) {  // a check inside calls(): the calls made so far still complete
      work->start_error = std::current_exception();
    }
  }
  queue_->started();
  return work;
}

void DeepCommBackend::reduce_call(Starter& s, const at::Tensor& buffer, const c10d::ReduceOp& op, int root) {
  Reduction r = reduction_of(buffer, op);
  if (r.premul) {
    try {
      make_premul_sum(r, s.comm());
    } catch (const std::exception& e) {
      s.fail(e.what());
      return;
    }
    s.on_cleanup([op = r.op, comm = s.comm()] { dcRedOpDestroy(op, comm); });
  }
  void* data = buffer.data_ptr();
  if (root < 0)
    s.call("dcAllReduce", [&](dcRequest_t* q) { return dcAllReduce(data, data, r.count, r.type, r.op, s.comm(), q); });
  else
    s.call("dcReduce", [&](dcRequest_t* q) { return dcReduce(data, data, r.count, r.type, r.op, root, s.comm(), q); });
}

Work DeepCommBackend::allreduce(std::vector<at::Tensor>& tensors, const c10d::AllreduceOptions& opts) {
  const at::Tensor& t = single(tensors, "allreduce");
  reduction_of(t, opts.reduceOp);  // refuses in this thread
  return start(OpType::ALLREDUCE, "allreduce", {t},
               [&](Starter& s) { reduce_call(s, s.in_out(t), opts.reduceOp, -1); });
}

Work DeepCommBackend::allreduce_coalesced(std::vector<at::Tensor>& tensors,
                                          const c10d::AllreduceCoalescedOptions& opts) {
  TORCH_CHECK(!tensors.empty(), "deepcomm: allreduce_coalesced: no tensors");
  for (const auto& t : tensors) {
    check_cpu(t, "allreduce_coalesced");
    reduction_of(t, opts.reduceOp);
  }
  return start(OpType::ALLREDUCE_COALESCED, "allreduce_coalesced", tensors, [&](Starter& s) {
    for (const auto& t : tensors) reduce_call(s, s.in_out(t), opts.reduceOp, -1);
  });
}

Work DeepCommBackend::broadcast(std::vector<at::Tensor>& tensors, const c10d::BroadcastOptions& opts) {
  const at::Tensor& t = single(tensors, "broadcast");
  const int root = static_cast<int>(opts.rootRank);
  return start(OpType::BROADCAST, "broadcast", {t}, [&](Starter& s) {
    void* data = s.in_out(t).data_ptr();
    s.call("dcBroadcast",
           [&](dcRequest_t* q) { return dcBroadcast(data, data, bytes_of(t), dcUint8, root, s.comm(), q); });
  });
}

Work DeepCommBackend::reduce(std::vector<at::Tensor>& tensors, const c10d::ReduceOptions& opts) {
  const at::Tensor& t = single(tensors, "reduce");
  reduction_of(t, opts.reduceOp);
  return start(OpType::REDUCE, "reduce", {t},
               [&](Starter& s) { reduce_call(s, s.in_out(t), opts.reduceOp, static_cast<int>(opts.rootRank)); });
}

Work DeepCommBackend::allgather(std::vector<std::vector<at::Tensor>>& outputs, std::vector<at::Tensor>& inputs,
                                const c10d::AllgatherOptions&) {
  const at::Tensor& input = single(inputs, "allgather");
  TORCH_CHECK(outputs.size() == 1, "deepcomm: allgather takes one output list, got ", outputs.size());
  check_parts(outputs[0], input, getSize(), "allgather", "the output list");
  return start(OpType::ALLGATHER, "allgather", outputs[0], [&](Starter& s) {
    const void* in = s.in(input).data_ptr();
    void* flat = s.gathered(input, outputs[0]).data_ptr();
    s.call("dcAllGather", [&](dcRequest_t* q) { return dcAllGather(in, flat, bytes_of(input), dcUint8, s.comm(), q); });
  });
}

Work DeepCommBackend::_allgather_base(at::Tensor& output, at::Tensor& input, const c10d::AllgatherOptions&) {
  check_flat(output, input, getSize(), "all_gather_into_tensor");
  return start(OpType::_ALLGATHER_BASE, "all_gather_into_tensor", {output}, [&](Starter& s) {
    const void* in = s.in(input).data_ptr();
    void* out = s.out(output).data_ptr();
    s.call("dcAllGather", [&](dcRequest_t* q) { return dcAllGather(in, out, bytes_of(input), dcUint8, s.comm(), q); });
  });
}

// outputs[r][i] receives rank r's inputs[i] (the all_gather_coalesced form).
Work DeepCommBackend::allgather_coalesced(std::vector<std::vector<at::Tensor>>& outputs,
                                          std::vector<at::Tensor>& inputs, const c10d::AllgatherOptions&) {
  TORCH_CHECK(static_cast<int>(outputs.size()) == getSize(), "deepcomm: allgather_coalesced: ", outputs.size(),
              " output lists, the group ", getSize(), " ranks");
  std::vector<std::vector<at::Tensor>> parts(inputs.size());  // parts[i][r] = outputs[r][i]
  std::vector<at::Tensor> results;
  for (const auto& list : outputs) {
    TORCH_CHECK(list.size() == inputs.size(), "deepcomm: allgather_coalesced: an output list has ", list.size(),
                " tensors for ", inputs.size(), " inputs");
    for (size_t i = 0; i < inputs.size(); ++i) parts[i].push_back(list[i]);
    results.insert(results.end(), list.begin(), list.end());
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    check_cpu(inputs[i], "allgather_coalesced");
    check_parts(parts[i], inputs[i], getSize(), "allgather_coalesced", "the output lists");
  }
  return start(OpType::ALLGATHER_COALESCED, "allgather_coalesced", results, [&](Starter& s) {
    for (size_t i = 0; i < inputs.size(); ++i) {
      const void* in = s.in(inputs[i]).data_ptr();
      void* flat = s.gathered(inputs[i], parts[i]).data_ptr();
      const size_t bytes = bytes_of(inputs[i]);
      if (bytes == 0) continue;  // nothing to move
      s.call("dcAllGather", [&](dcRequest_t* q) { return dcAllGather(in, flat, bytes, dcUint8, s.comm(), q); });
    }
  });
}

Work DeepCommBackend::allgather_into_tensor_coalesced(std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
                                                      const c10d::AllgatherOptions&) {
  TORCH_CHECK(outputs.size() == inputs.size(), "deepcomm: allgather_into_tensor_coalesced: ", outputs.size(),
              " outputs for ", inputs.size(), " inputs");
  for (size_t i = 0; i < inputs.size(); ++i)
    check_flat(outputs[i], inputs[i], getSize(), "allgather_into_tensor_coalesced");
  return start(OpType::COALESCED, "allgather_into_tensor_coalesced", outputs, [&](Starter& s) {
    for (size_t i = 0; i < inputs.size(); ++i) {
      const void* in = s.in(inputs[i]).data_ptr();
      void* out = s.out(outputs[i]).data_ptr();
      const size_t bytes = bytes_of(inputs[i]);
      s.call("dcAllGather", [&](dcRequest_t* q) { return dcAllGather(in, out, bytes, dcUint8, s.comm(), q); });
    }
  });
}

Work DeepCommBackend::gather(std::vector<std::vector<at::Tensor>>& outputs, std::vector<at::Tensor>& inputs,
                             const c10d::GatherOptions& opts) {
  const at::Tensor& input = single(inputs, "gather");
  const int root = static_cast<int>(opts.rootRank);
  const bool is_root = getRank() == root;
  std::vector<at::Tensor> results = root_list(outputs, input, getSize(), is_root, "gather", "output list");
  return start(OpType::GATHER, "gather", results, [&](Starter& s) {
    const void* in = s.in(input).data_ptr();
    void* flat = is_root ? s.gathered(input, results).data_ptr() : nullptr;
    s.call("dcGather", [&](dcRequest_t* q) { return dcGather(in, flat, bytes_of(input), dcUint8, root, s.comm(), q); });
  });
}

Work DeepCommBackend::scatter(std::vector<at::Tensor>& outputs, std::vector<std::vector<at::Tensor>>& inputs,
                              const c10d::ScatterOptions& opts) {
  const at::Tensor& output = single(outputs, "scatter");
  const int root = static_cast<int>(opts.rootRank);
  const bool is_root = getRank() == root;
  const std::vector<at::Tensor> parts = root_list(inputs, output, getSize(), is_root, "scatter", "input list");
  return start(OpType::SCATTER, "scatter", {output}, [&](Starter& s) {
    const void* flat = is_root ? s.concatenated(parts).data_ptr() : nullptr;
    void* out = s.out(output).data_ptr();
    s.call("dcScatter",
           [&](dcRequest_t* q) { return dcScatter(flat, out, bytes_of(output), dcUint8, root, s.comm(), q); });
  });
}

Work DeepCommBackend::reduce_scatter(std::vector<at::Tensor>& outputs, std::vector<std::vector<at::Tensor>>& inputs,
                                     const c10d::ReduceScatterOptions& opts) {
  const at::Tensor& output = single(outputs, "reduce_scatter");
  TORCH_CHECK(inputs.size() == 1, "deepcomm: reduce_scatter takes one input list, got ", inputs.size());
  check_parts(inputs[0], output, getSize(), "reduce_scatter", "the input list");
  reduction_of(output, opts.reduceOp);
  return start(OpType::REDUCE_SCATTER, "reduce_scatter", {output}, [&](Starter& s) {
    at::Tensor flat = s.concatenated(inputs[0]);
    at::Tensor out = s.out(output);
    reduce_scatter_call(s, flat, out, opts.reduceOp);
  });
}

Work DeepCommBackend::_reduce_scatter_base(at::Tensor& output, at::Tensor& input,
                                           const c10d::ReduceScatterOptions& opts) {
  check_flat(input, output, getSize(), "reduce_scatter_tensor");
  reduction_of(output, opts.reduceOp);
  return start(OpType::_REDUCE_SCATTER_BASE, "reduce_scatter_tensor", {output},
               [&](Starter& s) { reduce_scatter_call(s, s.in(input), s.out(output), opts.reduceOp); });
}

Work DeepCommBackend::reduce_scatter_tensor_coalesced(std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
                                                      const c10d::ReduceScatterOptions& opts) {
  TORCH_CHECK(outputs.size() == inputs.size(), "deepcomm: reduce_scatter_tensor_coalesced: ", outputs.size(),
              " outputs for ", inputs.size(), " inputs");
  for (size_t i = 0; i < inputs.size(); ++i) {
    check_flat(inputs[i], outputs[i], getSize(), "reduce_scatter_tensor_coalesced");
    reduction_of(outputs[i], opts.reduceOp);
  }
  return start(OpType::COALESCED, "reduce_scatter_tensor_coalesced", outputs, [&](Starter& s) {
    for (size_t i = 0; i < inputs.size(); ++i)
      reduce_scatter_call(s, s.in(inputs[i]), s.out(outputs[i]), opts.reduceOp);
  });
}

void DeepCommBackend::reduce_scatter_call(Starter& s, const at::Tensor& input, const at::Tensor& output,
                                          const c10d::ReduceOp& op) {
  Reduction r = reduction_of(output, op);
  if (r.premul) {
    try {
      make_premul_sum(r, s.comm());
    } catch (const std::exception& e) {
      s.fail(e.what());
      return;
    }
    s.on_cleanup([op = r.op, comm = s.comm()] { dcRedOpDestroy(op, comm); });
  }
  const void* in = input.data_ptr();
  void* out = output.data_ptr();
  s.call("dcReduceScatter",
         [&](dcRequest_t* q) { return dcReduceScatter(in, out, r.count, r.type, r.op, s.comm(), q); });
}

Work DeepCommBackend::alltoall_base(at::Tensor& output, at::Tensor& input, std::vector<int64_t>& output_splits,
                                    std::vector<int64_t>& input_splits, const c10d::AllToAllOptions&) {
  check_cpu(output, "all_to_all_single");
  check_cpu(input, "all_to_all_single");
  TORCH_CHECK(output.scalar_type() == input.scalar_type(), "deepcomm: all_to_all_single: dtypes differ");
  const int n = getSize();
  if (output_splits.empty() && input_splits.empty()) {
    TORCH_CHECK(output.numel() == input.numel() && input.numel() % n == 0,
                "deepcomm: all_to_all_single: input and "
                "output must have the same number of elements, a multiple of the group's size");
    return start(OpType::ALLTOALL_BASE, "all_to_all_single", {output}, [&](Starter& s) {
      const void* in = s.in(input).data_ptr();
      void* out = s.out(output).data_ptr();
      s.call("dcAlltoAll",
             [&](dcRequest_t* q) { return dcAlltoAll(in, out, bytes_of(input) / n, dcUint8, s.comm(), q); });
    });
  }
  // Uneven: splits count rows of dimension 0; empty splits on one side mean even rows.
  auto rows = [n](const at::Tensor& t, std::vector<int64_t> splits, const char* what) {
    TORCH_CHECK(t.dim() > 0, "deepcomm: all_to_all_single with splits needs a tensor of at least one dimension");
    if (splits.empty()) splits.assign(n, t.size(0) / n);
    TORCH_CHECK(static_cast<int>(splits.size()) == n, "deepcomm: all_to_all_single: ", what, " has ", splits.size(),
                " entries for ", n, " ranks");
    int64_t offset = 0;
    std::vector<at::Tensor> parts;
    for (int64_t rows_of_peer : splits) {
      parts.push_back(t.narrow(0, offset, rows_of_peer));
      offset += rows_of_peer;
    }
    TORCH_CHECK(offset == t.size(0), "deepcomm: all_to_all_single: ", what, " sum to ", offset,
                " rows, the tensor has ", t.size(0));
    return parts;
  };
  return exchange("all_to_all_single", {output}, rows(input, input_splits, "input_split_sizes"),
                  rows(output, output_splits, "output_split_sizes"));
}

Work DeepCommBackend::alltoall(std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
                               const c10d::AllToAllOptions&) {
  const int n = getSize();
  TORCH_CHECK(static_cast<int>(outputs.size()) == n && static_cast<int>(inputs.size()) == n,
              "deepcomm: all_to_all takes one input and one output tensor per rank");
  for (int p = 0; p < n; ++p) {
    check_cpu(inputs[p], "all_to_all");
    check_cpu(outputs[p], "all_to_all");
    TORCH_CHECK(inputs[p].scalar_type() == outputs[p].scalar_type(), "deepcomm: all_to_all: dtypes differ");
  }
  return exchange("all_to_all", outputs, inputs, outputs);
}

// Each rank sends sends[p] to rank p and receives receives[p] from it, its own part by a copy.
Work DeepCommBackend::exchange(const char* name, std::vector<at::Tensor> outputs, std::vector<at::Tensor> sends,
                               std::vector<at::Tensor> receives) {
  const int me = getRank();
  return start(OpType::ALLTOALL, name, std::move(outputs), [&](Starter& s) {
    for (int p = 0; p < getSize(); ++p) {
      if (p == me) {
        s.out(receives[p]).copy_(sends[p].reshape(receives[p].sizes()));
        continue;
      }
      void* out = s.out(receives[p]).data_ptr();
      const size_t out_bytes = bytes_of(receives[p]);
      const void* in = s.in(sends[p]).data_ptr();
      const size_t in_bytes = bytes_of(sends[p]);
      if (out_bytes) s.call("dcRecv", [&](dcRequest_t* q) { return dcRecv(out, out_bytes, dcUint8, p, s.comm(), q); });
      if (in_bytes) s.call("dcSend", [&](dcRequest_t* q) { return dcSend(in, in_bytes, dcUint8, p, s.comm(), q); });
    }
  });
}

// Tags are not matched: a group's sends to one peer arrive in the order they were made, as do
// its receives from one peer.
Work DeepCommBackend::send(std::vector<at::Tensor>& tensors, int dst, int) {
  const at::Tensor& t = single(tensors, "send");
  return start(OpType::SEND, "send", {t}, [&](Starter& s) {
    const void* in = s.in(t).data_ptr();
    s.call("dcSend", [&](dcRequest_t* q) { return dcSend(in, bytes_of(t), dcUint8, dst, s.comm(), q); });
  });
}

Work DeepCommBackend::recv(std::vector<at::Tensor>& tensors, int src, int) {
  const at::Tensor& t = single(tensors, "recv");
  return start(OpType::RECV, "recv", {t}, [&](Starter& s) {
    void* out = s.out(t).data_ptr();
    s.call("dcRecv", [&](dcRequest_t* q) { return dcRecv(out, bytes_of(t), dcUint8, src, s.comm(), q); });
  });
}

Work DeepCommBackend::barrier(const c10d::BarrierOptions&) {
  at::Tensor token = at::zeros({1}, at::kInt);
  return start(OpType::BARRIER, "barrier", {}, [&](Starter& s) {
    void* data = s.in_out(token).data_ptr();
    s.call("dcAllReduce", [&](dcRequest_t* q) { return dcAllReduce(data, data, 1, dcInt32, dcSum, s.comm(), q); });
  });
}

Work DeepCommBackend::compressed_allreduce(const at::Tensor& t, const std::string& spec,
                                           std::shared_ptr<Residual> residual, bool average,
                                           std::shared_ptr<dcCompressStats_t> stats) {
  check_cpu(t, "compressed_allreduce");
  const at::ScalarType type = t.scalar_type();
  TORCH_CHECK(type == at::kFloat || type == at::kHalf || type == at::kBFloat16,
              "deepcomm: compressed_allreduce: float32, float16 or bfloat16 tensors only, got ", type);
  TORCH_CHECK(!residual || residual->count() == static_cast<size_t>(t.numel()),
              "deepcomm: compressed_allreduce: ", "the residual has ", residual ? residual->count() : 0,
              " elements, the tensor ", t.numel());
  const Reduction r = reduction_of(t, c10d::ReduceOp::SUM);
  return start(OpType::ALLREDUCE, "compressed_allreduce", {t}, [&](Starter& s) {
    void* data = s.in_out(t).data_ptr();
    s.on_cleanup([residual, stats] {});  // both stay valid while the request is pending
    s.call("dcCompressedAllReduce", [&](dcRequest_t* q) {
      return dcCompressedAllReduce(data, data, r.count, r.type, average ? dcAvg : dcSum, spec.c_str(),
                                   residual ? residual->handle() : nullptr, s.comm(), q, stats.get());
    });
  });
}

}  // namespace deepcomm_torch
