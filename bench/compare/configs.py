"""The configurations the comparison runs: DeepComm over shared memory and TCP, Open MPI in its
shared-memory selections and its TCP one, and Gloo (TCP). Each builds the command line of one run."""

import os
import tempfile

MPIRUN = ["mpirun", "--allow-run-as-root", "--oversubscribe", "--mca", "oob_tcp_if_include", "lo",
          "--mca", "btl_tcp_if_include", "lo"]

# MCA selections from BENCHMARKING.md.
OMPI_SELECTIONS = {
    "ompi-default": [],
    "ompi-vader": ["--mca", "pml", "ob1", "--mca", "btl", "self,vader"],
    "ompi-ucx": ["--mca", "pml", "ucx", "--mca", "pml_ucx_tls", "any", "--mca", "pml_ucx_devices", "any",
                 "-x", "UCX_TLS=sm,self"],
    "ompi-tcp": ["--mca", "pml", "ob1", "--mca", "btl", "self,tcp"],
}

# Which configurations make up each side-by-side group: DeepComm first, then its peers.
GROUPS = {
    "shm": ["deepcomm-shm", "ompi-default", "ompi-vader", "ompi-ucx"],
    "tcp": ["deepcomm-tcp", "ompi-tcp", "gloo"],
}

COLLECTIVES = ["all_reduce", "all_gather", "reduce_scatter", "broadcast", "alltoall"]


def command(config, collective, nranks, bench_dir, launcher, size_args, json_path):
    """Returns (argv, extra environment) for one run, or None when the peer lacks the collective."""
    if config.startswith("deepcomm-"):
        env = {"DEEPCOMM_TRANSPORT": "tcp"} if config == "deepcomm-tcp" else {}
        prog = os.path.join(bench_dir, collective + "_perf")
        return [launcher, "-n", str(nranks), prog] + size_args + ["-c", "1", "-J", json_path], env
    if config.startswith("ompi-"):
        prog = os.path.join(bench_dir, "ompi_collectives_perf")
        return (MPIRUN + OMPI_SELECTIONS[config] + ["-np", str(nranks), prog, "-C", collective] + size_args
                + ["-c", "1", "-J", json_path]), {}
    if config == "gloo":
        if collective == "reduce_scatter":
            return None  # Gloo's function API has none (see gloo_collectives_perf.cpp)
        store = tempfile.mkdtemp(prefix="gloo_store_", dir=os.path.dirname(json_path))
        prog = os.path.join(bench_dir, "gloo_collectives_perf")
        return ([launcher, "-n", str(nranks), prog, "-C", collective, "-S", store] + size_args
                + ["-c", "1", "-J", json_path]), {}
    raise ValueError(config)
