#!/bin/sh
# Fault injection (failslab, Documentation/fault-injection) in this
# guest: fail a share of the non-sleeping allocations from the kmalloc
# caches the head of skb_cow_data()'s copy comes from (kmalloc-2k and
# kmalloc-4k), so that ESP output meets its error path.  Sleeping
# allocations (9p, the guest's shell) are left alone (ignore-gfp-wait).
# Needs CONFIG_FAILSLAB and CONFIG_FAULT_INJECTION_DEBUG_FS (the debug
# kernel), and the caches marked for failslab: on 6.1 only at boot, with
# slub_debug flag A (debug.sh boots "slub_debug=FZPU;FZPUA,kmalloc-2k,
# kmalloc-4k"); later kernels also take a write to
# /sys/kernel/slab/CACHE/failslab.
#   failslab.sh on PERCENT   arm: PERCENT % of those allocations fail
#   failslab.sh off          disarm; print injected=N (failures injected
#                            since "on"; 0 if it was not armed)
set -eu
F=/sys/kernel/debug/failslab
CACHES="kmalloc-2k kmalloc-4k"
TIMES=1000000
ARMED=/rig/failslab.armed

[ -d "$F" ] || { echo "no $F: kernel without CONFIG_FAILSLAB/CONFIG_FAULT_INJECTION_DEBUG_FS" >&2; exit 1; }
case "${1:-}" in
on)
	echo 0 >"$F/probability"
	for c in $CACHES; do
		a=/sys/kernel/slab/$c/failslab
		[ "$(cat "$a")" = 1 ] || [ ! -w "$a" ] || echo 1 >"$a" 2>/dev/null || true
		[ "$(cat "$a")" = 1 ] ||
			{ echo "$c is not marked for failslab (boot with slub_debug=...A,$c)" >&2; exit 1; }
	done
	echo Y >"$F/cache-filter"
	echo Y >"$F/ignore-gfp-wait"
	echo N >"$F/task-filter"
	echo 0 >"$F/space"
	echo 0 >"$F/verbose"
	echo 1 >"$F/interval"
	echo "$TIMES" >"$F/times"
	echo "$TIMES" >"$ARMED"
	echo "${2:?failslab.sh on PERCENT}" >"$F/probability"
	;;
off)
	echo 0 >"$F/probability"
	# Counted from what "on" wrote: "times" of a failslab never armed
	# is its default (1), not TIMES (which read as 999,999 injected).
	if [ -f "$ARMED" ]; then
		echo "injected=$(($(cat "$ARMED") - $(cat "$F/times")))"
		rm -f "$ARMED"
	else
		echo "injected=0"
	fi
	;;
*)
	echo "usage: failslab.sh on PERCENT | off" >&2
	exit 2
	;;
esac
