# shellcheck shell=sh
# The guest side's helpers (busybox sh, POSIX): the polling helper and
# the KTAP writer; the host side's are in qemu-net/lib.sh.
#
# Polling, after kselftest's net/lib.sh: every wait loop of the guest
# side calls it (the init's job loop, the jobs' scripts).
#   loopy_wait SLEEP TIMEOUT_MS CMD...  run CMD until it succeeds (0);
#                                       SLEEP (a command, e.g. "sleep
#                                       0.1") between tries; returns 1
#                                       once TIMEOUT_MS have passed
#   slowwait TIMEOUT_S CMD...           the same every 0.1 s
# CMD runs in this shell, at least once, its output not captured.  The
# clock is /proc/uptime (the guest's: under QEMU -icount, virtual time).
# Sourced by the init from /src (the repository, read-only) and by the
# guest scripts from their own path: . "${0%/*}/../../qemu-net/guest/lib.sh"
# (no local in POSIX sh: globals prefixed rig_).
#
# KTAP version 1, after kselftest's ktap_helpers.sh: every guest script
# that reports tests prints them with these, and exits with kselftest's
# codes only: 0 pass, 1 fail, 4 skip (never 2 or 3: XFAIL/XPASS there).
#   ktap_header                 "KTAP version 1"
#   ktap_plan N                 "1..N"
#   ktap_ok NAME                "ok N NAME"
#   ktap_not_ok NAME [REASON]   "not ok N NAME # REASON"
#   ktap_skip NAME REASON       "ok N NAME # SKIP REASON"
#   ktap_skip_all REASON        header if not printed, "1..0 # SKIP
#                               REASON", exit 4
#   ktap_finish [skip]          "# Totals: pass:P fail:F skip:S", exit 1
#                               if one failed, else 4 if all skipped
#                               (or "skip" given), else 0
# A test's own nested KTAP (KUnit's) goes just before its result line,
# indented four spaces.
KSFT_PASS=0
KSFT_FAIL=1
KSFT_SKIP=4
rig_ktap_n=0 rig_ktap_pass=0 rig_ktap_fail=0 rig_ktap_skip=0 rig_ktap_hdr=0

# rig_now: milliseconds since boot, in rig_now.
rig_now() {
	read -r rig_now _ </proc/uptime
	rig_frac=${rig_now#*.}
	rig_now=$((${rig_now%.*} * 1000 + ${rig_frac#0} * 10))
}

loopy_wait() {
	rig_lw_sleep=$1 rig_lw_ms=$2
	shift 2
	rig_now
	rig_lw_start=$rig_now
	while :; do
		"$@" && return 0
		rig_now
		[ $((rig_now - rig_lw_start)) -lt "$rig_lw_ms" ] || return 1
		$rig_lw_sleep
	done
}

slowwait() {
	rig_sw_s=$1
	shift
	loopy_wait "sleep 0.1" $((rig_sw_s * 1000)) "$@"
}

ktap_header() {
	rig_ktap_hdr=1
	echo "KTAP version 1"
}

ktap_plan() {
	echo "1..$1"
}

ktap_ok() {
	rig_ktap_n=$((rig_ktap_n + 1)) rig_ktap_pass=$((rig_ktap_pass + 1))
	echo "ok $rig_ktap_n $1"
}

ktap_not_ok() {
	rig_ktap_n=$((rig_ktap_n + 1)) rig_ktap_fail=$((rig_ktap_fail + 1))
	echo "not ok $rig_ktap_n $1${2:+ # $2}"
}

ktap_skip() {
	rig_ktap_n=$((rig_ktap_n + 1)) rig_ktap_skip=$((rig_ktap_skip + 1))
	echo "ok $rig_ktap_n $1 # SKIP ${2:-no reason given}"
}

ktap_skip_all() {
	[ "$rig_ktap_hdr" = 1 ] || ktap_header
	echo "1..0 # SKIP $1"
	exit $KSFT_SKIP
}

# ktap_finish [skip]: the totals line, then exit as kselftest does: fail
# if any case failed, else skip if nothing passed but something skipped,
# else pass; "skip" makes a document without failures a skip even if
# some cases passed (the caller decided one skip decides).
ktap_finish() {
	echo "# Totals: pass:$rig_ktap_pass fail:$rig_ktap_fail skip:$rig_ktap_skip"
	[ "$rig_ktap_fail" -eq 0 ] || exit $KSFT_FAIL
	[ "${1:-}" != skip ] || exit $KSFT_SKIP
	[ "$rig_ktap_pass" -gt 0 ] || [ "$rig_ktap_skip" -eq 0 ] || exit $KSFT_SKIP
	exit $KSFT_PASS
}
