#!/bin/bash
# Boot the guest pair on one kernel and run host-side shell code against
# it; the guests are stopped when the code ends (or fails, or on ^C).
# Options: usage() below (--help).
set -euo pipefail
# shellcheck source=qemu-net/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=qemu-net/guests.sh
. "$RIG_TOP/qemu-net/guests.sh"

usage() {
	cat <<-'EOF'
		Usage: qemu-net/pair.sh [--accel tcg|kvm] [--link tap|socket] [--tree 7.2|6.1|6.12]
		                        [--series DIR] [--baseline-series DIR]
		                        [--append ARGS] [--lib FILE]... [--run-dir DIR]
		                        [--keep] [--dry-run]
		                        VARIANT [-c CODE | SCRIPT]
		Boot the guest pair on one kernel and run host-side bash against it;
		the guests are stopped when it ends (or fails, or on ^C).
		  VARIANT      baseline, patched or debug (built first if not cached)
		  -c CODE      bash to run, with guest_exec, guest_alive, ... (and
		               what the --lib files define)
		  SCRIPT       a file of such bash
		  --accel A    QEMU accelerator, tcg or kvm (default: RIG_ACCEL)
		  --link L     the guests' link, tap (private netns, vnet_hdr offloads)
		               or socket (default: RIG_LINK; empty = tap if this run
		               can make it, else socket)
		  --tree T     kernel tree, 7.2, 6.1 or 6.12 (default: RIG_TREE)
		  --series DIR  the series of VARIANT patched/debug (default:
		               RIG_PATCHES, patches/); --baseline-series DIR that of
		               VARIANT baseline (default: RIG_BASELINE_PATCHES, none)
		  --append A   more kernel command line for both guests
		  --lib FILE   bash sourced before the guests boot (again for more):
		               functions for CODE and the hooks guests.sh calls
		               (guest_env: addresses; guest_qemu_args)
		  --run-dir D  the run's folder (default: RIG_RESULTS/pair-TIME-PID)
		  --keep       without CODE: keep the guests up (print how to reach
		               them) until ^C
		  --dry-run    print the build, initramfs and QEMU commands, boot nothing
		  -h, --help   this text
		Settings: RIG_* variables, each documented with its default in qemu-net/defaults.sh.
		Exit: CODE's status, or the rig's codes (2 bad usage, 3-9 see README.md).
		Examples:
		  qemu-net/pair.sh baseline --keep
		  qemu-net/pair.sh patched -c 'guest_exec a "uname -r; ip -br link"'
	EOF
}

append='' keep=0 code='' script='' variant='' libs=() run=''
while (($#)); do
	case "$1" in
	--append) opt_value "$@"; append=$2; shift ;;
	--lib) opt_value "$@"; libs+=("$2"); shift ;;
	--run-dir) opt_value "$@"; run=$2; shift ;;
	--keep) keep=1 ;;
	--dry-run) RIG_DRY_RUN=1 ;;
	-c) opt_value "$@"; code=$2; shift ;;
	-h | --help) usage; exit 0 ;;
	-*) rig_option "$@" || usage_error "unknown option '$1'"; shift ;;
	*)
		if [[ -z "$variant" ]]; then variant=$1
		elif [[ -z "$script" ]]; then script=$1
		else usage_error "one VARIANT and one SCRIPT at most: '$1'"
		fi
		;;
	esac
	shift
done
[[ -n "$variant" ]] || usage_error "no VARIANT given"
case "$variant" in
baseline | patched | debug) ;;
*) usage_error "VARIANT must be baseline, patched or debug, not '$variant'" ;;
esac
if [[ -n "$script" ]]; then
	[[ -z "$code" ]] || usage_error "-c CODE and SCRIPT: one of them"
	[[ -r "$script" ]] || usage_error "cannot read SCRIPT '$script'"
	code=$(cat "$script")
fi
rig_settings_check
for f in "${libs[@]}"; do
	[[ -r "$f" ]] || usage_error "cannot read --lib FILE '$f'"
	# shellcheck source=/dev/null
	. "$f"
done

if ((RIG_DRY_RUN)); then
	"$RIG_TOP/qemu-net/build-kernel.sh" --dry-run "$variant"
	kdir=$RIG_KERNELS/$variant
else
	kdir=$("$RIG_TOP/qemu-net/build-kernel.sh" "$variant")
fi
[[ -n "$run" ]] || run=$RIG_RESULTS/pair-$(date +%Y%m%d-%H%M%S)-$$
mkdir -p "$run"
start=$SECONDS
guests_start "$run" "$kdir" "$append"
((RIG_DRY_RUN)) && exit 0
log "guest pair up in $((SECONDS - start))s ($run)"
if [[ -n "$code" ]]; then
	eval "$code"
elif ((keep)); then
	log "guests running; jobs: write a shell script to $run/{a,b}/jobs/N.sh; ^C stops them"
	while guest_alive a && guest_alive b; do sleep 1; done
fi
