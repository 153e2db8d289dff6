#!/bin/bash
# IPsec throughput benchmark, baseline vs patched kernel in one run,
# interleaved A B, B A, A B, ... (one guest-pair boot per kernel per
# pair; the order alternates, ABBA, so a drift favours neither kernel).
# Per boot and row, the passes its phase lists (PHASE_PASSES below):
# throughput (iperf3 -J, no probes), accounting (kprobe path counts),
# cost (instructions or ns per esp_output()/encrypt_packet() and per
# skb_cow_data() call), service demand (each guest's instructions per KB
# over a fixed transfer, under -icount), profile.  Without --icount a
# second phase, booted under QEMU -icount (BENCH_ICOUNT), runs the cost
# and service-demand passes alone in DIR/instr, so that one make bench
# prints the throughput table and the deterministic instruction columns.
# Keeps raw data, meta.json (written first) and report.py's table and
# verdict.json in DIR.  Every option, once: usage() below (--help).
set -euo pipefail
# shellcheck source=qemu-net/lib.sh
. "$(dirname "$0")/../qemu-net/lib.sh"
# shellcheck source=qemu-net/guests.sh
. "$RIG_TOP/qemu-net/guests.sh"
# shellcheck source=net-tests/lib/ipsec.sh
. "$RIG_TOP/net-tests/lib/ipsec.sh"
# shellcheck source=net-tests/matrix.sh
. "$RIG_TOP/net-tests/matrix.sh"
# shellcheck source=net-tests/lib/acct.sh
. "$RIG_TOP/net-tests/lib/acct.sh"
# shellcheck source=net-tests/lib/func.sh
. "$RIG_TOP/net-tests/lib/func.sh"
# shellcheck source=net-tests/lib/profile.sh
. "$RIG_TOP/net-tests/lib/profile.sh"
# shellcheck source=net-tests/lib/auto.sh
. "$RIG_TOP/net-tests/lib/auto.sh"

usage() {
	cat <<-'EOF'
		Usage: net-tests/bench.sh [--pairs N|auto] [--target-ci PCT] [--time-limit MIN]
		                          [--time S] [--rows quick|full|func|multi|ROW,...]
		                          [--streams N] [--smp N] [--profile]
		                          [--udp-len BYTES] [--sysctl KEY=VALUE]... [--accel tcg|kvm]
		                          [--icount SPEC] [--link tap|socket] [--tree 7.2|6.1|6.12]
		                          [--series DIR] [--baseline-series DIR]
		                          [--variants V[,V]] [--controls GLOB[,GLOB...]] [--instr-pairs N]
		                          [--no-pin] [--fail-on-regression] [--out DIR] [--dry-run]
		IPsec throughput, baseline vs patched kernel in one run (make bench):
		pairs of guest-pair boots, one per kernel, in the order A B, B A, ...
		  --pairs N          boot pairs (default 3; 0: the instruction phase only);
		                     auto: 3, then one more until the 95 % interval of
		                     every noisy metric on the targeted rows is within
		                     +-PCT (--target-ci, default 3), --time-limit MIN
		                     (default 60) is reached or 10 pairs are done; the
		                     reason it stopped is in meta.json (pairs_auto)
		  --time S           seconds per iperf3 throughput pass (default 10)
		  --rows R           quick (default), full, func (the functional rows:
		                     NAT-T, GRE and VXLAN over IPsec), multi (the ESP
		                     TCP rows and their plaintext controls for several
		                     flows and vCPUs: with it --streams defaults to 4
		                     and --smp to 2), or rows as named in
		                     net-tests/matrix.sh; comma-separated, mixed
		  --streams N        parallel flows of the throughput and service-demand
		                     passes (iperf3 -P N; RIG_STREAMS, default 1, 4 with
		                     --rows multi)
		  --smp N            vCPUs per guest (RIG_SMP; default 1, 2 with --rows
		                     multi)
		  --profile          perf record the sender (cpu-clock, all CPUs) over
		                     each ESP row's fixed transfer in every boot of the
		                     instruction phase (else of the throughput phase):
		                     top kernel symbols per profile and a perf diff
		                     baseline vs patched per row, in PHASE/profile/
		  --udp-len BYTES    UDP datagram length of the throughput pass (1300)
		  --sysctl KEY=VALUE set a sysctl in both guests after each boot (again
		                     for more), e.g. net.ipv4.tcp_limit_output_bytes=4194304
		  --accel A          QEMU accelerator, tcg or kvm (default: RIG_ACCEL)
		  --icount SPEC      TCG guests under QEMU -icount SPEC, e.g. shift=0,sleep=on:
		                     esp_output() cost in instructions, plus a service-demand
		                     pass per row, for the whole run (default: RIG_ICOUNT,
		                     empty = off; then see --instr-pairs)
		  --instr-pairs N    without --icount: boot pairs of the instruction phase
		                     (default 3; 0 = none): the rows but ICMP under
		                     -icount BENCH_ICOUNT, instructions per call and
		                     per KB only, in DIR/instr with its own verdict
		  --link L           the guests' link, tap or socket (default: RIG_LINK;
		                     empty = tap if this run can make it, else socket)
		  --tree T           kernel tree, 7.2, 6.1 or 6.12 (default: RIG_TREE)
		  --series DIR       the patched kernel's series: DIR/series names its
		                     patches in order (default: RIG_PATCHES, patches/)
		  --baseline-series DIR  the baseline's series, likewise (default:
		                     RIG_BASELINE_PATCHES, empty = the pristine tree)
		  --variants V[,V]   baseline,patched (default; the A/B run) or one of
		                     them alone (A/A: the spread of one kernel over boots)
		  --controls G[,G]   rows the change does not target, globs (default
		                     *-plain,udp-*,icmp-*,*-on; '' for none): verdict.json
		                     judges the A/B against them (kept in meta.json)
		  --no-pin           guests' QEMUs not pinned to a host CPU each (RIG_PIN=0;
		                     pinned is the default: less noise)
		  --fail-on-regression  exit 1 when a targeted row is worse on a
		                     deterministic metric or a control row moved
		  --out DIR          results folder (default: $RIG_RESULTS/<time>)
		  --dry-run          print the build commands and the plan, run nothing
		  -h, --help         this text
		Settings: RIG_* variables, each documented with its default in qemu-net/defaults.sh.
		Exit: 0 ok, 1 a check failed, 2 bad usage, 3-9 see README.md.
		Examples:
		  net-tests/bench.sh --pairs 3 --time 5 --rows full
		  net-tests/bench.sh --icount shift=0,sleep=on --rows tcp-v4-transport-gcm-off
		  net-tests/bench.sh --variants baseline --pairs 3
		  net-tests/bench.sh --baseline-series patches/autoload-only --rows tcp-v4-transport-gcm-on
		  net-tests/bench.sh --pairs 0 --instr-pairs 2 --rows quick,func
		  net-tests/bench.sh --rows multi --pairs auto --target-ci 5
	EOF
}

argv=("$0" "$@")
pairs=3 secs=10 ipairs=3 rowsel=quick udplen=1300 out='' sysctls=() varsel=baseline,patched
streams='' smp='' target_ci=3 tlimit=60 auto=0
# --pairs auto: pairs before the first look at the intervals (LKP's
# minimum of 3 samples a side), and at most
AUTO_MIN=3 AUTO_MAX=10
controls=-    # -: report.py's default
failreg=0 profile=0
while (($#)); do
	case "$1" in
	--pairs) opt_value "$@"; pairs=$2; shift ;;
	--target-ci) opt_value "$@"; target_ci=$2; shift ;;
	--time-limit) opt_value "$@"; tlimit=$2; shift ;;
	--streams) opt_value "$@"; streams=$2; shift ;;
	--smp) opt_value "$@"; smp=$2; shift ;;
	--time) opt_value "$@"; secs=$2; shift ;;
	--rows) opt_value "$@"; rowsel=$2; shift ;;
	--udp-len) opt_value "$@"; udplen=$2; shift ;;
	--sysctl)
		opt_value "$@"
		[[ "$2" =~ ^[a-z0-9_]+(\.[a-z0-9_-]+)+=[0-9a-z\ ]+$ ]] ||
			usage_error "--sysctl needs KEY=VALUE, e.g. net.ipv4.tcp_limit_output_bytes=4194304"
		sysctls+=("$2")
		shift
		;;
	--icount) opt_value "$@"; export RIG_ICOUNT=$2; shift ;;
	--instr-pairs) opt_value "$@"; ipairs=$2; shift ;;
	--variants) opt_value "$@"; varsel=$2; shift ;;
	--controls) opt_value "$@"; controls=$2; shift ;;
	--no-pin) export RIG_PIN=0 ;;
	--fail-on-regression) failreg=1 ;;
	--profile) profile=1 ;;
	--out) opt_value "$@"; out=$2; shift ;;
	--dry-run) RIG_DRY_RUN=1 ;;
	-h | --help) usage; exit 0 ;;
	*) rig_option "$@" || usage_error "unknown option '$1'"; shift ;;
	esac
	shift
done
if [[ "$pairs" == auto ]]; then
	auto=1 pairs=$AUTO_MIN
fi
[[ "$pairs" =~ ^[0-9]+$ ]] || usage_error "--pairs needs a number (0 = the instruction phase only) or auto"
if [[ ! "$target_ci" =~ ^[0-9]+(\.[0-9]+)?$ ]] || ! awk -v t="$target_ci" 'BEGIN { exit !(t > 0) }'; then
	usage_error "--target-ci needs a positive percentage, e.g. 3"
fi
[[ "$tlimit" =~ ^[1-9][0-9]*$ ]] || usage_error "--time-limit needs a positive number of minutes"
# --rows multi: several flows on several vCPUs unless told otherwise
# (an option, or a setting other than its default)
if [[ ",$rowsel," == *,multi,* ]]; then
	[[ -n "$streams" || "$RIG_STREAMS" != 1 ]] || streams=4
	[[ -n "$smp" || "$RIG_SMP" != 1 ]] || smp=2
fi
[[ -z "$streams" ]] || export RIG_STREAMS=$streams
[[ -z "$smp" ]] || export RIG_SMP=$smp
rig_settings_check
streams=$RIG_STREAMS
[[ "$ipairs" =~ ^[0-9]+$ ]] || usage_error "--instr-pairs needs a number (0 = no instruction phase)"
[[ "$secs" =~ ^[1-9][0-9]*$ ]] || usage_error "--time needs a positive number of seconds"
[[ "$udplen" =~ ^[1-9][0-9]*$ ]] || usage_error "--udp-len needs a positive number of bytes"
# (not mapfile < <(...): a bad row name must stop the run here)
rows_txt=$(rows_select "$rowsel") || exit
mapfile -t rows <<<"$rows_txt"
# The instruction phase: only under a run without --icount (a run under
# --icount is one already), and only rows with a cost or demand pass.
irows=()
if [[ -z "$RIG_ICOUNT" && "$RIG_ACCEL" == tcg ]] && ((ipairs > 0)); then
	for row in "${rows[@]}"; do
		row_decode "$row" || exit
		[[ "$ROW_PROTO" == icmp ]] || irows+=("$row")
	done
fi
((pairs > 0 || ${#irows[@]} > 0)) ||
	usage_error "--pairs 0 runs the instruction phase only: it needs --instr-pairs N > 0, no --icount, TCG, and rows other than ICMP"
IFS=, read -ra variants <<<"$varsel"
case "${variants[*]}" in
"baseline patched" | "patched baseline" | baseline | patched) ;;
*) usage_error "--variants takes baseline,patched (the A/B run) or one of them alone (A/A: the noise of one kernel over its boots)" ;;
esac
# ABBA: odd pairs boot baseline first, even pairs patched first, so a
# drift over the run (host load, a slower second boot) does not always
# favour the same kernel.
pair_order() {
	local i ord=()
	for ((i = 0; i < ${#variants[@]}; i++)); do
		if (($1 % 2)); then ord+=("${variants[i]}"); else ord=("${variants[i]}" "${ord[@]}"); fi
	done
	echo "${ord[@]}"
}

# The instruction phase's -icount (INSTR_ICOUNT) and plugin setting
# (INSTR_INSN): BENCH_ICOUNT with the plugin as RIG_INSN says; with
# several vCPUs no -icount (QEMU 7.2 hangs bringing up the second vCPU
# under -icount, both shift=0 and auto: measured) but the plugin on one
# TCG thread, which counts per KB exactly without it (the per-call
# figure is then wall-clock ns).
if ((RIG_SMP > 1)); then
	INSTR_ICOUNT='' INSTR_INSN=1
else
	INSTR_ICOUNT=$BENCH_ICOUNT INSTR_INSN=$RIG_INSN
fi

# dry_qemu PHASE ICOUNT [INSN]: the QEMU command lines of that phase's guests
# (guests_start's dry run into a scratch folder), "qemu PHASE: ..."
dry_qemu() {
	local d
	d=$(mktemp -d)
	RIG_ICOUNT=$2 RIG_INSN=${3:-$RIG_INSN} guests_start "$d" "$RIG_KERNELS/${variants[0]}" | sed -n "/qemu-system-x86_64 /s|^|qemu $1: |p"
	rm -rf "$d"
}

link_choose
if ((RIG_DRY_RUN)); then
	for v in "${variants[@]}"; do "$RIG_TOP/qemu-net/build-kernel.sh" --dry-run "$v"; done
	printf 'sysctls: %s\nicount: %s%s\n' "${sysctls[*]:-none}" "${RIG_ICOUNT:-off}" \
		"${RIG_ICOUNT:+${GUEST_ICOUNT_APPEND:+ (guests +$GUEST_ICOUNT_APPEND)}}"
	printf 'controls: %s\n' "$([[ "$controls" == - ]] && echo "report.py's default" || echo "${controls:-none}")"
	printf 'accel: %s, %s vCPU(s) per guest, %s stream(s)\n' "$RIG_ACCEL" "$RIG_SMP" "$streams"
	((profile == 0)) || printf 'profile: perf record on the sender over each ESP row'"'"'s fixed transfer, in the %s phase\n' \
		"$( ((${#irows[@]})) && echo instruction || echo throughput)"
	if ((auto)); then
		printf 'pairs: auto, %s to %s, until every noisy metric of the targeted rows has its 95 %% interval within +-%s %% or %s min\n' \
			"$AUTO_MIN" "$AUTO_MAX" "$target_ci" "$tlimit"
	fi
	if ((pairs > 0)); then
		printf 'rows: %s\npairs: %s, %ss each, order: %s\n' "${rows[*]}" "$pairs" "$secs" \
			"$(for ((i = 1; i <= pairs; i++)); do printf '%s ' "$(pair_order "$i")"; done)"
	else
		echo "throughput phase: none (--pairs 0)"
	fi
	if ((${#irows[@]})) && [[ -z "$INSTR_ICOUNT" ]]; then
		printf 'instruction phase: %s vCPUs: no -icount (QEMU hangs bringing up a second vCPU under it), the skbt-insn plugin on one TCG thread (per KB exact, per call wall-clock ns), rows: %s\npairs: %s, order: %s\n' \
			"$RIG_SMP" "${irows[*]}" "$ipairs" "$(for ((i = 1; i <= ipairs; i++)); do printf '%s ' "$(pair_order "$i")"; done)"
	elif ((${#irows[@]})); then
		printf 'instruction phase: -icount %s%s, rows: %s\npairs: %s, order: %s\n' \
			"$BENCH_ICOUNT" "${GUEST_ICOUNT_APPEND:+ (guests +$GUEST_ICOUNT_APPEND)}" "${irows[*]}" "$ipairs" \
			"$(for ((i = 1; i <= ipairs; i++)); do printf '%s ' "$(pair_order "$i")"; done)"
	elif [[ "$RIG_ACCEL" == kvm ]]; then
		echo "instruction phase: none (KVM: no -icount; per KB: the throughput pass's /proc/stat CPU, and perf stat cycles and instructions where the guest has a PMU)"
	else
		echo "instruction phase: none"
	fi
	# The guests' QEMU command lines, per phase (kernel not built yet:
	# the installed kernel's path as it will be)
	dry_qemu throughput "$RIG_ICOUNT"
	((${#irows[@]} == 0)) || dry_qemu instructions "$INSTR_ICOUNT" "$INSTR_INSN"
	exit 0
fi

t0=$SECONDS
# Every series is applied before any build: a patch that does not apply
# fails the run in seconds, not after the other kernel's build.
for v in "${variants[@]}"; do
	"$RIG_TOP/qemu-net/build-kernel.sh" --prepare "$v"
done
declare -A kdir
for v in "${variants[@]}"; do
	kdir[$v]=$("$RIG_TOP/qemu-net/build-kernel.sh" "$v")
done
build_s=$((SECONDS - t0))

out=${out:-$RIG_RESULTS/$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out"
log "results in $out"
# The phases as data: the passes each runs on a row (a pass skips the
# rows it does not apply to: no throughput or cost pass for ICMP, no
# accounting or cost pass for a plaintext row, service demand only with
# -icount, perf stat or the instruction plugin, profile with --profile
# in the phase profmode names).
declare -A PHASE_PASSES=(
	[all]="throughput demand acct cost profile"
	[instr]="demand cost profile"
)
# The phase being run: its folder, rows, pairs and passes (mode: a key
# of PHASE_PASSES).
pdir=$out prows=("${rows[@]}") ppairs=$pairs mode=all runs=''
# phase_has PASS: the phase being run has PASS.
phase_has() { [[ " ${PHASE_PASSES[$mode]} " == *" $1 "* ]]; }

# kinfo KERNEL_DIR FIELD: a field of the installed kernel's info file.
kinfo() { sed -n "s/^$2=//p" "$1/info" 2>/dev/null | head -n 1; }

# meta.json: what this run is, written before the first boot, so that a
# run that dies still says how it was made (report.py prints it).
write_meta() {
	local kernels='{}' v series
	for v in "${variants[@]}"; do
		series=$RIG_PATCHES
		[[ "$v" == patched ]] || series=$RIG_BASELINE_PATCHES
		kernels=$(jq -c --arg v "$v" --arg dir "${kdir[$v]}" --arg key "$(kinfo "${kdir[$v]}" key)" \
			--arg rel "$(kinfo "${kdir[$v]}" release)" --arg ref "$(kinfo "${kdir[$v]}" ref)" \
			--arg series "$series" \
			'.[$v] = {dir: $dir, key: $key, release: $rel, ref: $ref,
			          series: (if $series == "" then null else $series end)}' <<<"$kernels")
	done
	jq -n --argjson command "$(python3 -c 'import json, sys; print(json.dumps(sys.argv[1:]))' "${argv[@]}")" \
		--arg started "$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
		--arg rows "${prows[*]}" --argjson pairs "$ppairs" --argjson secs "$secs" \
		--argjson udplen "$udplen" --arg link "$RIG_LINK_USED" --arg link_why "$RIG_LINK_WHY" \
		--arg accel "$RIG_ACCEL" --arg icount "$RIG_ICOUNT" --arg sysctls "${sysctls[*]}" \
		--arg append "${RIG_ICOUNT:+$GUEST_ICOUNT_APPEND}" \
		--arg mode "$mode" --arg instr "$([[ "$mode" == all ]] && ((${#irows[@]})) && echo instr)" \
		--argjson smp "$RIG_SMP" --argjson pin "$RIG_PIN" --argjson streams "$streams" \
		--argjson kernels "$kernels" --argjson build_s "$build_s" --arg controls "$controls" \
		--arg insn "$RIG_INSN" --argjson constants "$(constants_json)" \
		--arg git "$(git -C "$RIG_TOP" describe --always --dirty 2>/dev/null || echo unknown)" \
		--arg cpu "$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)" \
		--argjson cores "$(nproc)" --arg hostkernel "$(uname -r)" \
		--arg qemu "$(qemu-system-x86_64 --version | head -n 1)" \
		'{started_utc: $started, command: $command,
		  phase: (if $mode == "all" then "throughput" else "instructions" end),
		  instr_dir: (if $instr == "" then null else $instr end),
		  rows: ($rows | split(" ")), pairs: $pairs, time_s: $secs, udp_len: $udplen,
		  link: $link, link_why: $link_why, accel: $accel, smp: $smp, pinned: ($pin == 1),
		  streams: $streams,
		  icount: (if $icount == "" then null else $icount end),
		  guest_append: (if $append == "" then null else $append end),
		  sysctls: ($sysctls | split(" ") | map(select(. != ""))),
		  kernels: $kernels, git_describe: $git,
		  host: {cpu_model: $cpu, cores: $cores, kernel: $hostkernel},
		  qemu_version: $qemu, build_seconds: $build_s, constants: $constants,
		  demand: ($constants | with_entries(select(.key | startswith("demand_")))
		           + {insn: $insn}),
		  controls: (if $controls == "-" then null
		             else $controls | split(",") | map(select(. != "")) end)}' >"$pdir/meta.json"
}

# One boot of one kernel: every row, appended to runs.jsonl.
bench_boot() {
	local v=$1 pair=$2
	local run=$pdir/boot-$pair-$v row child p mbps ike esp acct cost demand cpu t
	mkdir -p "$run"
	# This boot's cleanup scope: popped at the end, it stops this boot's
	# guests and nothing else.
	defer_scope_push
	t=$SECONDS
	guests_start "$run" "${kdir[$v]}"
	local boot_s=$((SECONDS - t)) kv g
	for kv in "${sysctls[@]}"; do
		for g in a b; do
			guest_exec "$g" "sysctl -w '$kv'" >&2 ||
				die "$E_USAGE" "guest $g: cannot set sysctl ${kv%%=*}"
		done
	done
	ipsec_start
	acct_prepare "${kdir[$v]}"
	local brows
	mapfile -t brows < <(rows_boot_order "${prows[@]}")
	for row in "${brows[@]}"; do
		row_up "$row" >"$run/ike-up.out"
		p=$ROW_PROTO child=$ROW_CHILD rmode=$ROW_MODE
		ike=$(sed -n 's/^ike_up_seconds=//p' "$run/ike-up.out")
		mbps=null cpu=null
		if phase_has throughput && [[ "$p" != icmp ]]; then # ICMP rows are counted only
			local args=(-t "$secs") s0 s1 r0 r1
			[[ "$p" == udp ]] && args+=(-b 0 -l "$udplen")
			((streams == 1)) || args+=(-P "$streams")
			# both ends' CPU over the pass (acct.sh: cpu_json)
			r0=$(cpu_snap b) s0=$(cpu_snap a)
			mbps=$(iperf_run "$pdir/raw/$pair-$v-$row.json" "$ROW_PEER" "$p" "${args[@]}") ||
				die "$E_TRAFFIC" "row $row on $v (pair $pair) failed; raw: $pdir/raw/$pair-$v-$row.json"
			s1=$(cpu_snap a) r1=$(cpu_snap b)
			cpu=$(cpu_json "$s0" "$s1" "$r0" "$r1" "$pdir/raw/$pair-$v-$row.json") ||
				die "$E_FAIL" "row $row on $v (pair $pair): no CPU figures from the snapshots or $pdir/raw/$pair-$v-$row.json"
		fi
		esp=null acct=null cost=null cost_cow=null demand=null
		# Service demand (only under -icount, where guest time counts
		# instructions): fixed transfer, busy time of both guests.
		if phase_has demand && [[ "$p" != icmp ]] && { [[ -n "$RIG_ICOUNT" ]] || perf_stat_wanted || insn_plugin_wanted; }; then
			demand_row "$row" "$pdir/raw/$pair-$v-$row.demand"
			demand=$(demand_json "$pdir/raw/$pair-$v-$row.demand" "$RIG_ICOUNT")
		fi
		# an ESP row (its child) or a WireGuard row (its link)
		if [[ -n "$child" || "$rmode" == wireguard ]]; then
			[[ -z "$child" ]] || ipsec_check_up || die "$E_IKE" "row $row on $v (pair $pair): the tunnel went down during the run"
			# Counting pass: fixed-size transfer under kprobes, after
			# (never during) the throughput pass.
			if phase_has acct; then
				acct_row "$row" "$pdir/raw/$pair-$v-$row.acct"
				acct=$(acct_json "$pdir/raw/$pair-$v-$row.acct")
			fi
			# Cost passes, each with only its own probes: the row's
			# encrypt function per call (esp_output(), WireGuard's
			# encrypt_packet()), then skb_cow_data() per call.
			if phase_has cost && [[ "$p" != icmp ]]; then
				cost_row "$row" "$pdir/raw/$pair-$v-$row.cost" "$(row_cost_funcs "$rmode")"
				cost=$(cost_json "$pdir/raw/$pair-$v-$row.cost")
				cost_row "$row" "$pdir/raw/$pair-$v-$row.cost-cow" "skb_cow_data -"
				cost_cow=$(cost_json "$pdir/raw/$pair-$v-$row.cost-cow")
			fi
			# Profile pass (--profile): its own transfer, perf on the sender
			if ((profile)) && phase_has profile && [[ "$p" != icmp && "$mode" == "$profmode" ]]; then
				profile_row "$row" "$pdir/profile/$pair-$v-$row.perf.data"
			fi
			if [[ -n "$child" ]]; then
				esp=$(esp_packets b)
				((esp > 0)) || die "$E_TRAFFIC" "row $row: no ESP packets on b's SAs: traffic bypassed the tunnel"
			fi
			row_down "$row"
		fi
		# the row's record (runs.jsonl; report.py reads it)
		jq -nc --argjson pair "$pair" --arg variant "$v" --arg row "$row" --arg link "$RIG_LINK_USED" \
			--argjson streams "$streams" --argjson smp "$RIG_SMP" --argjson mbps "$mbps" --argjson cpu "$cpu" \
			--argjson ike_up_s "${ike:-null}" --argjson esp_packets_rx "$esp" --argjson boot_s "$boot_s" \
			--arg raw "raw/$pair-$v-$row.json" --argjson acct "$acct" --argjson cost "$cost" \
			--argjson cost_cow "$cost_cow" --argjson demand "$demand" '$ARGS.named' >>"$runs"
		printf '  pair %d %-8s %-28s %8s Mbit/s  %s%s%s%s\n' "$pair" "$v" "$row" "$mbps" \
			"$(jq -r 'if . == null then "" else "CPU snd \(.snd_util_pct) % rcv \(.rcv_util_pct) % (\(.snd_us_per_kb) / \(.rcv_us_per_kb) us/KB); " end' <<<"$cpu")" \
			"$(jq -r 'if . == null then "" else "in-place \(.inplace) page-frag \(.pagefrag) cow \(.cow) copied \(.copied_bytes) B per ESP pkt (\(.esp_packets) pkts)" end' <<<"$acct")" \
			"$(jq -r 'if . == null or .calls == 0 then "" else "; esp_output \(.median_ns) ns median [p10 \(.p10_ns), p90 \(.p90_ns)] over \(.calls) calls" end' <<<"$cost")" \
			"$(jq -r 'if . == null then "" else "; demand snd \(.snd_instr_per_kb) rcv \(.rcv_instr_per_kb) instr/KB (\(.source), \(.retransmits) retr)" + (if .snd_cycles_per_kb then ", perf stat snd \(.snd_cycles_per_kb) rcv \(.rcv_cycles_per_kb) cycles/KB" elif .pmu == "none" then ", no PMU" else "" end) end' <<<"$demand")" >&2
	done
	defer_scope_pop
}

# run_phase DIR MODE PAIRS ROW...: one phase's boots into DIR.
run_phase() {
	pdir=$1 mode=$2 ppairs=$3
	shift 3
	prows=("$@")
	mkdir -p "$pdir/raw"
	runs=$pdir/runs.jsonl
	: >"$runs"
	write_meta
	local pair v t=$SECONDS
	for ((pair = 1; pair <= ppairs; pair++)); do
		read -ra order <<<"$(pair_order "$pair")"
		for v in "${order[@]}"; do
			bench_boot "$v" "$pair"
		done
		if ((auto)) && [[ "$mode" == all ]] && ((pair >= AUTO_MIN)); then
			auto_more "$pair" $((SECONDS - t)) && ppairs=$((pair + 1))
		fi
	done
	meta_set total_seconds "$((SECONDS - t))"
	((auto == 0)) || [[ "$mode" != all ]] || meta_set pairs "$ppairs"
}

# meta_set KEY JSON: KEY = JSON in the phase's meta.json.
meta_set() {
	jq --argjson v "$2" ".$1 = \$v" "$pdir/meta.json" >"$pdir/meta.json.tmp"
	mv "$pdir/meta.json.tmp" "$pdir/meta.json"
}

# auto_more PAIRS ELAPSED_S: --pairs auto after PAIRS pairs: true when
# one more pair is wanted (an interval is still wider than --target-ci,
# and another pair fits in --time-limit and AUTO_MAX); the state and the
# reason in meta.json's pairs_auto either way.
auto_more() {
	local n=$1 el=$2 st rc=0 why more=1
	st=$(python3 "$RIG_TOP/net-tests/report.py" --ci-status "$target_ci" "$pdir") || rc=$?
	((rc <= 1)) || die "$E_FAIL" "report.py --ci-status failed (exit $rc) on $pdir"
	why=$(auto_decide "$n" "$el" "$rc" "$target_ci" "$tlimit" "$AUTO_MAX") || more=0
	log "pairs auto after $n pair(s), ${el}s: $(jq -r '.text' <<<"$st"); $why"
	meta_set pairs_auto "$(jq -c --arg why "$why" --argjson more "$more" --argjson n "$n" --argjson t "$target_ci" \
		--argjson lim "$tlimit" --argjson min "$AUTO_MIN" --argjson max "$AUTO_MAX" --argjson el "$el" \
		'{target_ci_pct: $t, time_limit_min: $lim, min_pairs: $min, max_pairs: $max,
		  pairs_done: $n, elapsed_s: $el, stopped: (if $more == 1 then null else $why end),
		  last_check: ., reason: $why}' <<<"$st")"
	((more))
}

# report_phase: the phase's report (report.py: table, verdict.json, which
# reads the controls from meta.json); returns report.py's status.
report_phase() {
	local args=(--build-seconds "$build_s" --icount "$RIG_ICOUNT")
	if ((failreg)); then args+=(--fail-on-regression); fi
	python3 "$RIG_TOP/net-tests/report.py" "${args[@]}" "$pdir"
}

# report_status RC DIR: report.py's exit status as the run's.
report_status() {
	case $1 in
	0) ;;
	1) die "$E_FAIL" "--fail-on-regression: a targeted row is worse or a control row moved (see above; $2/verdict.json)" ;;
	*) die "$E_FAIL" "report.py failed (exit $1) on $2" ;;
	esac
}

rc=0 irc=0
# --profile: in the instruction phase when there is one (cpu-clock then
# ticks in guest instructions), else in the throughput phase
profmode=all
((${#irows[@]} == 0)) || profmode=instr
((profile == 0)) || profile_need_perf
# profile_phase: the phase's profiles reported (top symbols, perf diff)
profile_phase() {
	((profile)) && [[ "$mode" == "$profmode" ]] || return 0
	profile_report "$pdir/profile" || die "$E_FAIL" "perf report/diff failed on $pdir/profile"
	log "profiles: $pdir/profile ($(cd "$pdir/profile" && ls -- *.diff.txt 2>/dev/null | tr '\n' ' '))"
}
if ((pairs > 0)); then
	run_phase "$out" all "$pairs" "${rows[@]}"
	profile_phase
	report_phase || rc=$?
fi
if ((${#irows[@]})); then
	RIG_ICOUNT=$INSTR_ICOUNT RIG_INSN=$INSTR_INSN
	if [[ -n "$RIG_ICOUNT" ]]; then
		log "instruction phase: $ipairs pair(s) under -icount $RIG_ICOUNT, rows ${irows[*]}"
	else
		log "instruction phase: $ipairs pair(s) with $RIG_SMP vCPUs, no -icount (QEMU hangs bringing up a second vCPU under it): the skbt-insn plugin on one TCG thread, rows ${irows[*]}"
	fi
	run_phase "$out/instr" instr "$ipairs" "${irows[@]}"
	profile_phase
	report_phase || irc=$?
fi
log "total ${SECONDS}s; results in $out${irows[*]:+ and $out/instr}"
report_status "$rc" "$out"
report_status "$irc" "$out/instr"
