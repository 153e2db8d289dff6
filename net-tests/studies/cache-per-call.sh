# shellcheck shell=bash
# Instructions and simulated data-cache misses per call of one kernel
# function (fn= below, skb_cow_data) on the sender of one row (row=,
# tcp-v4-transport-gcm-off): the skbt_callmark
# module (net-tests/callmark-mod) marks each call's entry and return,
# and the skbt-insn and skbt-cache plugins write their counts at every
# mark; each entry/return pair is one call with its callees (plus the
# kretprobe's own work, the same on both kernels).  A body for
# qemu-net/pair.sh, under -icount as the bench's instruction phase:
#   RIG_INSN=cache RIG_ICOUNT=shift=0,sleep=on \
#     qemu-net/pair.sh --lib net-tests/lib/ipsec.sh baseline net-tests/studies/cache-per-call.sh
# (then patched).  Prints one line: calls, and per call the medians and
# means of instructions, data accesses, L1D and L2 misses; the marks in
# results/cache-per-call-VARIANT.
# shellcheck source=net-tests/lib/acct.sh
. "$RIG_TOP/net-tests/lib/acct.sh"
# shellcheck source=net-tests/lib/func.sh
. "$RIG_TOP/net-tests/lib/func.sh"
ipsec_start

# shellcheck disable=SC2154 # pair.sh's variant and kernel directory
out=$RIG_RESULTS/cache-per-call-$variant
row='tcp-v4-transport-gcm-off'
fn=skb_cow_data
[[ "$RIG_INSN" == cache ]] || die "$E_USAGE" "cache-per-call: run with RIG_INSN=cache"
mkdir -p "$out"
module_build "$kdir" "$RIG_TOP/net-tests/callmark-mod" "$GUEST_RUN/a/callmark" ||
	die "$E_BUILD" "cache-per-call: skbt_callmark.ko does not build against $kdir"
row_up "$row" >&2
row_decode "$row"
ni=$(wc -l <"$GUEST_RUN/a/insn.log") nc=$(wc -l <"$GUEST_RUN/a/cache.log")
guest_exec -t 300 a "insmod /rig/callmark/skbt_callmark.ko func=$fn &&
	iperf3 -c $ROW_PEER -n 4M -J >/rig/study-iperf.json; rc=\$?; rmmod skbt_callmark; dmesg | grep skbt_callmark; exit \$rc" >&2 ||
	die "$E_TRAFFIC" "cache-per-call: the marked transfer failed"
row_down "$row"
paste -d' ' <(tail -n +$((ni + 1)) "$GUEST_RUN/a/insn.log") <(tail -n +$((nc + 1)) "$GUEST_RUN/a/cache.log") >"$out/marks.txt"
awk -v v="$variant" -v fn="$fn" -v row="$row" '
	NR % 2 { for (i = 1; i <= 4; i++) e[i] = $i; next }
	{ n++; for (i = 1; i <= 4; i++) { d[i, n] = $i - e[i]; s[i] += $i - e[i] } }
	function med(k,   i, j, t, a) {
		for (i = 1; i <= n; i++) a[i] = d[k, i]
		for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
		return a[int((n + 1) / 2)]
	}
	END {
		if (NR % 2 || !n) { print "cache-per-call: " NR " marks, not entry/return pairs" > "/dev/stderr"; exit 1 }
		printf "cache-per-call %s %s %s: %d calls; per call median/mean: instructions %d/%.0f, data accesses %d/%.1f, L1D misses %d/%.2f, L2 misses %d/%.2f\n", v, row, fn, n, med(1), s[1] / n, med(2), s[2] / n, med(3), s[3] / n, med(4), s[4] / n
	}' "$out/marks.txt" | tee "$out/summary.txt"
