# shellcheck shell=sh
# The guest side's polling helper (busybox sh, POSIX), after kselftest's
# net/lib.sh: every wait loop of the guest side calls it (the init's job
# loop, net-tests/guest/*.sh); the host side's is in qemu-net/lib.sh.
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
