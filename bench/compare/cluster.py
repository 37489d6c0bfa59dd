"""A cluster of network-namespace hosts on this machine (tools/cluster/dc-cluster) for the comparison's
"cluster" group: made once for the whole run, removed at its end, with the link rate measured by
iperf3 once per round (the slow-link bound of that round)."""

import os
import re
import subprocess

TOOLS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools", "cluster")
DC_CLUSTER = os.path.normpath(os.path.join(TOOLS, "dc-cluster"))
DC_MPIRUN = os.path.normpath(os.path.join(TOOLS, "dc-mpirun"))


class Cluster:
    """`with Cluster(hosts, rate) as c:` makes hosts namespaces (rate, burst: tc syntax or None; shaper:
    tbf or htb; burst and shaper default to dc-cluster's)."""

    def __init__(self, hosts, rate, burst=None, shaper=None):
        self.hosts, self.rate, self.burst, self.shaper = hosts, rate, burst, shaper
        self.prefix = f"dccmp{os.getpid()}"

    def _tool(self, *args, timeout=60):
        argv = [DC_CLUSTER, "--prefix", self.prefix] + (["--rate", self.rate] if self.rate else []) + \
            (["--burst", self.burst] if self.burst else []) + (["--shaper", self.shaper] if self.shaper else []) + \
            list(args)
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout)
        if p.returncode != 0:
            raise RuntimeError(f"{' '.join(argv)}: exit {p.returncode}: {p.stdout.strip()}")
        return p.stdout.strip()

    def __enter__(self):
        self._tool("up", str(self.hosts))
        self.netns = self._tool("hosts")
        return self

    def __exit__(self, *exc):
        self._tool("down")

    def link_rate_gbps(self, seconds=3):
        """The rate one host's link carried from host 0 to host 1 (iperf3), in Gbit/s."""
        out = self._tool("linkrate", str(seconds), timeout=seconds + 40)
        m = re.match(r"([0-9.]+) Gbit/s", out)
        if not m:
            raise RuntimeError(f"dc-cluster linkrate printed {out!r}")
        return float(m.group(1))

    def ranks_per_host(self, nranks):
        if nranks % self.hosts:
            raise ValueError(f"{nranks} ranks do not split evenly over {self.hosts} hosts")
        return nranks // self.hosts

    def deepcomm(self, launcher, nranks, argv):
        """deepcomm-run with block placement over the hosts."""
        return [launcher, "--netns", self.netns, "--ranks-per-host", str(self.ranks_per_host(nranks))] + argv

    def ompi(self, selection, argv, nranks):
        """mpirun with its daemons and ranks in the hosts (block placement), see dc-mpirun."""
        return [DC_MPIRUN, "--prefix", self.prefix, "--ranks-per-host", str(self.ranks_per_host(nranks))] + \
            selection + argv

    def describe(self):
        shaper = self.shaper or "tbf"
        burst = self.burst or ("512kb" if shaper == "tbf" else "16k")
        return {"hosts": self.hosts, "rate": self.rate or "unlimited", "shaper": f"{shaper} burst {burst} latency 20ms"}
