#!/usr/bin/env bash
# deepcomm-tune on 2 namespace hosts x 2 ranks over 1 Gbit/s links: the rules it writes name, at
# each size of its own table, the fastest algorithm or the model's choice within the margin, cover
# the measured range without gaps, replace the input file's rules of the same scope and keep the
# rest; an all-reduce loading the file runs
# each size's rule (the benchmark's JSON names the plan); a rule the cost model would not choose is
# still followed, DEEPCOMM_ALGO still wins over it, and bad rules and bad invocations fail clearly.
#   usage: cluster_tune.sh DC_CLUSTER DEEPCOMM_RUN BENCH_DIR DEEPCOMM_TUNE
set -u
DC_CLUSTER=$1 launcher=$2 bench=$3 tune=$4
. "$(dirname "$0")/cluster_lib.sh"

work=$(mktemp -d)
start_cluster --rate 1gbit up 2
trap '"$DC_CLUSTER" --prefix "$prefix" down; rm -rf "$work"' EXIT
netns=$("$DC_CLUSTER" --prefix "$prefix" hosts)
run=("$launcher" --netns "$netns" --ranks-per-host 2,2 --timeout 120)
py=/usr/bin/python3

cat > "$work/base.json" <<'EOF'
{"version": 1,
 "tiers": [{"name": "veth", "bandwidth_gbps": 1, "latency_us": 60}],
 "tuning": [
  {"collective": "allreduce", "algorithm": "ring", "min_bytes": 0, "max_bytes": 1073741824, "hosts": 2, "ranks": 4},
  {"collective": "allgather", "algorithm": "ring", "min_bytes": 0, "max_bytes": 4096, "hosts": 3}]}
EOF

table=$("$tune" --bench "$bench" --topo-file "$work/base.json" -o "$work/tuned.json" --algos ring,tree,dbtree,hierarchical \
        -b 8 -e 4K -f 8 -n 10 -w 2 --rounds 2 --check -- "${run[@]}" 2>"$work/tune.err") ||
  fail "deepcomm-tune: $(cat "$work/tune.err") $table"
printf '%s\n' "$table"

# The rules against the tool's own table (each size's rule: the fastest, or the model's own choice
# measured within the 5% margin), and what the file kept.
$py - "$work/tuned.json" "$table" <<'EOF' || fail "rules: $(cat "$work/tuned.json")"
import json, sys
f = json.load(open(sys.argv[1]))
lines = sys.argv[2].splitlines()
algos = next(l for l in lines if l.split()[:1] == ["bytes"]).split()[1:-3]
rows = {}
for l in lines:
    cells = l.split()
    if cells[:1] and cells[0].isdigit():
        medians = {a: float(m) for a, m in zip(algos, cells[1:]) if m != "-"}
        fastest, model, rule = cells[-3:]
        assert fastest == min(medians, key=medians.get), l
        assert rule == fastest or (rule == model and medians[model] <= 1.05 * medians[fastest]), l
        rows[int(cells[0])] = rule
assert sorted(rows) == [8, 64, 512, 4096], rows
assert f["tiers"][0]["name"] == "veth", "tiers kept"
rules = f["tuning"]
assert {"collective": "allgather", "algorithm": "ring", "min_bytes": 0, "max_bytes": 4096, "hosts": 3} in rules, "other scope kept"
mine = [r for r in rules if r["collective"] == "allreduce"]
assert rules[:len(mine)] == mine, "the new rules come first"
assert all(r["hosts"] == 2 and r["ranks"] == 4 for r in mine), mine
assert mine[0]["min_bytes"] == 8 and mine[-1]["max_bytes"] == 4096, mine
for a, b in zip(mine, mine[1:]):
    assert b["min_bytes"] == a["max_bytes"] + 1 and b["algorithm"] != a["algorithm"], mine
for size, algo in rows.items():
    assert [r["algorithm"] for r in mine if r["min_bytes"] <= size <= r["max_bytes"]] == [algo], (size, algo, mine)
EOF

# "size:algorithm" per row of a benchmark's -J file.
plans() {
  $py - "$1" <<'EOF'
import json, sys
print(" ".join("%d:%s" % (r["size"], r["algorithm"]) for r in json.load(open(sys.argv[1]))["results"]))
EOF
}
# The same from the tuned file's all-reduce rules.
expected=$($py - "$work/tuned.json" <<'EOF'
import json, sys
rules = [r for r in json.load(open(sys.argv[1]))["tuning"] if r["collective"] == "allreduce"]
print(" ".join("%d:%s" % (s, [r["algorithm"] for r in rules if r["min_bytes"] <= s <= r["max_bytes"]][0])
               for s in (8, 64, 512, 4096)))
EOF
)
DEEPCOMM_TOPO_FILE="$work/tuned.json" "${run[@]}" "$bench/all_reduce_perf" -b 8 -e 4K -f 8 -n 2 -w 1 -J "$work/auto.json" \
  >/dev/null 2>&1 || fail "all_reduce_perf with the tuned file failed"
[ "$(plans "$work/auto.json")" = "$expected" ] || fail "the tuned run took $(plans "$work/auto.json"), the rules say $expected"

# The ring is never the model's choice for 8 B on 2 x 2; a rule makes it so, DEEPCOMM_ALGO overrides.
echo '{"version": 1, "tiers": [{"name": "veth", "bandwidth_gbps": 1, "latency_us": 60}]}' > "$work/plain.json"
DEEPCOMM_TOPO_FILE="$work/plain.json" "${run[@]}" "$bench/all_reduce_perf" -b 8 -e 8 -n 2 -w 1 -J "$work/model.json" \
  >/dev/null 2>&1 || fail "all_reduce_perf without rules failed"
[ "$(plans "$work/model.json")" != "8:ring" ] || fail "the model itself takes the ring: the next check proves nothing"
DEEPCOMM_TOPO_FILE="$work/base.json" "${run[@]}" "$bench/all_reduce_perf" -b 8 -e 8 -n 2 -w 1 -J "$work/ring.json" \
  >/dev/null 2>&1 || fail "all_reduce_perf with a ring rule failed"
[ "$(plans "$work/ring.json")" = "8:ring" ] || fail "a ring rule: $(plans "$work/ring.json")"
DEEPCOMM_ALGO=tree DEEPCOMM_TOPO_FILE="$work/base.json" "${run[@]}" "$bench/all_reduce_perf" -b 8 -e 8 -n 2 -w 1 \
  -J "$work/tree.json" >/dev/null 2>&1 || fail "all_reduce_perf with DEEPCOMM_ALGO=tree failed"
[ "$(plans "$work/tree.json")" = "8:tree" ] || fail "DEEPCOMM_ALGO=tree over a ring rule: $(plans "$work/tree.json")"

# Bad input.
sed 's/"algorithm": "ring", "min_bytes": 0, "max_bytes": 1073741824/"algorithm": "pairwise", "min_bytes": 0, "max_bytes": 1073741824/' \
  "$work/base.json" > "$work/bad.json"
out=$(DEEPCOMM_TOPO_FILE="$work/bad.json" "${run[@]}" "$bench/all_reduce_perf" -b 8 -e 8 -n 1 -w 0 2>&1) &&
  fail "a rule naming pairwise for allreduce was accepted"
printf '%s\n' "$out" | grep -q "bad.json:4: tuning\[0\].algorithm: allreduce has no algorithm \"pairwise\"" ||
  fail "bad rule message: $out"
out=$("$tune" --bench "$bench" -o "$work/x.json" 2>&1) && fail "no launcher was accepted"
printf '%s\n' "$out" | grep -q "give the launcher after --" || fail "no launcher: $out"
out=$("$tune" --bench /nonexistent -o "$work/x.json" -- "${run[@]}" 2>&1) && fail "a missing benchmark was accepted"
printf '%s\n' "$out" | grep -q "all_reduce_perf with the model.s choice failed" || fail "missing benchmark: $out"
[ -e "$work/x.json" ] && fail "a failed tuning wrote its output"
echo "PASS: rules $expected followed; a ring rule followed, DEEPCOMM_ALGO over it; bad input refused"
