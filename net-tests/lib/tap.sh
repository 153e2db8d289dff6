# shellcheck shell=bash
# TAP output for net-tests/run-tests.sh (kselftest vocabulary: a test
# returns 0 pass, 1 fail, 4 skip; skips are printed "# SKIP", never "ok"
# alone).  Groups of tests run in subshells; each result is a record
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

# check NAME CMD...: run CMD as one test (its status is the result).
check() {
	local name=$1 rc=0
	shift
	"$@" || rc=$?
	case "$rc" in 0 | 4) ;; *) rc=1 ;; esac
	result "$name" "$rc" "$(last_reason)"
}

# check_ok NAME CMD...: like check, and returns 0 only if it passed.
check_ok() {
	check "$@"
	[[ "$(tail -n 1 "$TAP_RECORDS" | cut -f1)" == ok ]]
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
expect_exit() {
	local want=$1 pat=$2 logf=$3 rc=0
	shift 3
	"$@" >"$logf" 2>&1 || rc=$?
	if ((rc != want)); then
		reason "exit $rc, want $want ($logf)"
		return 1
	fi
	grep -qE "$pat" "$logf" || { reason "exit $rc but no /$pat/ in $logf"; return 1; }
}
