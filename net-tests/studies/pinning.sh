#!/bin/bash
# Does pinning each guest's QEMU to a host CPU of its own (RIG_PIN=1,
# the default since this study; RIG_PIN=0 = bench --no-pin) narrow the throughput spread across boots?  A/A runs of one
# kernel (--variants baseline), unpinned and pinned in the order U P P U
# (a drift over the study does not favour one condition), HALF boots
# each, so each condition gets 2*HALF boots; then per row and condition
# the median and the spread (max-min over median, and the quartiles).
# Options: usage().
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)

usage() {
	cat <<-'EOF'
		Usage: net-tests/studies/pinning.sh OUT_DIR [HALF [ROWS]]
		Throughput spread across boots, guests' QEMU unpinned vs pinned
		(RIG_PIN=0 and 1), A/A on the baseline kernel, runs in the order
		unpinned, pinned, pinned, unpinned.
		  OUT_DIR  the four bench run folders and pinning.txt go here
		  HALF     boots per bench run (default 3: 6 per condition)
		  ROWS     bench.sh --rows (default tcp-v4-plain,tcp-v4-transport-gcm-off)
		Exit: 0 done, 2 bad usage, else a bench run's failure.
	EOF
}
case "${1:-}" in
-h | --help) usage; exit 0 ;;
'' | -*) usage >&2; exit 2 ;;
esac
out=$1 half=${2:-3} rows=${3:-tcp-v4-plain,tcp-v4-transport-gcm-off}
mkdir -p "$out"
n=0
for cond in unpinned pinned pinned unpinned; do
	n=$((n + 1))
	pin=1
	[[ "$cond" == pinned ]] || pin=0
	RIG_PIN=$pin "$top/net-tests/bench.sh" --variants baseline --pairs "$half" --rows "$rows" \
		--out "$out/$n-$cond" >"$out/$n-$cond.log" 2>&1 ||
		{ echo "bench run $n ($cond) failed: $out/$n-$cond.log" >&2; tail -n 20 "$out/$n-$cond.log" >&2; exit 1; }
done
python3 - "$out" <<'PY' | tee "$out/pinning.txt"
import glob, json, os, statistics, sys
out = sys.argv[1]
mb = {}
for f in sorted(glob.glob(out + "/*-*/runs.jsonl")):
    cond = os.path.basename(os.path.dirname(f)).split("-", 1)[1]
    for line in open(f):
        r = json.loads(line)
        if r.get("mbps") is not None:
            mb.setdefault((r["row"], cond), []).append(r["mbps"])
print("{:32} {:9} {:>5} {:>8} {:>9} {:>17}".format(
    "row", "condition", "boots", "median", "range/med", "quartiles"))
for (row, cond), v in sorted(mb.items()):
    med = statistics.median(v)
    q = statistics.quantiles(v, n=4) if len(v) > 1 else [v[0]] * 3
    print("{:32} {:9} {:5} {:8.1f} {:8.1f}% {:8.1f}-{:<8.1f}".format(
        row, cond, len(v), med, 100 * (max(v) - min(v)) / med, q[0], q[2]))
PY
