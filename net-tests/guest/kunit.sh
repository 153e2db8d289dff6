#!/bin/sh
# Run KUnit test modules in the guest: modprobe each, print the KTAP of
# every suite it added (from debugfs), exit 0 if all suites passed,
# 1 if one failed, 4 if a module is missing (not built in this kernel).
# Usage: kunit.sh MODULE...
set -u
D=/sys/kernel/debug/kunit
[ -d "$D" ] || { echo "# SKIP no $D (CONFIG_KUNIT_DEBUGFS)"; exit 4; }
rc=0
for m in "$@"; do
	before=$(ls "$D")
	if ! modprobe "$m" 2>/tmp/kunit.err; then
		if grep -q 'not found' /tmp/kunit.err; then
			echo "# SKIP module $m not in this kernel"
			exit 4
		fi
		cat /tmp/kunit.err
		rc=1
	fi
	for sd in "$D"/*; do
		s=${sd##*/}
		case " $(echo "$before" | tr '\n' ' ') " in *" $s "*) continue ;; esac
		cat "$D/$s/results"
		# The suite's own result is the last non-indented "ok"/"not ok".
		last=$(grep -E '^(not )?ok ' "$D/$s/results" | tail -n 1)
		case "$last" in
		"ok "*) ;;
		*) echo "# suite $s failed: $last"; rc=1 ;;
		esac
	done
done
exit "$rc"
