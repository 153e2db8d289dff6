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
# it.  Names start with RIG_.  The environment of the guest scripts
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
# kernel tree, Debian's linux-source-RIG_TREE: 6.1 or 6.12 (--tree)
: "${RIG_TREE:=6.1}"
# kernel source tarball; empty = /usr/src/linux-source-$RIG_TREE.tar.xz
: "${RIG_TARBALL:=}"
# directory with the series file and its patches; empty = patches/ (6.1), patches/$RIG_TREE (others)
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
# QEMU -icount spec of bench.sh's instruction phase (--instr-pairs)
: "${RIG_BENCH_ICOUNT:=shift=0,sleep=on}"
# more kernel command line for every guest under -icount (guests_start): clearcpuid=erms makes 6.1's memcpy() a loop, counted per 8 bytes, not rep movsb, counted per byte
: "${RIG_ICOUNT_APPEND:=clearcpuid=erms}"
# guests' link, tap or socket (--link); empty = tap if the run can make it, else socket
: "${RIG_LINK:=}"
# seconds for a guest's init to report ready
: "${RIG_BOOT_TIMEOUT:=90}"
# seconds for each guest to tear its IKE/CHILD SAs down (ipsec_down)
: "${RIG_IKE_DOWN_TIMEOUT:=30}"
# seconds a job in a guest may run when its caller gives no limit
: "${RIG_EXEC_TIMEOUT:=300}"
# pair.sh's run folder; empty = $RIG_RESULTS/pair-<time>-<pid>
: "${RIG_RUN_DIR:=}"
# pcap file for a capture of guest a's link (QEMU filter-dump); empty = none
: "${RIG_WIRE_PCAP:=}"
# lines of a log shown when a command fails
: "${RIG_TAIL:=40}"

# --- make check ---
# 0 = leave the debug group out of make check (-t debug runs it all the same)
: "${RIG_CHECK_DEBUG:=1}"
# 0 = leave the tree group out of make check: the functional groups on the other tree (-t tree runs it all the same)
: "${RIG_CHECK_TREE:=1}"
# MiB of memory per guest in the debug group (KASAN, kmemleak)
: "${RIG_DEBUG_MEM:=1536}"
# seconds for the debug kernel's guests to boot (sanitizers under TCG)
: "${RIG_DEBUG_BOOT_TIMEOUT:=900}"
# RIG_IKE_DOWN_TIMEOUT in the debug group (charon on the debug kernel took > 30 s to terminate two IKE_SAs right after failslab)
: "${RIG_DEBUG_IKE_DOWN_TIMEOUT:=120}"
# vCPUs per guest in the debug group (2: lockdep sees two CPUs)
: "${RIG_DEBUG_SMP:=2}"
# percent of guest a's non-sleeping kmalloc-2k/4k allocations failslab fails in the debug group's head-allocation test
: "${RIG_DEBUG_FAILSLAB:=20}"
# kernel of the pair group, a variant in the cache: patched or baseline
: "${RIG_PAIR_KERNEL:=patched}"
# UDP datagram sizes of the integrity group (skbt-payload -l)
: "${RIG_PAYLOAD_UDP_SIZES:=1-1500,1999-2001,3000,4095-4097,8000,16000}"

# --- bench and kernel group: fixed-size transfers per row ---
# TCP bytes of the accounting and cost passes
: "${RIG_ACCT_TCP_BYTES:=8M}"
# UDP bytes of the accounting and cost passes
: "${RIG_ACCT_UDP_BYTES:=4M}"
# UDP datagram length of the accounting and cost passes
: "${RIG_ACCT_UDP_LEN:=1300}"
# TCP bytes of the service-demand pass (bench --icount)
: "${RIG_DEMAND_TCP_BYTES:=64M}"
# UDP bytes of the service-demand pass
: "${RIG_DEMAND_UDP_BYTES:=16M}"
# TCP bytes of the service-demand pass on plaintext rows (~10 ticks in 64M on tap)
: "${RIG_DEMAND_PLAIN_TCP_BYTES:=512M}"
# TCP window of the service-demand pass (iperf3 -w; 0: iperf3's default)
: "${RIG_DEMAND_WINDOW:=64K}"
# 1: one ACK per segment in the service-demand pass (quickack route on b)
: "${RIG_DEMAND_QUICKACK:=1}"
# guest b's port of the service-demand pass's one-off iperf3 server
: "${RIG_DEMAND_PORT:=5299}"
# pacing rate of the service-demand pass (iperf3 --fq-rate for TCP, -b for UDP; 0: not paced)
: "${RIG_DEMAND_RATE:=0}"
# UDP rate of the (unpaced) service-demand pass (iperf3 -b): one the receiver keeps up with
: "${RIG_DEMAND_UDP_RATE:=50M}"
# TCP bytes of a paced service-demand pass (RIG_DEMAND_RATE not 0), every row
: "${RIG_DEMAND_PACED_BYTES:=16M}"
# perf stat cycles and instructions per KB in the service-demand pass (auto: under --accel kvm; 1: always, also without -icount; 0: never)
: "${RIG_PERF_STAT:=auto}"
# instructions counted by the skbt-insn QEMU plugin (auto: with -icount and TCG; 1; 0; several vCPUs: their sum, one TCG thread); cache: that and the skbt-cache plugin's simulated L1D/L2 misses (Zen 4 sizes; guests run ~3x slower)
: "${RIG_INSN:=auto}"

export RIG_CACHE
