# shellcheck shell=bash
# Every setting of the rig and its default, in one place (strongSwan's
# testing/testing.conf + testing.conf.local).  Sourced by qemu-net/lib.sh,
# never executed.  This file is the settings' only documentation: the
# README points here, and static-settings-one-place checks its form.
#
# Where a setting's value comes from, the first that has one wins:
#   1. a command-line option (--accel, --link, --tree, --icount; the
#      script exports it, so the commands it runs agree with it)
#   2. the environment
#   3. rig.local at the top of the repository (git-ignored), shell
#      assignments, e.g.  RIG_ACCEL=kvm
#   4. the defaults below
# The environment wins over rig.local so that what a command exports to
# the commands it runs (which source rig.local again) stays as it was.
#
# One setting a line, : "${NAME:=DEFAULT}", with a one-line comment above
# it.  Names start with RIG_; at most 20 (static-settings-one-place).
# Constants of the tests and benchmarks (transfer sizes, timeouts) are
# not settings: they live with the tests.  The environment of the guest scripts
# (the scripts the guests run) is not a setting: the host's never
# reaches the guests.

# (bash: not an array of this file's own, so a function sourcing lib.sh
# gets the values too)
declare -gA RIG_ENV=()
for rig_v in $(compgen -e); do
	case "$rig_v" in RIG_* | SKB_TAILROOM_CACHE) RIG_ENV[$rig_v]=${!rig_v} ;; esac
done
if [[ -f "$RIG_TOP/rig.local" ]]; then
	# shellcheck source=/dev/null
	. "$RIG_TOP/rig.local"
fi
for rig_v in "${!RIG_ENV[@]}"; do
	printf -v "$rig_v" '%s' "${RIG_ENV[$rig_v]}"
done
unset rig_v RIG_ENV

# SKB_TAILROOM_CACHE is the old name of RIG_CACHE, still accepted: when
# set, it wins (as it did before RIG_CACHE existed).
[[ -z "${SKB_TAILROOM_CACHE:-}" ]] || RIG_CACHE=$SKB_TAILROOM_CACHE

# --- where things are ---
# cache: kernel trees, builds, ccache, initramfs, installed kernels
: "${RIG_CACHE:=${XDG_CACHE_HOME:-$HOME/.cache}/skb-tailroom}"
# output folders: bench runs, make check logs, pair.sh runs
: "${RIG_RESULTS:=$RIG_TOP/results}"
# kernel tree, Debian's linux-source-RIG_TREE: 7.2 (unstable's, fetched), 6.1 or 6.12 (--tree)
: "${RIG_TREE:=7.2}"
# kernel source tarball; empty = Debian's for RIG_TREE (7.2: fetched into the cache; others: /usr/src)
: "${RIG_TARBALL:=}"
# directory with the series file and its patches; empty = patches/ (7.2), patches/stable/$RIG_TREE (others)
: "${RIG_PATCHES:=}"
# the baseline's series, a directory as RIG_PATCHES (--baseline-series); empty = the pristine tree
: "${RIG_BASELINE_PATCHES:=}"

# --- builds and guests ---
# make -j of the kernel builds
: "${RIG_JOBS:=$(nproc)}"
# QEMU accelerator, tcg or kvm (--accel); /dev/kvm on the CI machines hangs stock kernels
: "${RIG_ACCEL:=tcg}"
# the KVM device --accel kvm needs (checked before any build; a test points it elsewhere)
: "${RIG_KVM_DEV:=/dev/kvm}"
# MiB of memory per guest
: "${RIG_MEM:=768}"
# vCPUs per guest (QEMU -smp; bench --smp; 2 with bench --rows multi unless given)
: "${RIG_SMP:=1}"
# parallel flows of bench's throughput and service-demand passes (iperf3 -P; --streams; 4 with --rows multi unless given)
: "${RIG_STREAMS:=1}"
# 1 = each guest's QEMU on a host CPU of its own (taskset: a on the first CPU the run may use, b on the second); 0 = unpinned (bench --no-pin)
: "${RIG_PIN:=1}"
# QEMU -icount spec for TCG guests, e.g. shift=0,sleep=on (bench --icount); empty = off
: "${RIG_ICOUNT:=}"
# guests' link, tap or socket (--link); empty = tap if the run can make it, else socket
: "${RIG_LINK:=}"
# lines of a log shown when a command fails
: "${RIG_TAIL:=40}"

# --- make check ---
# 1 = make check-full: also the debug group, and the tree group on every other tree (6.1 and 6.12) with pair and integrity (-t GROUP runs a group all the same)
: "${RIG_CHECK_FULL:=0}"

# --- bench: what the service-demand pass counts
# perf stat cycles and instructions per KB in the service-demand pass (auto: under --accel kvm; 1: always, also without -icount; 0: never)
: "${RIG_PERF_STAT:=auto}"
# instructions counted by the skbt-insn QEMU plugin (auto: with -icount and TCG; 1; 0; several vCPUs: their sum, one TCG thread); cache: that and the skbt-cache plugin's simulated L1D/L2 misses (Zen 4 sizes; guests run ~3x slower)
: "${RIG_INSN:=auto}"

export RIG_CACHE
