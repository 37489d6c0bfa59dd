"""The configurations the comparison runs: DeepComm over shared memory and TCP, Open MPI in its
shared-memory selections and its TCP one, and Gloo (TCP); DeepComm over UCX beside its own TCP
transport and Open MPI's UCX pml, all three on UCX_TLS=tcp or plain TCP, and over UCX_TLS=sm with
ordinary memory in place and staged beside Open MPI's UCX pml on sm; and both libraries on a
cluster of network-namespace hosts (bench/compare/cluster.py). Each builds the command line of one
run."""

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
    # Open MPI's UCX pml over UCX's TCP transport (the "ucx" group).
    "ompi-ucx-tcp": ["--mca", "pml", "ucx", "--mca", "pml_ucx_tls", "any", "--mca", "pml_ucx_devices", "any",
                     "-x", "UCX_TLS=tcp"],
    # On the cluster: shared memory between the ranks of one host, TCP between hosts.
    "ompi-cluster": ["--mca", "pml", "ob1", "--mca", "btl", "self,vader,tcp"],
}

# The environment of each DeepComm configuration on one host (deepcomm-shm: the defaults).
DEEPCOMM_ENVS = {
    "deepcomm-shm": {},
    "deepcomm-tcp": {"DEEPCOMM_TRANSPORT": "tcp"},
    "deepcomm-ucx": {"DEEPCOMM_TRANSPORT": "ucx-all", "UCX_TLS": "tcp"},
    "deepcomm-ucx-in-place": {"DEEPCOMM_TRANSPORT": "ucx-all", "UCX_TLS": "tcp", "DEEPCOMM_UCX_IN_PLACE": "always"},
    "deepcomm-ucx-sm": {"DEEPCOMM_TRANSPORT": "ucx-all", "UCX_TLS": "sm"},
    "deepcomm-ucx-sm-staged": {"DEEPCOMM_TRANSPORT": "ucx-all", "UCX_TLS": "sm", "DEEPCOMM_UCX_IN_PLACE": "never"},
}

# Which configurations make up each side-by-side group: DeepComm first, then its peers.
GROUPS = {
    "shm": ["deepcomm-shm", "ompi-default", "ompi-vader", "ompi-ucx"],
    "tcp": ["deepcomm-tcp", "ompi-tcp", "gloo"],
    # DeepComm over UCX (ucx-all, UCX_TLS=tcp) against its own TCP transport and Open MPI over UCX.
    # deepcomm-ucx-in-place: ordinary memory in place over tcp too (DEEPCOMM_UCX_IN_PLACE=always).
    "ucx": ["deepcomm-ucx", "deepcomm-ucx-in-place", "deepcomm-tcp", "ompi-ucx-tcp"],
    # DeepComm over UCX's shared memory (ucx-all, UCX_TLS=sm): ordinary memory in place (the
    # default there) and staged (DEEPCOMM_UCX_IN_PLACE=never), against Open MPI's UCX pml on sm.
    "ucx-sm": ["deepcomm-ucx-sm", "deepcomm-ucx-sm-staged", "ompi-ucx"],
    "cluster": ["deepcomm-cluster", "ompi-cluster"],  # needs --cluster-hosts (a Cluster)
}

COLLECTIVES = ["all_reduce", "all_gather", "reduce_scatter", "broadcast", "alltoall"]


def command(config, collective, nranks, bench_dir, launcher, size_args, json_path, cluster=None,
            deepcomm_env=None):
    """Returns (argv, extra environment) for one run, or None when the peer lacks the collective.
    deepcomm_env: extra variables for DeepComm's runs (e.g. DEEPCOMM_ALGO=ring)."""
    if config == "deepcomm-cluster":
        prog = os.path.join(bench_dir, collective + "_perf")
        argv = cluster.deepcomm(launcher, nranks, [prog] + size_args + ["-c", "1", "-J", json_path])
        return argv, dict(deepcomm_env or {})
    if config == "ompi-cluster":
        prog = os.path.join(bench_dir, "ompi_collectives_perf")
        argv = [prog, "-C", collective] + size_args + ["-c", "1", "-J", json_path]
        return cluster.ompi(OMPI_SELECTIONS[config], argv, nranks), {}
    if config in DEEPCOMM_ENVS:
        env = dict(deepcomm_env or {}, **DEEPCOMM_ENVS[config])
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
