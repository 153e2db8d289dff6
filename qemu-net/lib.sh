# shellcheck shell=bash
# Common helpers for the skb-tailroom rig.  Sourced, never executed.
#
# Settings (RIG_*), their defaults and where they come from (options,
# environment, a git-ignored rig.local, defaults): qemu-net/defaults.sh.
#
# Exit codes used by every rig command (also in README.md):
#   0 ok            1 test/benchmark failure   2 usage / bad input
#   3 package       4 skip (kselftest)         5 patch does not apply
#   6 build failed  7 guest did not boot/died  8 IKE not established
#   9 traffic failed (iperf3 error, zero throughput, data mismatch)

# (sourced once per shell: a second time would drop the cleanup stack)
[[ -z "${RIG_LIB_SH:-}" ]] || return 0
RIG_LIB_SH=1
RIG_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=qemu-net/defaults.sh
. "$RIG_TOP/qemu-net/defaults.sh"
# RIG_TARBALL and RIG_PATCHES as the user gave them (empty: they follow
# RIG_TREE, rig_tree_set below).
RIG_TARBALL_GIVEN=$RIG_TARBALL
RIG_PATCHES_GIVEN=$RIG_PATCHES
# --dry-run (pair.sh, bench.sh): print the plan, build and boot nothing.
# Set by the option only, never from the environment.
# shellcheck disable=SC2034 # read by guests.sh, link.sh and the commands
RIG_DRY_RUN=0

readonly E_FAIL=1 E_USAGE=2 E_PKG=3 E_SKIP=4 E_PATCH=5 E_BUILD=6 \
	E_GUEST=7 E_IKE=8 E_TRAFFIC=9
export E_FAIL E_USAGE E_PKG E_SKIP E_PATCH E_BUILD E_GUEST E_IKE E_TRAFFIC

log() { printf '%s %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

# die CODE MESSAGE [LOGFILE]: print the message, the tail of the log
# that explains it, and exit with CODE.  Inside a test (the test harness
# sets REASON_FILE) the message is also the test's reason.
die() {
	local code=$1 msg=$2 file=${3:-}
	printf 'ERROR: %s\n' "$msg" >&2
	[[ -z "${REASON_FILE:-}" ]] || printf '%s' "$msg" >"$REASON_FILE" || true
	if [[ -n "$file" && -f "$file" ]]; then
		printf -- '--- last lines of %s ---\n' "$file" >&2
		tail -n "$RIG_TAIL" "$file" >&2
		printf -- '--- end of %s ---\n' "$file" >&2
	fi
	exit "$code"
}

# The command line.  Every entry point defines usage(), which prints its
# usage on stdout (-h/--help: exit 0), and parses all its options before
# it does any work (the static tests run each one with --help and with
# a bad option, with the commands that do work replaced).
# usage_error MESSAGE: bad usage: the usage and MESSAGE on stderr, exit
# E_USAGE.
usage_error() {
	usage >&2
	die "$E_USAGE" "$1"
}

# opt_value OPTION ARG...: called as opt_value "$@" for an option that
# takes a value: bad usage if there is none.
opt_value() { (($# >= 2)) || usage_error "$1 needs a value"; }

# rig_option OPT VALUE...: the options the rig's commands share, each
# with a value: --accel, --link, --tree, --series, --baseline-series,
# applied and exported (children agree).  Returns 1 if OPT is none of
# them; the caller shifts OPT and, on success, VALUE.
rig_option() {
	case "$1" in
	--accel | --link | --tree | --series | --baseline-series) opt_value "$@" ;;
	*) return 1 ;;
	esac
	case "$1" in
	--accel) export RIG_ACCEL=$2 ;;
	--link) export RIG_LINK=$2 ;;
	--tree) rig_tree_set "$2" ;;
	--series) rig_series_set patched "$2" ;;
	--baseline-series) rig_series_set baseline "$2" ;;
	esac
}

# operands NAME MIN MAX ARG...: the whole command line of a command
# whose only option is -h/--help: MIN..MAX operands called NAME, set in
# the array RIG_OPERANDS; bad usage otherwise.
RIG_OPERANDS=()
operands() {
	local name=$1 min=$2 max=$3
	shift 3
	RIG_OPERANDS=()
	while (($#)); do
		case "$1" in
		-h | --help) usage; exit 0 ;;
		-*) usage_error "unknown option '$1'" ;;
		*)
			((${#RIG_OPERANDS[@]} < max)) || usage_error "at most $max $name: '$1'"
			RIG_OPERANDS+=("$1")
			;;
		esac
		shift
	done
	((${#RIG_OPERANDS[@]} >= min)) || usage_error "no $name given"
}

# rig_settings_check: the settings (options, environment, rig.local) a
# run uses make sense; called once the options are parsed, so that a typo
# stops the run before a kernel build, not after it.  --no-boot: the
# caller boots no guest (build-kernel.sh): the accelerator's device is
# not its concern.
rig_settings_check() {
	local v boots=1
	[[ "${1:-}" != --no-boot ]] || boots=0
	case "$RIG_ACCEL" in
	tcg | kvm) ;;
	*) die "$E_USAGE" "RIG_ACCEL/--accel must be tcg or kvm, not '$RIG_ACCEL'" ;;
	esac
	case "$RIG_LINK" in
	'' | auto | tap | socket) ;;
	*) die "$E_USAGE" "RIG_LINK/--link must be tap or socket (or empty for auto), not '$RIG_LINK'" ;;
	esac
	[[ -z "$RIG_ICOUNT" || "$RIG_ACCEL" == tcg ]] ||
		die "$E_USAGE" "-icount is TCG only: RIG_ICOUNT/--icount with --accel kvm"
	# KVM: the device must be there before a kernel is built for it (a
	# dry run only prints the command lines: no device needed)
	if [[ "$RIG_ACCEL" == kvm ]] && ((boots && !RIG_DRY_RUN)) && [[ ! -c "$RIG_KVM_DEV" || ! -r "$RIG_KVM_DEV" || ! -w "$RIG_KVM_DEV" ]]; then
		die "$E_USAGE" "--accel kvm needs $RIG_KVM_DEV (a character device this user can read and write): $(
			if [[ -e "$RIG_KVM_DEV" ]]; then ls -l "$RIG_KVM_DEV"; else echo "not there (no KVM on this machine, or the kvm module is not loaded)"; fi
		); use --accel tcg"
	fi
	for v in RIG_CHECK_FULL RIG_PIN; do
		[[ "${!v}" == [01] ]] || die "$E_USAGE" "$v must be 0 or 1, not '${!v}'"
	done
	for v in RIG_JOBS RIG_MEM RIG_SMP RIG_STREAMS RIG_TAIL; do
		[[ "${!v}" =~ ^[1-9][0-9]*$ ]] || die "$E_USAGE" "$v must be a positive number, not '${!v}'"
	done
	[[ "$RIG_INSN" == @(auto|0|1|cache) ]] || die "$E_USAGE" "RIG_INSN must be auto, 0, 1 or cache, not '$RIG_INSN'"
	[[ "$RIG_PERF_STAT" == @(auto|0|1) ]] || die "$E_USAGE" "RIG_PERF_STAT must be auto, 0 or 1, not '$RIG_PERF_STAT'"
}

# rig_tree_set TREE: the kernel tree every command of this run uses
# (--tree, RIG_TREE): 7.2 (mainline's stand-in, the postings' tree) ->
# patches/, 6.1 and 6.12 (the stable backports) -> patches/stable/TREE/
# (unless RIG_TARBALL/RIG_PATCHES were given); kernels are cached per
# tree in $RIG_KERNELS, under $RIG_CACHE.  Exported, so children agree.
# The first tree is the primary one: its baseline and patched kernels are
# the measured ones.
RIG_TREES="7.2 6.1 6.12"
# Trees Debian 12 does not carry, fetched from Debian's unstable suite
# (qemu-net/fetch-source.sh), at the version the rig was tested with.
RIG_TREE_PINS="7.2=7.2.13-1"
# tree_pin TREE: the pinned Debian version of TREE's linux-source (fails
# for a tree Debian 12 installs itself).
tree_pin() {
	local p
	for p in $RIG_TREE_PINS; do
		[[ "${p%%=*}" != "$1" ]] || { printf '%s\n' "${p#*=}"; return 0; }
	done
	return 1
}
rig_tree_set() {
	local pin
	case " $RIG_TREES " in
	*" $1 "*) ;;
	*) die "$E_USAGE" "tree '$1' unknown (one of: $RIG_TREES)" ;;
	esac
	RIG_TREE=$1
	RIG_TARBALL=$RIG_TARBALL_GIVEN
	if [[ -z "$RIG_TARBALL" ]]; then
		if pin=$(tree_pin "$1"); then
			RIG_TARBALL=$RIG_CACHE/debian/linux-source-$1-$pin/usr/src/linux-source-$1.tar.xz
		else
			RIG_TARBALL=/usr/src/linux-source-$1.tar.xz
		fi
	fi
	if [[ -n "$RIG_PATCHES_GIVEN" ]]; then
		RIG_PATCHES=$RIG_PATCHES_GIVEN
	elif [[ "$1" == "${RIG_TREES%% *}" ]]; then
		RIG_PATCHES=$RIG_TOP/patches
	else
		RIG_PATCHES=$RIG_TOP/patches/stable/$1
	fi
	RIG_KERNELS=$RIG_CACHE/kernels/$1
	export RIG_TREE RIG_KERNELS
}
rig_tree_set "$RIG_TREE"

# tree_others [N]: the trees of RIG_TREES other than RIG_TREE, in order,
# at most N of them (default: all), one per line.
tree_others() {
	local t n=${1:-1000}
	for t in $RIG_TREES; do
		((n > 0)) || break
		[[ "$t" == "$RIG_TREE" ]] || { printf '%s\n' "$t"; n=$((n - 1)); }
	done
}

# rig_series_set patched|baseline DIR: the series of one side of the A/B
# (--series, --baseline-series), a directory with a "series" file and its
# patches; made absolute and exported, so children agree.
rig_series_set() {
	[[ -d "$2" ]] || usage_error "series directory '$2' not found"
	if [[ "$1" == patched ]]; then
		RIG_PATCHES_GIVEN=$(realpath "$2")
		RIG_PATCHES=$RIG_PATCHES_GIVEN
		export RIG_PATCHES
	else
		RIG_BASELINE_PATCHES=$(realpath "$2")
		export RIG_BASELINE_PATCHES
	fi
}

# Polling, after kselftest net/lib.sh: the host side's one wait loop;
# everything that waits for something calls it (the guests' is
# qemu-net/guest/lib.sh).
#   loopy_wait SLEEP TIMEOUT_MS CMD...  run CMD until it succeeds (0);
#                                       SLEEP (a command, e.g. "sleep
#                                       0.05") between tries; returns 1
#                                       once TIMEOUT_MS have passed
#   slowwait TIMEOUT_S CMD...           the same every 0.1 s
# Unlike kselftest's, CMD runs in this shell, not in $(...): it may set
# variables, and a CMD that dies (guests_check_alive) ends the caller.
# CMD runs at least once; its output is not captured.
loopy_wait() {
	local sleep_cmd=$1 timeout_ms=$2 t start
	shift 2
	t=${EPOCHREALTIME/[.,]/}
	start=$((t / 1000))
	while :; do
		"$@" && return 0
		t=${EPOCHREALTIME/[.,]/}
		((t / 1000 - start < timeout_ms)) || return 1
		$sleep_cmd
	done
}

slowwait() {
	local s=$1
	shift
	loopy_wait "sleep 0.1" $((s * 1000)) "$@"
}

# pid_gone PID: PID no longer runs (a CMD for slowwait).
pid_gone() { ! kill -0 "$1" 2>/dev/null; }

# Cleanup scopes, after kselftest net/lib/sh/defer.sh, run from one EXIT
# trap (strongSwan testing/scripts/function.sh):
#   defer CMD ARG...       run CMD ARG... (quoted as given) when the scope
#                          ends; one argument alone is shell code (eval'd),
#                          e.g. defer "rm -rf '$tmp'"
#   defer_scope_push       open a scope
#   defer_scope_pop        run this scope's entries, last first, and close
#                          it (entries of outer scopes stay)
#   defer_scopes_cleanup   every scope, innermost first (the EXIT trap)
# The stack belongs to one shell process.  A subshell does not inherit the
# EXIT trap, so a defer there would never run: defer refuses it.  Run code
# that needs its own cleanup with in_child, which gives the child a stack,
# a trap and errexit of its own.
RIG_DEFER=()        # commands, as shell code
RIG_DEFER_SCOPES=() # index in RIG_DEFER where each open scope starts
RIG_DEFER_PID=$BASHPID
RIG_CHILD_PID=     # the in_child being waited for, stopped on our exit
RIG_CHILD_STATUS=  # in an in_child: the file its exit status goes to
RIG_CHILD_FILE=    # that file of the in_child being waited for
RIG_EXIT_RC=       # set when the EXIT trap runs (for deferred handlers)

# module_build KERNEL_DIR SRC_DIR OUT_DIR [MAKE ARGS...]: build the
# out-of-tree module in SRC_DIR (its Kbuild and sources, copied to
# OUT_DIR, which is emptied first) against the installed rig kernel
# KERNEL_DIR's O= dir, under the tree lock (the O= dir is shared with
# kernel builds).  Make's output on stderr; its status is returned.
module_build() {
	local kdir=$1 msrc=$2 out=$3 bdir src
	shift 3
	bdir=$(sed -n 's/^build_dir=//p' "$kdir/info")
	src=$(sed -n 's/^src=//p' "$kdir/info")
	rm -rf "$out"
	cp -r "$msrc" "$out"
	flock "$src/../.lock" make -C "$bdir" M="$out" "$@" modules >&2
}

defer() {
	local cmd
	if [[ "$RIG_DEFER_PID" != "$BASHPID" ]]; then
		printf 'ERROR: defer %s: in a subshell without a cleanup scope of its own (use in_child)\n' "$*" >&2
		return 1
	fi
	if (($# == 1)); then cmd=$1; else printf -v cmd '%q ' "$@"; fi
	RIG_DEFER+=("$cmd")
}

defer_scope_push() { RIG_DEFER_SCOPES+=("${#RIG_DEFER[@]}"); }

# defer_run_from N: run (and drop) entries N..end, last first.  A failing
# entry is reported and the others still run.
defer_run_from() {
	local i cmd rc
	for ((i = ${#RIG_DEFER[@]} - 1; i >= $1; i--)); do
		cmd=${RIG_DEFER[i]}
		unset "RIG_DEFER[i]"
		rc=0
		eval "$cmd" || rc=$?
		((rc == 0)) || printf 'WARNING: cleanup "%s" exited %d\n' "$cmd" "$rc" >&2
	done
	return 0
}

defer_scope_pop() {
	local n=${#RIG_DEFER_SCOPES[@]}
	((n > 0)) || { printf 'ERROR: defer_scope_pop without defer_scope_push\n' >&2; return 1; }
	defer_run_from "${RIG_DEFER_SCOPES[n - 1]}"
	unset "RIG_DEFER_SCOPES[n - 1]"
}

defer_scopes_cleanup() {
	while ((${#RIG_DEFER_SCOPES[@]})); do defer_scope_pop; done
	defer_run_from 0
}

# The EXIT trap: stop the child being waited for (it runs its own cleanup
# first), then every scope; the exit status is kept.  Once exiting, INT
# and TERM no longer end the shell (rig_signal): on ^C every shell of the
# run gets SIGINT and then TERMs its child, which must not cut that
# child's cleanup short.
RIG_EXITING=
rig_signal() {
	[[ -z "$RIG_EXITING" ]] || return 0
	RIG_EXITING=1
	exit "$1"
}
rig_exit() {
	RIG_EXIT_RC=$?
	RIG_EXITING=1
	set +e
	# (a signal right after the fork, before in_child has stored the pid:
	# the process substitution is then the last child, $!)
	[[ "$RIG_CHILD_PID" != pending ]] || RIG_CHILD_PID=${!:-}
	if [[ -n "$RIG_CHILD_PID" ]]; then
		kill -TERM "$RIG_CHILD_PID" 2>/dev/null
		wait "$RIG_CHILD_PID" 2>/dev/null
		# (after a wait cut short by a signal bash may no longer know the
		# process substitution and return at once: poll, 2 min at most)
		slowwait 120 pid_gone "$RIG_CHILD_PID"
	fi
	[[ -z "$RIG_CHILD_FILE" ]] || rm -f "$RIG_CHILD_FILE"
	defer_scopes_cleanup
	[[ -z "$RIG_CHILD_STATUS" ]] || echo "$RIG_EXIT_RC" >"$RIG_CHILD_STATUS"
	exit "$RIG_EXIT_RC"
}
trap rig_exit EXIT
trap 'rig_signal 130' INT
trap 'rig_signal 143' TERM

# in_child CMD...: run CMD in a child shell with errexit on, a cleanup
# stack and EXIT trap of its own (its defers run when it ends, on success,
# failure or a signal), and return its status.  Nothing CMD sets reaches
# the caller.  Why a process substitution: bash turns errexit off for the
# whole body of a function called from if/while/||/&&/!, and for every
# ( subshell ) or & job that body starts, even after "set -e" in them; a
# process substitution is parsed and run afresh, so "set -e" in it holds.
# (the static tests check this on the running bash.)  The status
# is the one the child's EXIT trap wrote to a file: "wait" on a process
# substitution once returned another status than the child's (a loaded
# "make check" recorded a test that returned 4 as failed; bash tracks
# process substitutions apart from its jobs), so wait is only how the
# caller blocks, and a child killed before its trap ran falls back to
# wait's status.
in_child() {
	local rc=0 st
	st=$(mktemp -t rig-child.XXXXXX)
	RIG_CHILD_FILE=$st RIG_CHILD_PID=pending
	: > >(
		RIG_DEFER=() RIG_DEFER_SCOPES=() RIG_DEFER_PID=$BASHPID RIG_CHILD_PID='' RIG_EXITING=''
		RIG_CHILD_STATUS=$st RIG_CHILD_FILE=
		trap rig_exit EXIT
		trap 'rig_signal 130' INT
		trap 'rig_signal 143' TERM
		set -e
		"$@" </dev/null
	)
	RIG_CHILD_PID=$!
	wait "$RIG_CHILD_PID" || rc=$?
	[[ -s "$st" ]] || slowwait 3600 pid_gone "$RIG_CHILD_PID" || true
	[[ ! -s "$st" ]] || rc=$(<"$st")
	rm -f "$st"
	RIG_CHILD_PID='' RIG_CHILD_FILE=''
	return "$rc"
}

# step LOGFILE DESCRIPTION CMD...: run CMD with its output in LOGFILE,
# one line on screen, a line every 60 s while it runs; returns CMD's
# status (callers die with the log, which prints its tail).  CMD runs with
# in_child: a shell function there (tree_extract, configure,
# build_userspace) stops at its first failing command instead of going
# on with errexit off, and its cd stays in the child.
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
	in_child "$@" >"$logf" 2>&1 || rc=$?
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
