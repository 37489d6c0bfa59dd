"""PyTorch's own distributed test suite (torch.testing._internal.distributed.distributed_test) on
one backend, 4 ranks on CPU, the way PyTorch's test/distributed/test_distributed_spawn.py runs it:

    BACKEND=deepcomm python bench/torch/pytorch_suite.py [-k PATTERN ...] [unittest options]

(with PYTHONPATH=python:build/python and DEEPCOMM_LIBRARY=build/libdeepcomm.so.0 for deepcomm;
BACKEND=gloo for the reference). The suite gates many tests on backend names; deepcomm is added
to the features it has (DDP, subgroups: CPU ones), and the tests gated to backend sets that hold
gloo run for it too, so that gloo's CPU tests run for deepcomm.
docs/pytorch.md has the counts beside gloo's."""
import importlib.util
import os
import sys
import tempfile
import unittest

os.environ.setdefault("WORLD_SIZE", "4")
os.environ.setdefault("TEMP_DIR", tempfile.mkdtemp(prefix="pytorch_suite_"))

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
from torch.testing._internal.common_distributed import DistTestCases  # noqa: E402

SUITE = "torch.testing._internal.distributed.distributed_test"
if os.environ["BACKEND"] == "deepcomm":
    import deepcomm.torch  # noqa: F401,E402  registers the backend (in every spawned rank too)

    for feature in ("ddp", "subgroup", "plugin"):  # plugin: require_backend_is_available's check
        DistTestCases.backend_feature[feature].add("deepcomm")
    # Tests that require_backend_is_available() gates to a set of backend names with gloo in it run
    # for deepcomm too (they are CPU tests gloo runs): the suite is loaded with that one gate widened.
    spec = importlib.util.find_spec(SUITE)
    with open(spec.origin) as f:
        source = f.read()
    GATE = "if BACKEND not in backends:"
    if source.count(GATE) != 1:
        sys.exit(f"{spec.origin}: the backend gate '{GATE}' is not there once; this driver needs updating")
    source = source.replace(GATE, 'if BACKEND not in backends and not (BACKEND == "deepcomm" and "gloo" in backends):')
    # Name checks of CPU features deepcomm has: futures of works (get_future), batched isend/irecv
    # on CPU tensors (batch_isend_irecv), and the CPU model of the no_sync tests, gated to gloo.
    for gate, count in (('BACKEND != "mpi" and BACKEND != "nccl" and BACKEND != "gloo",', 5),
                        ('BACKEND != "gloo", "GLOO Batch Send Recv CPU"', 2),
                        ('if BACKEND == "mpi" or BACKEND == "gloo":', 1)):
        if source.count(gate) != count:
            sys.exit(f"{spec.origin}: the gate '{gate}' is not there {count} times; this driver needs updating")
        widened = gate.replace('BACKEND != "gloo"', 'BACKEND not in ("gloo", "deepcomm")')
        source = source.replace(gate, widened.replace('BACKEND == "gloo"', 'BACKEND in ("gloo", "deepcomm")'))
    suite = importlib.util.module_from_spec(spec)
    sys.modules[SUITE] = suite
    exec(compile(source, spec.origin, "exec"), suite.__dict__)

from torch.testing._internal.distributed.distributed_test import DistributedTest, TestDistBackend  # noqa: E402


class TestDistBackendWithSpawn(TestDistBackend, DistributedTest._DistTestBase):
    def setUp(self):
        super().setUp()
        self._spawn_processes()


if __name__ == "__main__":
    if not dist.is_available():
        sys.exit("torch.distributed is not available")
    unittest.main(argv=sys.argv)
