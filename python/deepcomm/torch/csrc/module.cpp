// deepcomm.torch._C: the backend's creator for torch.distributed.Backend.register_backend.
#include "backend.h"

#include <pybind11/chrono.h>
#include <torch/csrc/utils/pybind.h>

namespace py = pybind11;

PYBIND11_MODULE(_C, m) {
  m.doc() = "DeepComm's torch.distributed backend (CPU tensors)";
  m.def(
      "create_backend",
      [](const c10::intrusive_ptr<c10d::Store>& store, int rank, int size, std::chrono::duration<float> timeout) {
        auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(timeout);
        return c10::intrusive_ptr<c10d::Backend>(
            c10::make_intrusive<deepcomm_torch::DeepCommBackend>(store, rank, size, ms));
      },
      py::arg("store"), py::arg("rank"), py::arg("size"), py::arg("timeout"),
      py::call_guard<py::gil_scoped_release>(),
      "A backend of `size` ranks on one DeepComm communicator, bootstrapped through `store`; every operation "
      "fails on every rank once it outlives `timeout`.");
}
