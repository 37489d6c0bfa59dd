"""The docs/performance.md section of a comparison's "cluster" group: DeepComm and Open MPI on hosts
that are network namespaces joined by rate-limited links, held against the slow-link bound."""

import statistics

import report
import stats

HEADING = "## Several hosts on one machine: the slow-link bound"

INTRO = """Hosts are network namespaces made by `tools/cluster/dc-cluster`: each has loopback and one veth
(`eth0`) whose other end hangs on a bridge in a switch namespace, and with a rate both ends of every
host's veth carry a `tc tbf` qdisc (burst 512kb, latency 20ms), so a host can neither send nor
receive faster than its link. Ranks are placed by blocks (ranks 0..R−1 on the first host):
DeepComm with `deepcomm-run --netns` (shared memory between the ranks of one host, TCP between
hosts), Open MPI with `tools/cluster/dc-mpirun` (mpirun in host 0, one orted per host started
through `tools/cluster/netns-rsh`, `--bind-to none`, `--mca pml ob1 --mca btl self,vader,tcp`,
`--mca mpi_yield_when_idle 1` since the hosts share the machine's cores).
Rounds are interleaved (DeepComm, Open MPI, DeepComm, ...); each round first measures the link
rate with iperf3 from host 0 to host 1 (`dc-cluster linkrate 3`).

**The bound.** In an all-reduce of S bytes over h hosts, every host's result depends on the other
hosts' data, and the best any algorithm can do is send 2(h−1)/h·S out of each host (a reduce-scatter
and an all-gather between hosts, each host owning 1/h of the buffer). So time ≥ 2(h−1)/h·S / link
rate, whatever happens inside the hosts. A ring over all n ranks in rank order sends 2(n−1)/n·S
over each edge that crosses between hosts, and with block placement each host's link carries one
such edge: it cannot do better than (n−1)/n · h/(h−1) times the bound (1.75 for 8 ranks on 2
hosts). "× bound" below is time / bound with the median link rate of the run's rounds; ratios
pair round i of DeepComm with round i of Open MPI. The bound holds only for sizes well above tbf's
burst (512 KB): the token bucket refills while a host is idle, so up to that many bytes per host
leave at veth speed, and runs of a few MiB and less can come close to it or beat it.
"""


def blocks(results):
    return [b for b in report.blocks_of(results) if b.group == "cluster"]


def allreduce_bound_s(size, hosts, gbps):
    return 2.0 * (hosts - 1) / hosts * size / (gbps * 1e9 / 8)


def ring_multiple(nranks, hosts):
    return (nranks - 1) / nranks * hosts / (hosts - 1)


def block_table(b, hosts, gbps):
    peer = next(iter(b.peers), None)
    head = ["size", "bound (ms)", f"{b.ours_name} (ms)", "× bound"]
    if peer:
        head += [f"{peer} (ms)", "× bound", f"{peer} / {b.ours_name} time"]
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    reduce = b.collective == "all_reduce" and hosts > 1 and gbps
    for s in b.sizes:
        bound = allreduce_bound_s(s, hosts, gbps) * 1e3 if reduce else None
        ours = b.time[b.ours_name].get(s)
        ours = ours / 1e3 if ours is not None else None
        row = [stats.human_size(s), report.fmt(bound), report.fmt(ours),
               report.fmt(ours / bound) if bound and ours else "—"]
        if peer:
            theirs = b.time[peer].get(s)
            theirs = theirs / 1e3 if theirs is not None else None
            row += [report.fmt(theirs), report.fmt(theirs / bound) if bound and theirs else "—",
                    report.fmt(b.ratio[peer].get(s))]
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def summary(b, hosts, gbps):
    top = b.sizes[-1]
    bound = allreduce_bound_s(top, hosts, gbps) * 1e3
    line = (f"At {stats.human_size(top)}, {b.ours_name} takes {b.time[b.ours_name][top] / 1e3:.0f} ms, "
            f"**{b.time[b.ours_name][top] / 1e3 / bound:.2f}×** the bound of {bound:.0f} ms (a rank-order ring on "
            f"{b.nranks} ranks over {hosts} hosts needs at least {ring_multiple(b.nranks, hosts):.2f}×)")
    for peer in b.peers:
        if top in b.time[peer]:
            line += f"; {peer} takes {b.time[peer][top] / 1e3:.0f} ms, {b.time[peer][top] / 1e3 / bound:.2f}×"
    return line + ".\n"


def section(results, link_rates, setup, machine, versions, commands, failures):
    """Markdown of the cluster group, or None when the runs had none."""
    found = blocks(results)
    if not found:
        return None
    hosts = setup["hosts"]
    gbps = statistics.median(link_rates) if link_rates else None
    out = [HEADING, "", INTRO,
           f"- date: {machine['date']}; `nproc` = {machine['nproc']}; CPU: {machine['cpu']}",
           *[f"- {k}: {v}" for k, v in versions.items()],
           f"- cluster: {hosts} hosts, each link limited to {setup['rate']} ({setup.get('shaper') or 'tbf ' + setup['tbf']}) at both ends",
           f"- DeepComm's environment: {setup.get('deepcomm_env') or 'default'}",
           "- built in Release: `cmake -S . -B build-bench -G Ninja -DCMAKE_BUILD_TYPE=Release -DDEEPCOMM_BUILD_TESTS=OFF -DDEEPCOMM_BUILD_EXAMPLES=OFF && "
           "cmake --build build-bench --target deepcomm-run all_reduce_perf ompi_collectives_perf` (add the "
           "other collectives' `*_perf` targets when they are compared)",
           "- commands (from the repository root, as root):", *[f"  - `{c}`" for c in commands]]
    if link_rates:
        out.append(f"- link rate (iperf3, {len(link_rates)} runs): median **{gbps:.3f} Gbit/s**, "
                   f"range {min(link_rates):.3f}–{max(link_rates):.3f}")
    out.append("")
    for b in found:
        rounds = min(len(r) for r in [b.ours] + list(b.peers.values())) if b.peers else len(b.ours)
        per_host = b.nranks // hosts
        title = f"### {b.collective}, {hosts} hosts × {per_host} ranks (medians of {rounds} interleaved rounds)"
        out += [title, "", block_table(b, hosts, gbps), ""]
        if b.collective == "all_reduce" and hosts > 1 and gbps and b.sizes:
            out.append(summary(b, hosts, gbps))
    out.append("Failures: " + ("; ".join(failures) if failures else "none (every run exited 0 with 0 wrong values)."))
    return "\n".join(out) + "\n"
