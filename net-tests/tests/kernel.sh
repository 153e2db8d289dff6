# shellcheck shell=bash
# Group "kernel": what the series claims, checked in the guests.
#  - KUnit suites the series adds (patched kernel)
#  - ksize_test.ko, an out-of-tree module built against the tree, insmod'ed
#    in a guest: ksize() is exported and equals kmalloc_size_roundup()
#  - key zeroing on free (net-tests/guest/zeroing-test.sh): must FAIL on
#    the baseline kernel (the keys reach kfree() unwiped) and pass on the
#    patched one, so the test is seen to be able to fail.
#  - the benchmark's instruments: path accounting adds up, the cost pass
#    times every esp_output() call, the service-demand pass runs its
#    fixed work mix (one ACK per segment, every segment seen by TCP).
#
# Deliberate breakages seen to fail (static group; no guest run):
#  - the old blind guard, grep 'probe saw nothing\|blind': a zeroing-test.sh
#    run where no probe saw a free passed t_zeroing 1
#    (static-zeroing-blind-guard: the real zeroing-test.sh on a fake
#    tracefs and a fake ip).
#  - the marker renamed in zeroing-test.sh only: the same.
#  - no unwiped-verdict requirement: a guest job failing with exit 1 and
#    no verdict passed zeroing-fails-on-baseline.
#  - "ipsec_start || true" in kernel_boot (as kernel.sh:123 was):
#    static-group-setup-failures saw boot-baseline recorded ok and the
#    tests run.

# Deliberate breakage seen to fail (kernel group, real guests):
#  - the segc trigger's filter inverted in guest/acct.sh ("if features &
#    1": only skb_segment calls with SG, none on ESP GSO):
#    acct-baseline-gso-segment-copies failed with "gso-segment-copies
#    does not hold: ... skb_segment copies 0 B per ESP packet".
#  - DEMAND_QUICKACK=0 (GRO left on, delayed ACKs) for t_demand on
#    the v6 tunnel row: failed with "receiver TCP saw 2130 segments of
#    6223 sent (GRO batching them?)".
#  - skbt-mark's marker changed by one byte (the plugin sees no mark):
#    demand-pass-acks-every-segment failed with "the skbt-insn plugin did
#    not write two marks per guest" and demand-pass-counts-instructions
#    with "no instruction counts in the demand record".
#  - the plugin's inline add of 0 instead of the block's instruction
#    count: demand-pass-counts-instructions failed with "instructions
#    per KB out of range: sender 0, receiver 0".

[[ -z "${RIG_T_KERNEL_SH:-}" ]] || return 0
RIG_T_KERNEL_SH=1
# shellcheck source=net-tests/lib/tap.sh
. "$RIG_TOP/net-tests/lib/tap.sh"
# shellcheck source=net-tests/lib/acct.sh
. "$RIG_TOP/net-tests/lib/acct.sh"
# shellcheck source=qemu-net/tree.sh
. "$RIG_TOP/qemu-net/tree.sh"

# row_pass acct_row|cost_row ROW FILE: the row's SA up, one measuring
# pass of its fixed transfer into FILE (shown in the log), SA down.
row_pass() {
	# The patched kernel loads esp{4,6}_offload with the SA unless told
	# not to: an "-off" row must say so (ipsec_row_up switches them: this
	# test's shell has not).
	ipsec_row_up "$2" >&2 || { reason "SA not up"; return 1; }
	# (also when the pass fails: the next row must not find this SA,
	# which strongSwan would keep as a duplicate, failing that row too)
	# (a global of the test's own shell: the cleanup runs after return)
	ROW_PASS_UP=1
	defer '((ROW_PASS_UP == 0)) || ipsec_down >&2'
	"$1" "$2" "$3"
	sed 's/^/    /' "$3" >&2
	# shellcheck disable=SC2034 # read by the deferred teardown
	ROW_PASS_UP=0
	ipsec_down >&2 || { reason "teardown left SAs (next rows would run on them)"; return 1; }
}

# t_acct VARIANT ROW CHECK: the accounting of one fixed transfer must add
# up (in-place + page-frag + private head + cow == ESP packets, every
# xfrm_stat error 0, all B copied not below the copies only it sums)
# and CHECK (an awk condition on the per-packet ratios) must hold:
# baseline-cows; patched-one-copy (series v5: skb_cow_data() still
# takes every clone, but copies it once into a head it allocates
# itself: as many of its own kmalloc_reserve() heads as ESP packets,
# none from pskb_expand_head(), and the IV generator copies nothing);
# patched-one-copy-2k (that, with heads of at most 2 KiB: the IPv6
# tunnel row, whose 1,4xx B segments took 4 KiB heads from
# pskb_expand_head()'s "eat + 128"); gso-segment-copies (skb_segment()
# without SG copies > 1,000 B per ESP packet: the ESP GSO rows, ~1,400
# B measured on 6.1 and 6.12, tap and socket link) or any.
t_acct() {
	local cond=$3 f=$CHECK_DIR/acct-$1-$2.txt
	row_pass acct_row "$2" "$f" || return
	awk -F= -v cond="$cond" '{v[$1]=$2}
	END {
		e = v["esp_packets"]
		if (e < 100) { print "only " e+0 " ESP packets counted"; exit 1 }
		if (v["inplace"] < 0 || v["pagefrag"] < 0 ||
		    v["inplace"] + v["pagefrag"] + v["privhead"] + v["cow"] != e) {
			printf "paths do not add up: in-place %d + page-frag %d + private head %d + cow %d != %d ESP packets\n",
				v["inplace"], v["pagefrag"], v["privhead"], v["cow"], e; exit 1 }
		if (v["xfrm_stat_errors"] != 0) { print "xfrm_stat errors: " v["xfrm_stat_errors"]; exit 1 }
		if (v["tcp_outsegs"] + v["udp_outdatagrams"] + v["udp6_outdatagrams"] > e + 50) {
			print "fewer ESP packets than segments sent"; exit 1 }
		c = v["cow"] / e; p = v["pagefrag"] / e; i = v["inplace"] / e; h = v["privhead"] / e
		sb = v["segment_copied_bytes"] / e
		hc = v["head_allocs.skb_cow_data"] / e; hx = v["head_allocs.pskb_expand_head"] / e
		hb = v["head_allocs.skb_cow_data"] ? v["head_bytes.skb_cow_data"] / v["head_allocs.skb_cow_data"] : 0
		one = (cond ~ /^patched-one-copy/)
		ok = (cond == "baseline-cows") ? (c > 0.9 && hx > 0.9) : \
		     one ? (c > 0.9 && hc > 0.9 && hx < 0.01 && (cond != "patched-one-copy-2k" || hb <= 2048)) : \
		     (cond == "gso-segment-copies") ? (sb > 1000) : 1
		if (!ok) { printf "%s does not hold: cow %.3f private head %.3f page-frag %.3f in-place %.3f per packet, heads from skb_cow_data %.3f (%.0f B each) and pskb_expand_head %.3f per packet, skb_segment copies %.0f B per ESP packet\n", cond, c, h, p, i, hc, hb, hx, sb; exit 1 }
		# all B copied is every counted copy: never less than its parts
		# that no system-wide helper sees
		if (v["all_copied_bytes"] < v["segment_copied_bytes"] + v["geniv_copied_bytes"]) {
			printf "all_copied_bytes %d < segment %d + geniv %d\n", v["all_copied_bytes"], v["segment_copied_bytes"], v["geniv_copied_bytes"]; exit 1 }
		# The copy of the clone has room for the trailer, so ESP
		# encrypts in place: the IV generator copies nothing (16 B
		# allowed: the AD of an out-of-place request).
		g = v["geniv_copied_bytes"] / e
		if (one && g > 16) {
			printf "IV generator still copies %.0f B per ESP packet (AD only expected)\n", g; exit 1 }
	}' "$f" >"$f.verdict" || { reason "$(cat "$f.verdict")"; return 1; }
}

# t_cost VARIANT ROW: the benchmark's cost pass (guest/cost.sh) must time
# every esp_output() call of a fixed transfer: enough calls, none
# dropped by the histogram, ordered percentiles.
t_cost() {
	local f=$CHECK_DIR/cost-$1-$2.txt
	row_pass cost_row "$2" "$f" || return
	awk -F= '{v[$1]=$2}
	END {
		n = v["cost_calls"] + 0
		if (n < 100) { print "only " n " esp_output() calls timed"; exit 1 }
		if (v["cost_dropped"] != 0) { print v["cost_dropped"] " samples dropped by the histogram"; exit 1 }
		if (!(0 < v["cost_p10_ns"] && v["cost_p10_ns"] <= v["cost_median_ns"] && v["cost_median_ns"] <= v["cost_p90_ns"])) {
			print "percentiles out of order: " v["cost_p10_ns"] " " v["cost_median_ns"] " " v["cost_p90_ns"]; exit 1 }
	}' "$f" >"$f.verdict" || { reason "$(cat "$f.verdict")"; return 1; }
}

# t_demand VARIANT ROW: the benchmark's service-demand pass runs a fixed
# work mix (lib/acct.sh): both guests' busy time read around the
# transfer by the guests themselves, the receiver's TCP sees every
# segment the sender sent (GRO off on b: tunnel mode's gro_cells would
# batch them) and ACKs each one (quickack route on b, and on 6.7+ no ACK
# deferred to release_sock(): tcp_backlog_ack_defer=0; with it at its
# default, 6.12 sent 5,518 ACKs for 6,220 segments).  "Each one" within
# what the kernel merges anyway: 6.1 answered 0.995-0.999 ACKs per
# segment in three runs, 6.12 0.887 with the deferral and 0.903 without
# it in the CI run of stop 36 (the missing ACKs not yet explained: the
# candidate is tcp_add_backlog() coalescing segments queued while the
# reader holds the socket, which TcpExtTCPBacklogCoalesce would count;
# not measured).  Delayed ACKs (no quickack route) answer at most one
# per two full segments, so the bound is 0.75.  A small transfer
# (DEMAND_TCP_BYTES 8M); without -icount the busy times are ns, on 6.x:
# 7.2's /proc/timer_list no longer prints tick-sched's idle_sleeptime and
# iowait_sleeptime, so there the busy time is /proc/stat's ticks only.
t_demand() {
	local f=$CHECK_DIR/demand-$1-$2.txt ns=1
	[[ "$RIG_TREE" != [7-9].* ]] || ns=0
	DEMAND_TCP_BYTES=8M row_pass demand_row "$2" "$f" || return
	awk -F= -v ns="$ns" '{v[$1]=$2}
	END {
		if (v["bytes_sent"] != 8388608 || v["bytes"] < 8000000) {
			print "transfer: " v["bytes_sent"] + 0 " B sent, " v["bytes"] + 0 " B received (8 MiB expected)"; exit 1 }
		if (ns && !(v["snd_busy_ns"] > 0 && v["rcv_busy_ns"] > 0)) {
			print "no busy time read on both sides: snd " v["snd_busy_ns"] + 0 " ns, rcv " v["rcv_busy_ns"] + 0 " ns"; exit 1 }
		if (!ns && !(v["snd_ticks"] > 0 && v["rcv_ticks"] > 0)) {
			print "no busy ticks read on both sides: snd " v["snd_ticks"] + 0 ", rcv " v["rcv_ticks"] + 0; exit 1 }
		so = v["snd_segs_out"]; ri = v["rcv_segs_in"]; ro = v["rcv_segs_out"]
		if (so < 5000 || ri < 0.95 * so) {
			printf "receiver TCP saw %d segments of %d sent (GRO batching them?)\n", ri, so; exit 1 }
		if (ro < 0.75 * ri) {
			printf "receiver sent %d segments (ACKs) for %d received: not one ACK per segment\n", ro, ri; exit 1 }
	}' "$f" >"$f.verdict" || { reason "$(cat "$f.verdict")"; return 1; }
}

# t_demand_insn VARIANT ROW: with the skbt-insn plugin (the baseline
# boot loads it under TCG with one vCPU) the demand pass of t_demand also
# counted each guest's instructions between its marks: both counts there
# and per KB in a plausible range (an ESP TCP row: ~20,000 per KB on
# either side under TCG; a count of nothing, or of the whole boot, is
# far outside).  Skipped, saying why, when the plugin could not be used.
t_demand_insn() {
	local f=$CHECK_DIR/demand-$1-$2.txt
	[[ -f "$GUEST_RUN/a/insn.log" ]] || { reason "the skbt-insn plugin needs TCG and one vCPU (RIG_ACCEL=$RIG_ACCEL RIG_SMP=$RIG_SMP)"; return 4; }
	[[ -f "$f" ]] || { reason "no demand record ($f): demand-pass-acks-every-segment did not run"; return 1; }
	awk -F= '{v[$1]=$2}
	END {
		if (!("snd_insn" in v && "rcv_insn" in v)) { print "no instruction counts in the demand record"; exit 1 }
		s = v["snd_insn"] / (v["bytes_sent"] / 1024); r = v["rcv_insn"] / (v["bytes"] / 1024)
		if (!(2000 < s && s < 200000 && 2000 < r && r < 200000)) {
			printf "instructions per KB out of range: sender %.0f, receiver %.0f (2,000-200,000)\n", s, r; exit 1 }
	}' "$f" >"$f.insn-verdict" || { reason "$(cat "$f.insn-verdict")"; return 1; }
}

# kunit_modules: the KUnit modules the patched series adds, as its config
# fragment names them ("Module NAME.ko" in configs/series.config, or the
# series directory's own series.config).
# Fails, saying so, when the fragment names none: nothing to run is no pass.
kunit_modules() {
	local cfg mods=
	cfg=$(series_config "$RIG_PATCHES")
	[[ -z "$cfg" ]] || mods=$(grep -o 'Module [a-z0-9_]*\.ko' "$cfg" | sed 's/^Module //; s/\.ko$//')
	if [[ -n "$mods" ]]; then
		printf '%s\n' "$mods"
		return
	fi
	echo "no KUnit module named in the series' config fragment (${cfg:-none})"
	return 1
}

t_ksize_module_build() {
	local tmp=$CHECK_DIR/ksize-mod
	module_build "$RIG_KERNELS/patched" "$RIG_TOP/net-tests/ksize-mod" "$tmp" ||
		{ reason "ksize_test.ko does not build against $(sed -n 's/^build_dir=//p' "$RIG_KERNELS/patched/info")"; return 1; }
	cp "$tmp/ksize_test.ko" "$GUEST_RUN/a/"
}

# The module's KTAP (its last "KTAP version 1" in the guest's dmesg on,
# timestamps cut, other kernel messages left out) is the test's subtest.
t_ksize_module_load() {
	local out rc=0 f=$GUEST_RUN/a/ksize-dmesg.txt
	guest_exec a "insmod /rig/ksize_test.ko; rc=\$?; dmesg >/rig/ksize-dmesg.txt; exit \$rc" >&2 || rc=$?
	out=$(sed -E 's/^\[[ 0-9.]+\] //' "$f" | tac | sed '/^KTAP version 1$/q' | tac |
		grep -E '^(KTAP version |1\.\.[0-9]|# |ok |not ok |    )') || true
	printf '%s\n' "$out" >&2
	subtest <<<"$out"
	((rc == 0)) || { reason "insmod ksize_test.ko failed: ksize() != kmalloc_size_roundup() somewhere"; return 1; }
	grep -qE '^ok [0-9]+ ksize_test$' <<<"$out" || { reason "insmod ksize_test.ko passed without the module's verdict"; return 1; }
}

# guest_ktap GUEST_EXEC-ARGS...: run a kselftest-speaking guest script
# (guest_exec [-t S] GUEST CMD); its output goes to the log, to GUEST_OUT
# and, as KTAP, to the test's subtest; the return is its exit status read
# as kselftest's (ksft_status): 0, 4, or 1 for any other (an exit 2 or 3
# is no pass).  Its own exit status in guest_rc.
guest_rc=
guest_ktap() {
	local out
	guest_rc=0
	out=$(guest_exec "$@") || guest_rc=$?
	printf '%s\n' "$out" >&2
	subtest <<<"$out"
	GUEST_OUT=$out
	case "$(ksft_status "$guest_rc")" in
	ok) return 0 ;;
	skip) return 4 ;;
	*) return 1 ;;
	esac
}
GUEST_OUT=

t_kunit() {
	local rc=0
	guest_ktap a "$G/kunit.sh $*" || rc=$?
	case "$rc" in
	0) ;;
	4) reason "KUnit module not in this kernel"; return 4 ;;
	*) reason "KUnit suite failed (kunit.sh exited $guest_rc)"; return 1 ;;
	esac
}

# zeroing-test.sh marks the verdict of an object no probe saw freed with
# this string (its BLIND_MARK): "not ok N DESC # ZT-BLIND-PROBE: ...".
ZEROING_BLIND_MARK=ZT-BLIND-PROBE
zeroing_blind() { grep -qE "^not ok [0-9]+ .* # $ZEROING_BLIND_MARK: " <<<"$1"; }
# ... and that of a key seen at kfree() unwiped with this text.
zeroing_unwiped() { grep -qE '^not ok [0-9]+ .* # marker reached kfree\(\) unwiped [0-9]+ time\(s\)$' <<<"$1"; }

# t_zeroing WANT: run zeroing-test.sh in guest a; WANT is its expected
# exit status (1 on baseline, 0 on patched).
t_zeroing() {
	local want=$1 out rc=0
	guest_ktap -t 120 a "$G/zeroing-test.sh" || rc=$?
	out=$GUEST_OUT
	if ((rc == 4)); then reason "zeroing test skipped in the guest"; return 4; fi
	if ((guest_rc != want)); then
		reason "zeroing-test.sh exited $guest_rc, expected $want"
		return 1
	fi
	# On the baseline the failures must be the unwiped keys, not a blind
	# probe, nor a job that exited 1 for another reason; on the patched
	# kernel the exit 0 must come with verdicts.
	if ((want == 1)) && zeroing_blind "$out"; then
		reason "baseline failure is a blind probe, not an unwiped key"
		return 1
	fi
	if ((want == 1)) && ! zeroing_unwiped "$out"; then
		reason "zeroing-test.sh exited 1 without an unwiped-key verdict"
		return 1
	fi
	if ((want == 0)) && ! grep -qE '^ok [0-9]+ ' <<<"$out"; then
		reason "zeroing-test.sh exited 0 without a verdict"
		return 1
	fi
}

# The ipsec posting's kselftest (tools/testing/selftests/net/
# xfrm_esp_offload.sh): its cases, each a fix of the posting.
SELFTEST=net/xfrm_esp_offload.sh
SELFTEST_CASES="tfc_ipv4_ping tfc_ipv4_tcp tfc_ipv6_ping tfc_ipv6_tcp nested_gro lifetime_packets"

# selftest_stage DIR: the kselftest and the helpers it sources (those the
# tree has: net/lib.sh and kselftest/ktap_helpers.sh from 6.8 on), from
# the cached tree's patched branch, under DIR as in the tree.
selftest_stage() {
	local src f
	src=$(tree_ensure) || return
	for f in "$SELFTEST" net/lib.sh kselftest/ktap_helpers.sh; do
		git -C "$src" cat-file -e "patched:tools/testing/selftests/$f" 2>/dev/null || continue
		mkdir -p "$1/$(dirname "$f")"
		git -C "$src" show "patched:tools/testing/selftests/$f" >"$1/$f" || return
	done
	[[ -s "$1/$SELFTEST" ]] || { echo "$SELFTEST is not in the patched branch of $src" >&2; return 1; }
}

# t_selftest WANT: run the kselftest in guest a; WANT "pass" (the
# patched kernel: every case ok) or "fail" (the baseline: every case not
# ok, so each is seen to fail without its fix; a skip is neither).
t_selftest() {
	local want=$1 c bad=''
	selftest_stage "$GUEST_RUN/a/selftests" || { reason "kselftest not staged"; return 1; }
	guest_ktap -t 600 a "cd /rig/selftests/${SELFTEST%/*} && bash ./${SELFTEST#*/}" || true
	for c in $SELFTEST_CASES; do
		if [[ "$want" == pass ]]; then
			grep -qE "^ok [0-9]+ $c\$" <<<"$GUEST_OUT" || bad+=" $c"
		else
			grep -qE "^not ok [0-9]+ $c\$" <<<"$GUEST_OUT" || bad+=" $c"
		fi
	done
	[[ -z "$bad" ]] || { reason "cases that did not $want:$bad (kselftest exited $guest_rc)"; return 1; }
}

# t_offload_semantics: the autoload RFC's claims in guest a (patched
# kernel): one modprobe per family when the module is missing, and what
# POSTROUTING and tc egress see without and with the module
# (net-tests/guest/offload-semantics.sh).
t_offload_semantics() {
	local rc=0
	guest_ktap -t 300 a "$G/offload-semantics.sh" || rc=$?
	case "$rc" in
	0) ;;
	4) reason "offload-semantics.sh skipped in the guest"; return 4 ;;
	*) reason "offload-semantics.sh exited $guest_rc"; return 1 ;;
	esac
}

# kernel_boot VARIANT: the guest pair on that kernel, charon and iperf3
# up, offsets for the accounting probes in place (check_setup: the group's).
# The baseline pair loads the skbt-insn plugin where it can (TCG, one
# vCPU) for demand-pass-counts-instructions.
kernel_boot() {
	local insn=$RIG_INSN
	[[ "$1" != baseline || "$RIG_ACCEL" != tcg || "$RIG_SMP" != 1 ]] || insn=1
	RIG_INSN=$insn guests_start "$CHECK_DIR/kernel-$1" "$RIG_KERNELS/$1"
	ipsec_start
	acct_prepare "$RIG_KERNELS/$1"
}

# cache_boot: the baseline pair with both QEMU plugins (RIG_INSN=cache:
# skbt-insn and skbt-cache), for the cache model's known answer; under
# -icount as the instruction phase, so that the timer interrupts
# between two marks follow the guest's instructions, not the host's
# load.
cache_boot() {
	RIG_ICOUNT=$BENCH_ICOUNT RIG_INSN=cache guests_start "$CHECK_DIR/kernel-cache" "$RIG_KERNELS/baseline"
}

# t_cache_known_answer: skbt-walk reads one byte per 64-byte line of a
# buffer, 262,144 reads between two marks in each case, and the
# skbt-cache model (L1D 32 KiB, L2 1 MiB, LRU) must count what LRU
# gives: a 16 KiB buffer misses nowhere, a 256 KiB one misses L1D on
# every read and L2 never, an 8 MiB one misses both on every read.
# Allowed: what else the guest does between the marks, up to 25 % of
# the reads in accesses and 5 % in misses (timer interrupts: 2,000-17,000
# accesses and up to ~600 L1D misses measured on 6.1 and 6.12; 7.2.13's
# minimal kernel: 41,700 and 49,000 accesses, 1,385 L1D misses).
t_cache_known_answer() {
	local f=$GUEST_RUN/a/cache.log c kib passes want n d got reads=262144 rc wrong=()
	[[ -f "$f" ]] || { reason "no cache.log: the skbt-cache plugin did not load (see $GUEST_RUN/a/qemu.log)"; return 1; }
	for c in "16 1024 none" "256 64 l1d" "8192 2 both"; do
		read -r kib passes want <<<"$c"
		n=$(wc -l <"$f")
		guest_exec a "/src/net-tests/tools/skbt-walk $kib $passes" >&2 ||
			{ reason "skbt-walk $kib $passes failed in guest a"; return 1; }
		d=$(mark_deltas "$f" "$n") || { reason "skbt-walk $kib KiB: no two marks in cache.log"; return 1; }
		rc=0
		got=$(awk -v reads="$reads" -v want="$want" -v kib="$kib" -v d="$d" '
			function near(x, w) { return w ? (x >= w && x <= w * 1.05) : x <= reads * 0.05 }
			function within(x) { return x >= reads && x <= reads * 1.25 }
			BEGIN {
				split(d, c, " "); a = c[1]; l1 = c[2]; l2 = c[3]
				printf "%d KiB: %d accesses, %d L1D misses, %d L2 misses (reads %d; want misses in %s)\n", kib, a, l1, l2, reads, want
				exit !(within(a) && near(l1, want == "none" ? 0 : reads) && near(l2, want == "both" ? reads : 0))
			}') || rc=$?
		printf '%s\n' "$got" >&2
		((rc == 0)) || wrong+=("$got")
	done
	((${#wrong[@]} == 0)) || { reason "${wrong[*]}"; return 1; }
}

group_kernel() {
	# One cleanup scope per boot: popping it stops this boot's guests and
	# nothing the group deferred before.
	defer_scope_push
	check_setup boot-baseline kernel_boot baseline
	check acct-adds-up-baseline-tcp-cows t_acct baseline tcp-v4-transport-gcm-off baseline-cows
	check acct-adds-up-baseline-udp t_acct baseline udp-v6-tunnel-sha-off any
	check acct-baseline-gso-segment-copies t_acct baseline tcp-v4-transport-gcm-on gso-segment-copies
	check cost-pass-times-every-call t_cost baseline tcp-v6-transport-gcm-off
	check demand-pass-acks-every-segment t_demand baseline tcp-v6-tunnel-gcm-off
	check demand-pass-counts-instructions t_demand_insn baseline tcp-v6-tunnel-gcm-off
	check zeroing-fails-on-baseline t_zeroing 1
	check kselftest-esp-offload-fails-on-baseline t_selftest fail
	defer_scope_pop
	if [[ "$RIG_ACCEL" == tcg ]]; then
		defer_scope_push
		check_setup boot-cache cache_boot
		check cache-plugin-known-answer t_cache_known_answer
		defer_scope_pop
	else
		result cache-plugin-known-answer 4 "the skbt-cache plugin is TCG's (RIG_ACCEL=$RIG_ACCEL)"
	fi
	defer_scope_push
	check_setup boot-patched kernel_boot patched
	# (first: an "-off" row below makes the module's load fail, which
	# the patched kernel remembers until it reboots)
	check autoload-semantics t_offload_semantics
	check acct-adds-up-patched-tcp-one-copy t_acct patched tcp-v4-transport-gcm-off patched-one-copy
	check acct-adds-up-patched-tcp6-one-copy-2k t_acct patched tcp-v6-tunnel-sha-off patched-one-copy-2k
	check zeroing-passes-on-patched t_zeroing 0
	local m mods
	mods=$(kunit_modules) || { result kunit 1 "$mods"; mods=; }
	for m in $mods; do
		check "kunit-$m" t_kunit "$m"
	done
	if check_ok ksize-module-build t_ksize_module_build; then
		check ksize-module-insmod t_ksize_module_load
	else
		result ksize-module-insmod 4 "module did not build"
	fi
	check kselftest-esp-offload-passes-on-patched t_selftest pass
	defer_scope_pop
}
