"""Medians per size and medians of pairwise (same-round) ratios, as BENCHMARKING.md asks."""

import statistics


def medians(rounds, key):
    """rounds: list of {size: row}; returns {size: median of row[key]} over the rounds that have it."""
    sizes = sorted({s for r in rounds for s in r})
    return {s: statistics.median([r[s][key] for r in rounds if s in r]) for s in sizes}


def ratio_medians(ours, theirs):
    """Median over rounds of our busbw / their busbw, pairing round i with round i, per size.

    Same bytes on both sides, so the busbw ratio is their time / our time; times carry more digits
    than the busbw columns (rounded to 10 kB/s) at small sizes."""
    out = {}
    for s in sorted({s for r in ours for s in r}):
        pairs = [b[s]["time_us"] / a[s]["time_us"] for a, b in zip(ours, theirs)
                 if s in a and s in b and a[s]["time_us"] > 0]
        if pairs:
            out[s] = statistics.median(pairs)
    return out


def best_peer(peer_rounds):
    """Per size, the peer configuration with the highest median busbw: {size: name}."""
    best = {}
    for name, rounds in peer_rounds.items():
        for s, v in medians(rounds, "busbw_gbs").items():
            if s not in best or v > best[s][1]:
                best[s] = (name, v)
    return {s: name for s, (name, _) in best.items()}


def human_size(n):
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale and n % scale == 0:
            return f"{n // scale} {unit}"
    return f"{n} B"
