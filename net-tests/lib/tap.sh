# shellcheck shell=bash
# TAP output for net-tests/run-tests.sh (kselftest vocabulary: a test
# returns 0 pass, 1 fail, 4 skip; skips are printed "# SKIP", never "ok"
# alone).  Each group runs in a child shell and each test in a child of
# it (in_child: errexit on, own cleanup scope); each result is a record
#   STATUS<TAB>NAME<TAB>REASON        STATUS: ok|fail|skip
# appended to $TAP_RECORDS, and the runner prints them as TAP.

# result NAME RC [REASON]: record one test's outcome.
result() {
	local name=$1 rc=$2 reason=${3:-} st
	case "$rc" in
	0) st=ok ;;
	4) st=skip ;;
	*) st=fail ;;
	esac
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
	in_child "$@" || rc=$?
	why=$(last_reason)
	case "$rc" in
	0 | 4) ;;
	*) why=${why:-exited $rc (see log)}; rc=1 ;;
	esac
	result "$name" "$rc" "$why"
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
# entries run when the group ends, on success, failure or a signal.
run_group() {
	REASON_FILE=$CHECK_DIR/.reason-$1
	: >"$REASON_FILE"
	defer tap_setup_exit
	"group_$1"
}

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
