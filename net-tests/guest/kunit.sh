#!/bin/sh
# Run KUnit test modules in the guest: modprobe each and print, as KTAP
# (qemu-net/guest/lib.sh's writer), one result per suite the module
# added, with the suite's own KTAP (from debugfs) nested under it; a
# module that is missing is a skip, one that does not load a failure.
# Exit (kselftest's codes only): 0 all suites passed, 1 one failed or a
# module did not load, 4 a module is missing (not built in this kernel)
# or no KUnit debugfs.
# Usage: kunit.sh MODULE...
set -u
# shellcheck source=qemu-net/guest/lib.sh
. "${0%/*}/../../qemu-net/guest/lib.sh"
D=${KUNIT_DEBUGFS:-/sys/kernel/debug/kunit}
MODPROBE=${MODPROBE:-modprobe}
[ -d "$D" ] || ktap_skip_all "no $D (CONFIG_KUNIT_DEBUGFS)"
tmp=${TMPDIR:-/tmp}/kunit.$$
mkdir -p "$tmp" || exit $KSFT_FAIL
trap 'rm -rf "$tmp"' EXIT

# Load every module first (the plan is the number of results): one line
# per result in $tmp/list, "suite NAME", "missing MODULE" or "bad MODULE".
: >"$tmp/list"
for m in "$@"; do
	before=" $(ls "$D" | tr '\n' ' ') "
	if ! "$MODPROBE" "$m" 2>"$tmp/$m.err"; then
		if grep -q 'not found' "$tmp/$m.err"; then
			echo "missing $m" >>"$tmp/list"
			continue
		fi
		echo "bad $m" >>"$tmp/list"
	fi
	for sd in "$D"/*; do
		[ -d "$sd" ] || continue
		s=${sd##*/}
		case "$before" in *" $s "*) continue ;; esac
		echo "suite $s" >>"$tmp/list"
	done
done

ktap_header
ktap_plan "$(wc -l <"$tmp/list")"
while read -r kind name; do
	case "$kind" in
	missing) ktap_skip "$name" "module $name not in this kernel" ;;
	bad) sed 's/^/# /' "$tmp/$name.err"
		ktap_not_ok "$name" "modprobe $name failed" ;;
	suite)
		# debugfs holds a KTAP document per suite: its header, plan and
		# closing result (the suite's verdict) are replaced by this
		# document's; its indented lines (the suite's own subtest, one
		# level down already) and its comments are kept as they are.
		r=$D/$name/results
		last=$(grep -E '^(not )?ok ' "$r" | tail -n 1)
		grep -vE '^(K?TAP version |1\.\.[0-9]|(not )?ok )' "$r"
		case "$last" in
		"ok "*"# SKIP"*) ktap_skip "$name" "${last#*# SKIP}" ;;
		"ok "*) ktap_ok "$name" ;;
		"") ktap_not_ok "$name" "no result in $r" ;;
		*) ktap_not_ok "$name" "suite failed" ;;
		esac ;;
	esac
done <"$tmp/list"
# A missing module keeps the old meaning: skip, even if others passed.
if grep -q '^missing ' "$tmp/list"; then
	ktap_finish skip
fi
ktap_finish
