"""Tables, curves and the Markdown document of a comparison run (see run_comparison.py)."""

import os
import statistics

import stats

MIB = 1 << 20


def membw_medians(runs):
    if not runs:
        return {}
    keys = ("add_gbs", "accumulate_gbs", "memcpy_gbs")
    out = {k: statistics.median(r[k] for r in runs) for k in keys}
    out["runs"] = len(runs)
    return out


def allreduce_bounds(n, bandwidth):
    """busbw ceilings of an n-rank all-reduce when memory moves `bandwidth` bytes/s (read + write).

    Bytes moved per call of S bytes, all ranks together (derivation in docs/performance.md):
    single_copy (3n-1)S: reduce-scatter + all-gather reading peers' buffers directly (CMA);
    copy_through (5n-2)S: the same through a shared segment (DEEPCOMM_SHM_CMA=0);
    any_design 2nS: read every input once, write every output once. busbw = 2(n-1)/n * S / time.
    """
    factor = 2.0 * (n - 1) / n
    return {"single_copy": factor * bandwidth / (3 * n - 1), "copy_through": factor * bandwidth / (5 * n - 2),
            "any_design": factor * bandwidth / (2 * n)}


# Single-copy memory bound of every collective: (busbw factor, bytes moved through memory per call
# of S bytes, all ranks together, in units of S). S is nccl-tests' size: the buffer (all-reduce,
# broadcast), the whole output (all-gather), the whole input (reduce-scatter, all-to-all). Each
# byte that changes rank is read once at its source and written once at its destination:
#   all-reduce      2(n-1)/n, (3n-1): see allreduce_bounds;
#   all-gather      (n-1)/n,  2n:     every rank writes S, reading S/n of it locally, the rest remotely;
#   reduce-scatter  (n-1)/n,  n+1:    each owner reads n blocks of S/n and writes one;
#   broadcast       1,        2n:     every rank reads S (the root's) and writes S;
#   all-to-all      (n-1)/n,  2n:     every rank reads n blocks of S/n and writes them.
BOUND_TERMS = {
    "all_reduce": (lambda n: 2.0 * (n - 1) / n, lambda n: 3 * n - 1),
    "all_gather": (lambda n: (n - 1) / n, lambda n: 2 * n),
    "reduce_scatter": (lambda n: (n - 1) / n, lambda n: n + 1),
    "broadcast": (lambda n: 1.0, lambda n: 2 * n),
    "alltoall": (lambda n: (n - 1) / n, lambda n: 2 * n),
}


def memory_bound(collective, n, bandwidth):
    """busbw ceiling of the single-copy design of `collective` on n ranks (bytes/s)."""
    factor, moved = BOUND_TERMS[collective]
    return factor(n) * bandwidth / moved(n)


def socket_medians(runs):
    """{nranks: median per-rank loopback TCP rate in GB/s} from socket_ring_bw's JSON objects."""
    by_n = {}
    for r in runs:
        by_n.setdefault(r["nranks"], []).append(r["per_rank_gbs"])
    return {n: statistics.median(v) for n, v in sorted(by_n.items())}


def socket_bound_lines(results, sockets):
    """Markdown rows: every TCP all-reduce configuration's busbw at its largest size against the socket
    bound (a ring's traffic; see document.SOCKET_BOUND for why other collectives are left out)."""
    rows = ["| collective | ranks | size | socket bound (GB/s) | configuration | busbw (GB/s) | fraction |",
            "| --- | --- | --- | --- | --- | --- | --- |"]
    for b in blocks_of(results):
        if b.collective != "all_reduce" or b.group != "tcp" or not b.sizes or b.nranks not in sockets:
            continue
        top = b.sizes[-1]
        for name, busbw in b.busbw.items():
            if top in busbw:
                rows.append(f"| {b.collective} | {b.nranks} | {stats.human_size(top)} | {sockets[b.nranks]:.3g} | "
                            f"{name} | {fmt(busbw[top])} | {busbw[top] / sockets[b.nranks]:.0%} |")
    return rows


def bound_lines(results, mem):
    """Markdown rows: DeepComm's busbw at its largest size as a fraction of the memory bound."""
    rows = ["| collective | ranks | size | DeepComm busbw (GB/s) | memory bound (GB/s) | fraction |",
            "| --- | --- | --- | --- | --- | --- |"]
    for b in blocks_of(results):
        if b.group != "shm" or not b.sizes or b.collective not in BOUND_TERMS:
            continue
        top = b.sizes[-1]
        bound = memory_bound(b.collective, b.nranks, mem["memcpy_gbs"] * 1e9) / 1e9
        ours = b.busbw[b.ours_name][top]
        rows.append(f"| {b.collective} | {b.nranks} | {stats.human_size(top)} | {fmt(ours)} | {bound:.2f} | "
                    f"{ours / bound:.0%} |")
    return rows


class Block:
    """One (collective, rank count, group) of a run with its medians and ratios."""

    def __init__(self, key, configs):
        self.collective, self.nranks, self.group = key
        self.ours_name = next(c for c in configs if c.startswith("deepcomm"))
        self.ours = configs[self.ours_name]
        self.peers = {c: r for c, r in configs.items() if c != self.ours_name and r}
        self.busbw = {c: stats.medians(r, "busbw_gbs") for c, r in configs.items() if r}
        self.time = {c: stats.medians(r, "time_us") for c, r in configs.items() if r}
        self.ratio = {c: stats.ratio_medians(self.ours, r) for c, r in self.peers.items()}
        ompi = {c: r for c, r in self.peers.items() if c.startswith("ompi")}
        self.best_ompi = stats.best_peer(ompi) if len(ompi) > 1 else {}
        self.sizes = sorted(self.busbw.get(self.ours_name, {}))

    def best_ratio(self, size):
        name = self.best_ompi.get(size)
        return self.ratio[name].get(size) if name else None

    def title(self):
        return f"{self.collective}, {self.nranks} ranks, {self.group}"


def fmt(v, digits=3):
    return "—" if v is None else f"{v:.{digits}g}" if v < 1000 else f"{v:.0f}"


def block_table(b):
    peers = list(b.peers)
    head = ["size", f"{b.ours_name} time (us)", f"{b.ours_name} busbw"]
    for p in peers:
        head += [f"{p} busbw", f"ratio vs {p}"]
    if b.best_ompi:
        head += ["best Open MPI", "ratio vs best"]
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for s in b.sizes:
        row = [stats.human_size(s), fmt(b.time[b.ours_name].get(s)), fmt(b.busbw[b.ours_name].get(s))]
        for p in peers:
            row += [fmt(b.busbw[p].get(s)), fmt(b.ratio[p].get(s))]
        if b.best_ompi:
            row += [b.best_ompi.get(s, "—"), fmt(b.best_ratio(s))]
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def blocks_of(results):
    return [Block(k, v) for k, v in results.items() if any(v.values())]


def tables(results, mem):
    out = []
    for b in blocks_of(results):
        rounds = min(len(r) for r in [b.ours] + list(b.peers.values())) if b.peers else len(b.ours)
        out.append(f"### {b.title()} (busbw GB/s, medians of {rounds} interleaved rounds; ratio = median of "
                   f"pairwise DeepComm/peer busbw)\n\n{block_table(b)}\n")
    if mem:
        out.append(f"memory bandwidth (median of {mem['runs']} runs, best of 3 each): c=a+b {mem['add_gbs']:.2f}, "
                   f"a+=b {mem['accumulate_gbs']:.2f}, memcpy {mem['memcpy_gbs']:.2f} GB/s\n")
    return "\n".join(out)


def plots(results, png_dir):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    os.makedirs(png_dir, exist_ok=True)
    names = []
    for b in blocks_of(results):
        fig, ax = plt.subplots(figsize=(6.4, 4), dpi=80)
        for c, curve in b.busbw.items():
            sizes = sorted(curve)
            ax.plot(sizes, [curve[s] for s in sizes], marker="o", markersize=3,
                    linewidth=2.2 if c == b.ours_name else 1.2, label=c)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("size (bytes)")
        ax.set_ylabel("busbw (GB/s, median)")
        ax.set_title(b.title())
        ax.grid(True, which="major", alpha=0.3)
        ax.legend(fontsize=8)
        fig.tight_layout()
        name = f"{b.collective}_{b.nranks}ranks_{b.group}.png"
        fig.savefig(os.path.join(png_dir, name))
        plt.close(fig)
        names.append(os.path.join(png_dir, name))
    return names


def verdict(ok):
    return "met" if ok else "**missed**"


def targets(results, mem, sockets=None):
    """The issue's targets, checked with BENCHMARKING.md's tolerance, for the blocks a run has."""
    lines = []
    top = 64 * MIB
    for b in blocks_of(results):
        if b.collective == "all_reduce" and b.group == "shm" and b.best_ompi:
            if top in b.sizes:
                r = b.best_ratio(top)
                lines.append(f"- shm, {b.nranks} ranks, 64 MiB: {fmt(r)}× the best Open MPI busbw (target ≥ 1.5): "
                             f"{verdict(r is not None and r >= 1.5)}")
                if mem:
                    bound = allreduce_bounds(b.nranks, mem["memcpy_gbs"] * 1e9)["single_copy"] / 1e9
                    frac = b.busbw[b.ours_name][top] / bound
                    lines.append(f"- shm, {b.nranks} ranks, 64 MiB: {frac:.0%} of the memory bound {bound:.2f} GB/s "
                                 f"(target ≥ 60%): {verdict(frac >= 0.6)}")
            big = [(s, b.best_ratio(s)) for s in b.sizes if s >= MIB and b.best_ratio(s) is not None]
            if big:
                worst = min(big, key=lambda x: x[1])
                lines.append(f"- shm, {b.nranks} ranks, 1 MiB and up never below Open MPI (each ratio ≥ 0.9): lowest "
                             f"{worst[1]:.2f} at {stats.human_size(worst[0])}: {verdict(worst[1] >= 0.9)}")
            small = [(s, b.best_ratio(s)) for s in b.sizes if s <= 1024 and b.best_ratio(s) is not None]
            if small:
                worst = min(small, key=lambda x: x[1])
                lines.append(f"- shm, {b.nranks} ranks, 8 B..1 KiB latency ≤ Open MPI's (time ratio ≤ 1/0.9): worst "
                             f"Open MPI/DeepComm time ratio {worst[1]:.2f} at {stats.human_size(worst[0])}: "
                             f"{verdict(worst[1] >= 0.9)}")
        if b.collective == "all_reduce" and b.group == "tcp" and top in b.sizes:
            for peer, goal in (("gloo", 1.2), ("ompi-tcp", 1.0)):
                r = b.ratio.get(peer, {}).get(top)
                lines.append(f"- tcp, {b.nranks} ranks, 64 MiB: {fmt(r)}× {peer}'s busbw (target ≥ {goal}): "
                             f"{verdict(r is not None and r >= goal)}")
                if sockets and b.nranks in sockets and peer in b.busbw and top in b.busbw[peer]:
                    room = sockets[b.nranks] / b.busbw[peer][top]
                    lines.append(f"  - the socket bound {sockets[b.nranks]:.3g} GB/s is {room:.2f}× {peer}'s busbw: "
                                 f"the most a ring all-reduce could reach")
        if b.collective != "all_reduce" and b.group == "shm" and b.best_ompi and top in b.sizes:
            r = b.best_ratio(top)
            lines.append(f"- {b.collective}, {b.nranks} ranks, 64 MiB: {fmt(r)}× the best Open MPI busbw "
                         f"(target: not below, ≥ 0.9): {verdict(r is not None and r >= 0.9)}")
    return lines
