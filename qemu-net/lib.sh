# shellcheck shell=bash
# Common helpers for the skb-tailroom rig.  Sourced, never executed.
#
# Settings follow strongSwan testing/testing.conf: a git-ignored
# rig.local at the top of the repository may set any of these first.
#
# Exit codes used by every rig command (also in README.md):
#   0 ok            1 test/benchmark failure   2 usage / bad input
#   3 package       4 skip (kselftest)         5 patch does not apply
#   6 build failed  7 guest did not boot/died  8 IKE not established
#   9 traffic failed (iperf3 error, zero throughput, data mismatch)

RIG_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [[ -f "$RIG_TOP/rig.local" ]]; then
	# shellcheck source=/dev/null
	. "$RIG_TOP/rig.local"
fi

: "${SKB_TAILROOM_CACHE:=${XDG_CACHE_HOME:-$HOME/.cache}/skb-tailroom}"
: "${RIG_TARBALL:=/usr/src/linux-source-6.1.tar.xz}"
: "${RIG_JOBS:=$(nproc)}"
: "${RIG_ACCEL:=tcg}"
: "${RIG_MEM:=768}"
: "${RIG_ICOUNT:=}" # TCG only: QEMU -icount SPEC, e.g. shift=0,sleep=on
: "${RIG_LINK:=}"   # tap|socket; empty = tap if the run can make it, else socket
: "${RIG_RESULTS:=$RIG_TOP/results}"
: "${RIG_PATCHES:=$RIG_TOP/patches}"
export SKB_TAILROOM_CACHE

readonly E_FAIL=1 E_USAGE=2 E_PKG=3 E_SKIP=4 E_PATCH=5 E_BUILD=6 \
	E_GUEST=7 E_IKE=8 E_TRAFFIC=9
export E_FAIL E_USAGE E_PKG E_SKIP E_PATCH E_BUILD E_GUEST E_IKE E_TRAFFIC

log() { printf '%s %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

# die CODE MESSAGE [LOGFILE]: print the message, the tail of the log
# that explains it, and exit with CODE.
die() {
	local code=$1 msg=$2 file=${3:-}
	printf 'ERROR: %s\n' "$msg" >&2
	if [[ -n "$file" && -f "$file" ]]; then
		printf -- '--- last lines of %s ---\n' "$file" >&2
		tail -n "${RIG_TAIL:-40}" "$file" >&2
		printf -- '--- end of %s ---\n' "$file" >&2
	fi
	exit "$code"
}

# Cleanup stack, one trap (strongSwan testing/scripts/function.sh).
RIG_CLEANUP=()
defer() { RIG_CLEANUP+=("$*"); }
run_cleanup() {
	local i
	for ((i = ${#RIG_CLEANUP[@]} - 1; i >= 0; i--)); do
		eval "${RIG_CLEANUP[i]}" || true
	done
	RIG_CLEANUP=()
}
trap run_cleanup EXIT
trap 'exit 130' INT TERM

# step LOGFILE DESCRIPTION CMD...: run CMD with its output in LOGFILE,
# one line on screen, a line every 60 s while it runs; returns CMD's
# status (callers die with the log, which prints its tail).
step() {
	local logf=$1 desc=$2 start rc ticker
	shift 2
	start=$(date +%s)
	mkdir -p "$(dirname "$logf")"
	printf '[ .. ] %s\n' "$desc" >&2
	(
		# The sleep must die with the ticker: an orphaned sleep would
		# hold a caller's pipe (tee, $(...)) open for up to a minute.
		trap 'kill "$s" 2>/dev/null; exit 0' TERM
		while :; do
			sleep 60 &
			s=$!
			wait "$s"
			printf '[ .. ] %s: %ds, %s\n' "$desc" \
				"$(($(date +%s) - start))" "$(progress_hint "$logf")" >&2
		done
	) >/dev/null &
	ticker=$!
	rc=0
	"$@" >"$logf" 2>&1 || rc=$?
	kill "$ticker" 2>/dev/null || true
	wait "$ticker" 2>/dev/null || true
	if ((rc == 0)); then
		printf '[ ok ] %s (%ds)\n' "$desc" "$(($(date +%s) - start))" >&2
	else
		printf '[FAIL] %s (exit %d, %ds), log: %s\n' "$desc" "$rc" \
			"$(($(date +%s) - start))" "$logf" >&2
	fi
	return "$rc"
}

# What a long step has done so far, read from its log.
progress_hint() {
	local n
	n=$(grep -cE '^  (CC|AS|LD)' "$1" 2>/dev/null || true)
	printf '%s objects built, last: %s' "${n:-0}" \
		"$(tail -n 1 "$1" 2>/dev/null | cut -c1-60)"
}

sha() { sha256sum | cut -c1-16; }
