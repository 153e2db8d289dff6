#!/bin/sh
# Per-call cost of ESP output in the sending guest: the time from entry
# to return of esp_output() / esp6_output(), i.e. trailer path choice,
# any reallocation and copy, and the (synchronous) encryption.  Measured
# in the kernel with tracefs: kprobe + kretprobe, an inter-event
# synthetic event "esp_cost" (onmatch), and a hist trigger on it in
# 100 ns buckets.  Only these probes are active (the path counting of
# acct.sh runs in its own pass), so both kernels pay the same probe cost.
#   cost.sh start [FUNC4 [FUNC6]]
#                   define probes, synthetic event and histogram; FUNC4
#                   and FUNC6 (default esp_output, esp6_output) are the
#                   functions timed, "-" for none: any other function
#                   can be timed the same way, one at a time, to find
#                   where a cost goes (e.g. skb_cow_data -)
#   cost.sh stop    print KEY=VALUE (cost_calls, cost_p10_ns,
#                   cost_median_ns, cost_p90_ns) and remove everything
# The guest has one vCPU; the start timestamp is keyed by pid.
set -eu
T=/sys/kernel/tracing
K=$T/events/kprobes
S=$T/events/synthetic/esp_cost
B=100

# The triggers as written ("!" + the same text removes one; the text read
# back from a trigger file does not always parse, e.g. sort=lat.buckets).
SYN_TRIG="hist:keys=lat.buckets=$B:sort=lat:size=4096"
IN_TRIG='hist:keys=common_pid:ts0=common_timestamp'
out_trig() {
	echo "hist:keys=common_pid:lat=common_timestamp-\$ts0:onmatch(kprobes.cin$1).trace(esp_cost,\$lat)"
}

# untrig FILE TEXT: remove a trigger if it is there
untrig() {
	[ -f "$1" ] && grep -q '^hist' "$1" || return 0
	echo "!$2" >>"$1" || echo "cost.sh: could not remove '$2' from $1" >&2
}

cleanup() {
	untrig "$S/trigger" "$SYN_TRIG"
	for f in 4 6; do
		untrig "$K/cout$f/trigger" "$(out_trig $f)"
		untrig "$K/cin$f/trigger" "$IN_TRIG"
	done
	for e in cout4 cout6 cin4 cin6; do
		[ -d "$K/$e" ] || continue
		echo 0 >"$K/$e/enable"
	done
	if grep -q '^esp_cost' "$T/synthetic_events"; then
		echo '!esp_cost u64 lat' >>"$T/synthetic_events"
	fi
	for e in cout4 cout6 cin4 cin6; do
		if [ -d "$K/$e" ]; then echo "-:kprobes/$e" >>"$T/kprobe_events"; fi
	done
}

case "${1:-}" in
start)
	if [ ! -w "$T/kprobe_events" ] || [ ! -w "$T/synthetic_events" ]; then
		echo "no kprobe/synthetic events in tracefs"
		exit 4
	fi
	cleanup
	echo 'esp_cost u64 lat' >>"$T/synthetic_events"
	for p in "4:${2:-esp_output}" "6:${3:-esp6_output}"; do
		f=${p%%:*} fn=${p#*:}
		[ "$fn" != - ] || continue
		if ! { echo "p:kprobes/cin$f $fn" && echo "r:kprobes/cout$f $fn"; } >>"$T/kprobe_events"; then
			echo "cost.sh: cannot probe $fn (not in available_filter_functions?)" >&2
			cleanup
			exit 1
		fi
	done
	echo "$SYN_TRIG" >"$S/trigger"
	for f in 4 6; do
		[ -d "$K/cin$f" ] || continue
		echo "$IN_TRIG" >"$K/cin$f/trigger"
		out_trig $f >"$K/cout$f/trigger"
		echo 1 >"$K/cin$f/enable"
		echo 1 >"$K/cout$f/enable"
	done
	;;
stop)
	for e in cin4 cin6 cout4 cout6; do
		if [ -d "$K/$e" ]; then echo 0 >"$K/$e/enable"; fi
	done
	# "{ lat: ~ 2300-2399 } hitcount: 17", sorted by lat: percentiles
	# are the bucket midpoints where the cumulative count crosses them.
	awk -v b=$B '/^ *Dropped:/{ drop = $2 }
		/^\{ lat:/{
			lo = $4; sub(/-.*/, "", lo)
			n++; low[n] = lo + 0; c[n] = $NF + 0; tot += $NF
		}
		function pct(q,  i, s) {
			s = 0
			for (i = 1; i <= n; i++) { s += c[i]; if (s >= q * tot) return low[i] + b / 2 }
			return 0
		}
		END {
			print "cost_calls=" tot + 0
			print "cost_dropped=" drop + 0
			if (tot) printf "cost_p10_ns=%d\ncost_median_ns=%d\ncost_p90_ns=%d\n", pct(0.1), pct(0.5), pct(0.9)
		}' "$S/hist"
	cleanup
	if grep -q 'kprobes/c\(in\|out\)[46] ' "$T/kprobe_events"; then
		echo "cost.sh: probes left behind in kprobe_events" >&2
		exit 1
	fi
	;;
*)
	echo "usage: cost.sh start [FUNC4 [FUNC6]] | stop" >&2
	exit 2
	;;
esac
