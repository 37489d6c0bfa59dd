// deepcomm.torch._C: the backend's creator for torch.distributed.Backend.register_backend, and the
// compressed all-reduce on a deepcomm group's backend with its residual and statistics types
// (deepcomm/torch/compression.py builds the DDP hook on them).
#include "backend.h"

#include <pybind11/chrono.h>
#include <torch/csrc/utils/pybind.h>

namespace py = pybind11;

namespace {

deepcomm_torch::DeepCommBackend& deepcomm_backend(const c10::intrusive_ptr<c10d::Backend>& backend) {
  auto* ours = dynamic_cast<deepcomm_torch::DeepCommBackend*>(backend.get());
  TORCH_CHECK(ours, "deepcomm: the process group's backend is ", backend->getBackendName(), ", not deepcomm");
  return *ours;
}

}  // namespace

PYBIND11_MODULE(_C, m) {
  using deepcomm_torch::Residual;
  m.doc() = "DeepComm's torch.distributed backend (CPU tensors)";
  m.def(
      "create_backend",
      [](const c10::intrusive_ptr<c10d::Store>& store, int rank, int size, std::chrono::duration<float> timeout) {
        auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(timeout);
        return c10::intrusive_ptr<c10d::Backend>(
            c10::make_intrusive<deepcomm_torch::DeepCommBackend>(store, rank, size, ms));
      },
      py::arg("store"), py::arg("rank"), py::arg("size"), py::arg("timeout"), py::call_guard<py::gil_scoped_release>(),
      "A backend of `size` ranks on one DeepComm communicator, bootstrapped through `store`; every operation "
      "fails on every rank once it outlives `timeout`.");

  py::class_<Residual, std::shared_ptr<Residual>>(m, "Residual",
                                                  "The error feedback of one buffer (dcResidual_t) of `count` elements")
      .def(py::init<size_t>(), py::arg("count"))
      .def_property_readonly("count", &Residual::count)
      .def("reset", &Residual::reset, "Zeroes the state");

  py::class_<dcCompressStats_t, std::shared_ptr<dcCompressStats_t>>(
      m, "CompressStats",
      "What one compressed all-reduce did on this rank (dcCompressStats_t), valid once it completed")
      .def_readonly("raw_bytes", &dcCompressStats_t::rawBytes)
      .def_readonly("wire_bytes", &dcCompressStats_t::wireBytes)
      .def_readonly("ratio", &dcCompressStats_t::ratio)
      .def_readonly("messages", &dcCompressStats_t::messages)
      .def_readonly("select_seconds", &dcCompressStats_t::selectSeconds)
      .def_readonly("encode_seconds", &dcCompressStats_t::encodeSeconds)
      .def_readonly("decode_seconds", &dcCompressStats_t::decodeSeconds)
      .def_readonly("accumulate_seconds", &dcCompressStats_t::accumulateSeconds)
      .def_readonly("total_seconds", &dcCompressStats_t::totalSeconds)
      .def_property_readonly("algorithm", [](const dcCompressStats_t& s) { return std::string(s.algorithm); });

  m.def(
      "compressed_allreduce",
      [](const c10::intrusive_ptr<c10d::Backend>& backend, const at::Tensor& tensor, const std::string& spec,
         std::shared_ptr<Residual> residual, bool average) {
        auto stats = std::make_shared<dcCompressStats_t>();
        py::gil_scoped_release no_gil;  // the call may wait for the peers (small buffers complete in it)
        c10::intrusive_ptr<c10d::Work> work =
            deepcomm_backend(backend).compressed_allreduce(tensor, spec, std::move(residual), average, stats);
        return std::make_pair(work, stats);
      },
      py::arg("backend"), py::arg("tensor"), py::arg("spec"), py::arg("residual"), py::arg("average"),
      "Starts DeepComm's compressed all-reduce of `tensor` in place on a deepcomm group's backend; returns the work "
      "and the statistics it fills in by its completion.");
}
