#!/bin/bash
# Boot the guest pair on one kernel and run host-side shell code against
# it; the guests are stopped when the code ends (or fails, or on ^C).
#
# Usage: pair.sh [--accel tcg|kvm] [--link tap|socket] [--tree 6.1|6.12] [--append ARGS]
#                [--ike] [--keep] [--dry-run] VARIANT [-c CODE | SCRIPT]
#   VARIANT   baseline|patched|debug (built first if not cached)
#   --link    tap (private netns, vnet_hdr offloads) or socket; default
#             RIG_LINK, empty = tap if it can be made, else socket
#   --ike     start charon in both guests (b responds, a initiates)
#   --keep    without CODE: wait (print how to reach the guests) until ^C
#   CODE      bash, with guest_exec/ipsec_up/iperf_run/... available:
#     pair.sh patched --ike -c 'ipsec_up v4-gcm-transport; guest_exec a "ping -c3 10.0.0.2"'
# Exit status: CODE's, or the rig's codes (qemu-net/lib.sh).
set -euo pipefail
# shellcheck source=qemu-net/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=qemu-net/guests.sh
. "$RIG_TOP/qemu-net/guests.sh"
# shellcheck source=net-tests/lib/ipsec.sh
. "$RIG_TOP/net-tests/lib/ipsec.sh"

append='' ike=0 keep=0 code='' variant=''
while (($#)); do
	case "$1" in
	--accel) export RIG_ACCEL=$2; shift ;;
	--link) export RIG_LINK=$2; shift ;;
	--tree) rig_tree_set "$2"; shift ;;
	--append) append=$2; shift ;;
	--ike) ike=1 ;;
	--keep) keep=1 ;;
	--dry-run) RIG_DRY_RUN=1 ;;
	-c) code=$2; shift ;;
	-h | --help) sed -n '2,15p' "$0"; exit 0 ;;
	-*) die "$E_USAGE" "unknown option '$1' (try --help)" ;;
	*)
		if [[ -z "$variant" ]]; then variant=$1
		else code=$(cat "$1")
		fi
		;;
	esac
	shift
done
[[ -n "$variant" ]] || die "$E_USAGE" "usage: pair.sh [options] VARIANT [-c CODE | SCRIPT]"

if ((RIG_DRY_RUN)); then
	"$RIG_TOP/qemu-net/build-kernel.sh" --dry-run "$variant"
	kdir=$RIG_KERNELS/$variant
else
	kdir=$("$RIG_TOP/qemu-net/build-kernel.sh" "$variant")
fi
run=${RIG_RUN_DIR:-$RIG_RESULTS/pair-$(date +%Y%m%d-%H%M%S)-$$}
mkdir -p "$run"
start=$SECONDS
guests_start "$run" "$kdir" "$append"
((RIG_DRY_RUN)) && exit 0
log "guest pair up in $((SECONDS - start))s ($run)"
((ike)) && ipsec_start
if [[ -n "$code" ]]; then
	eval "$code"
elif ((keep)); then
	log "guests running; jobs: write a shell script to $run/{a,b}/jobs/N.sh; ^C stops them"
	while guest_alive a && guest_alive b; do sleep 1; done
fi
