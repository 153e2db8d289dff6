# shellcheck shell=bash
# The host side's KTAP writer (the guest side's: qemu-net/guest/lib.sh).
# KTAP version 1 (kselftest vocabulary: a test returns 0 pass, 1 fail,
# 4 skip; skips are printed "# SKIP", never "ok" alone).  Each group runs
# in a child shell and each test in a child of it (in_child: errexit on,
# own cleanup scope); each result is a record
#   STATUS<TAB>NAME<TAB>REASON        STATUS: ok|fail|skip
# appended to $TAP_RECORDS, and the runner prints them (tap_print).  A
# test may also record the KTAP its guest script or module printed
# (subtest): records
#   sub<TAB>NAME<TAB>LINE             one line of NAME's subtest
# just before NAME's result, printed indented under it, as KTAP nests:
#       KTAP version 1
#       # Subtest: NAME
#       1..2
#       ok 1 first
#       not ok 2 second # reason
#   not ok 7 NAME # reason
# Every KTAP line of the rig's shell scripts comes from ktap_line (host)
# or ktap_* (guest, qemu-net/guest/lib.sh).
[[ -z "${RIG_TAP_SH:-}" ]] || return 0
RIG_TAP_SH=1
# in_child, defer (and the settings)
# shellcheck source=qemu-net/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../qemu-net/lib.sh"

# ktap_line STATUS N NAME [REASON]: one result line (STATUS ok|fail|skip).
ktap_line() {
	local why=${4:-}
	why=${why//$'\n'/ }
	case "$1" in
	ok) printf 'ok %s %s\n' "$2" "$3" ;;
	skip) printf 'ok %s %s # SKIP %s\n' "$2" "$3" "${why:-no reason given}" ;;
	*) printf 'not ok %s %s%s\n' "$2" "$3" "${why:+ # $why}" ;;
	esac
}

# ksft_status RC: a kselftest-speaking script's exit status as a result
# status: 0 ok, 4 skip, anything else fail (2 and 3, kselftest's XFAIL and
# XPASS, are not verdicts of the rig's scripts: a shell error exits 2).
ksft_status() {
	case "$1" in
	0) echo ok ;;
	4) echo skip ;;
	*) echo fail ;;
	esac
}

# subtest [FILE]: record the KTAP document in FILE (default stdin), the
# output of the current test's guest script or module, as that test's
# subtest.  Lines before its "KTAP version"/"TAP version" line are left
# out (make's or dmesg's); the version line becomes "KTAP version 1" and
# "# Subtest: NAME" follows it.  Without a version line, nothing is kept.
TAP_SUBFILE=
TAP_NAME=
subtest() {
	[[ -n "$TAP_SUBFILE" ]] || return 0
	awk -v name="$TAP_NAME" '
		!on && /^K?TAP version [0-9]+$/ { on = 1; print "KTAP version 1"; print "# Subtest: " name; next }
		on && NF { gsub(/\t/, "    "); print }' "${1:--}" >>"$TAP_SUBFILE"
}

# result NAME RC [REASON]: record one test's outcome.
result() {
	local name=$1 rc=$2 reason=${3:-} st
	case "$rc" in
	0) st=ok ;;
	4) st=skip ;;
	*) st=fail ;;
	esac
	if [[ -n "$TAP_SUBFILE" && -s "$TAP_SUBFILE" ]]; then
		awk -v name="$name" '{ print "sub\t" name "\t" $0 }' "$TAP_SUBFILE" >>"$TAP_RECORDS"
		: >"$TAP_SUBFILE"
	fi
	printf '%s\t%s\t%s\n' "$st" "$name" "${reason//$'\n'/ }" >>"$TAP_RECORDS"
	printf '%s: %s %s\n' "$st" "$name" "$reason" >&2
}

# check NAME CMD...: run CMD as one test; its status is the result (0 ok,
# 4 skip, anything else fail).  CMD runs in a child shell (in_child,
# qemu-net/lib.sh) with errexit on for its whole body, also when check is
# called from if/||/&& (bash would otherwise run a function called there
# with errexit off, and a body "false; true" would pass), with a cleanup
# scope of its own: what it defers runs when it ends.  Nothing it sets
# reaches the group: state later tests need belongs in check_setup.
check() {
	local name=$1 rc=0 why
	shift
	TAP_NAME=$name TAP_SUBFILE=$CHECK_DIR/.subtest.$BASHPID
	: >"$TAP_SUBFILE"
	in_child "$@" || rc=$?
	why=$(last_reason)
	case "$rc" in
	0 | 4) ;;
	*) why=${why:-exited $rc (see log)}; rc=1 ;;
	esac
	result "$name" "$rc" "$why"
	rm -f "$TAP_SUBFILE"
	TAP_SUBFILE=
}

# check_ok NAME CMD...: like check, and returns 0 only if it passed.
check_ok() {
	check "$@"
	[[ "$(tail -n 1 "$TAP_RECORDS" | cut -f1)" == ok ]]
}

# check_setup NAME CMD...: a step the group's later tests need (boot the
# guests, start the daemons), run in the group's own shell so that what it
# starts, sets and defers stays for them.  Must be called as a plain
# command: errexit then ends the group at the first failing command inside
# CMD, and the group's exit records NAME as failed (tap_setup_exit).  In an
# if/||/&& context bash would ignore errexit inside CMD, so that is refused.
TAP_SETUP=
check_setup() {
	local live
	set +e
	(set -e; false; exit 0)
	live=$?
	set -e
	if ((live == 0)); then
		result "$1" 1 "check_setup called from if/||/&&: errexit would be off inside it"
		return 1
	fi
	TAP_SETUP=$1
	"${@:2}"
	TAP_SETUP=
	result "$1" 0
}

# run_group G: the body of group G's child shell; the runner calls it as
# "in_child run_group G": errexit on, a cleanup scope of its own whose
# entries run when the group ends, on success, failure or a signal.  The
# group's file (net-tests/tests/G.sh) is sourced here, in the group's own
# shell, unless group_G is defined already; it sources what it uses.
run_group() {
	REASON_FILE=$CHECK_DIR/.reason-$1
	: >"$REASON_FILE"
	defer tap_setup_exit
	if ! declare -F "group_$1" >/dev/null; then
		# shellcheck source=/dev/null
		. "$RIG_TOP/net-tests/tests/$1.sh"
	fi
	"group_$1"
}

# tap_print RECORDS FROM [GROUP]: print the records of RECORDS from line
# FROM on as KTAP, numbering on from $TAP_N; counts in TAP_N, TAP_FAILED,
# TAP_SKIPPED; TAP_GROUP_STATUS is "ok", "was skipped" or "failed" for
# the records printed; each failure appended to TAP_FAILURES as
# "GROUP<TAB>NAME<TAB>REASON" (GROUP "-" if not given).
TAP_N=0 TAP_FAILED=0 TAP_SKIPPED=0 TAP_GROUP_STATUS=ok TAP_FAILURES=()
tap_print() {
	local st name why
	TAP_GROUP_STATUS=ok
	while IFS=$'\t' read -r st name why; do
		case "$st" in
		sub) printf '    %s\n' "$why"; continue ;;
		skip) TAP_SKIPPED=$((TAP_SKIPPED + 1))
			[[ "$TAP_GROUP_STATUS" == ok ]] && TAP_GROUP_STATUS="was skipped" ;;
		ok) ;;
		*) st=fail TAP_FAILED=$((TAP_FAILED + 1)) TAP_GROUP_STATUS=failed
			TAP_FAILURES+=("${3:--}"$'\t'"$name"$'\t'"$why") ;;
		esac
		TAP_N=$((TAP_N + 1))
		ktap_line "$st" "$TAP_N" "$name" "$why"
	done < <(tail -n +"$2" "$1")
}

# tap_results RECORDS: the number of results (not subtest lines) in it.
tap_results() { awk -F'\t' '$1 != "sub"' "$1" | wc -l; }

# Deferred first thing in each group's shell (so it runs last): a group
# that exits inside check_setup records that step as failed.
tap_setup_exit() {
	[[ -n "$TAP_SETUP" ]] || return 0
	local why rc=$RIG_EXIT_RC
	why=$(last_reason)
	result "$TAP_SETUP" 1 "${why:-setup failed} (group exited ${rc:-?}, see log)"
	TAP_SETUP=
}

# A test function may explain a fail/skip with: reason "text".
REASON_FILE=
reason() { [[ -n "$REASON_FILE" ]] && printf '%s' "$*" >"$REASON_FILE"; printf '%s\n' "$*" >&2; }
last_reason() {
	[[ -n "$REASON_FILE" && -s "$REASON_FILE" ]] && cat "$REASON_FILE" && : >"$REASON_FILE"
	return 0
}

# expect_exit CODE PATTERN LOG CMD...: CMD must exit with CODE and print
# PATTERN (extended regex) on stdout/stderr; its output is kept in LOG.
# CMD runs with in_child: a shell function there keeps errexit too.
expect_exit() {
	local want=$1 pat=$2 logf=$3 rc=0
	shift 3
	in_child "$@" >"$logf" 2>&1 || rc=$?
	if ((rc != want)); then
		reason "exit $rc, want $want ($logf)"
		return 1
	fi
	grep -qE "$pat" "$logf" || { reason "exit $rc but no /$pat/ in $logf"; return 1; }
}
