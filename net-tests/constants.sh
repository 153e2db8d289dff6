# shellcheck shell=bash
# The measurement and test constants of net-tests, in one place: fixed
# transfer sizes and rates of the bench's passes (and the kernel group's,
# which reuses them), and what the debug, pair and integrity groups use.
# Not settings: a run cannot change them (a study that varies one assigns
# it in its own script); bench.sh records every one of them in meta.json
# ("constants"), report.py prints the service-demand ones.
# (sourced by net-tests/lib/ipsec.sh, which every net-tests script sources)
# shellcheck disable=SC2034 # read by the scripts that source this file

# --- accounting and cost passes: a fixed-size transfer per row
# TCP bytes
ACCT_TCP_BYTES=8M
# UDP bytes
ACCT_UDP_BYTES=4M
# UDP datagram length
ACCT_UDP_LEN=1300

# --- service-demand pass (bench --icount, the instruction phase)
# QEMU -icount spec of bench.sh's instruction phase and the kernel
# group's cache known answer
BENCH_ICOUNT=shift=0,sleep=on
# TCP bytes
DEMAND_TCP_BYTES=64M
# UDP bytes
DEMAND_UDP_BYTES=16M
# TCP bytes on plaintext rows (~10 ticks in 64M on tap)
DEMAND_PLAIN_TCP_BYTES=512M
# TCP window (iperf3 -w; 0: iperf3's default)
DEMAND_WINDOW=64K
# 1: one ACK per segment (quickack route on b)
DEMAND_QUICKACK=1
# guest b's port of the pass's one-off iperf3 server
DEMAND_PORT=5299
# pacing rate (iperf3 --fq-rate for TCP, -b for UDP; 0: not paced)
DEMAND_RATE=0
# UDP rate of the unpaced pass (iperf3 -b): one the receiver keeps up with
DEMAND_UDP_RATE=50M
# TCP bytes of a paced pass (DEMAND_RATE not 0), every row
DEMAND_PACED_BYTES=16M

# --- the groups of make check
# kernel of the pair group, a variant in the cache: patched or baseline
PAIR_KERNEL=patched
# UDP datagram sizes of the integrity group (skbt-payload -l)
PAYLOAD_UDP_SIZES=1-1500,1999-2001,3000,4095-4097,8000,16000
# seconds for each guest to tear its IKE/CHILD SAs down (ipsec_down)
IKE_DOWN_TIMEOUT=30
# debug group: MiB of memory per guest (KASAN, kmemleak)
DEBUG_MEM=1536
# debug group: seconds for the guests to boot (sanitizers under TCG)
DEBUG_BOOT_TIMEOUT=900
# debug group: IKE_DOWN_TIMEOUT (charon on the debug kernel took > 30 s to
# terminate two IKE_SAs right after failslab)
DEBUG_IKE_DOWN_TIMEOUT=120
# debug group: vCPUs per guest (2: lockdep sees two CPUs)
DEBUG_SMP=2
# debug group: percent of guest a's non-sleeping kmalloc-2k/4k
# allocations failslab fails in the head-allocation test
DEBUG_FAILSLAB=20

# constants_json: every constant above as a JSON object, names in lower
# case (meta.json's "constants").
constants_json() {
	local v args=()
	for v in $(sed -n 's/^\([A-Z][A-Z0-9_]*\)=.*/\1/p' "${BASH_SOURCE[0]}"); do
		args+=(--arg "${v,,}" "${!v}")
	done
	jq -nc '$ARGS.named' "${args[@]}"
}
