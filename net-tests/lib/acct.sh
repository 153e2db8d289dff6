# shellcheck shell=bash
# Host side of the ESP output accounting (net-tests/guest/acct.sh): a
# fixed-size transfer with kprobe counting on the sender (guest a).

[[ -z "${RIG_ACCT_SH:-}" ]] || return 0
RIG_ACCT_SH=1
# shellcheck source=net-tests/lib/ipsec.sh
. "$(dirname "${BASH_SOURCE[0]}")/ipsec.sh"

# Transfer sizes: ACCT_*, DEMAND_* (net-tests/constants.sh).
ACCT_PING_SIZES=(56 1000 1400 3000)

# acct_prepare KERNEL_DIR: offsets for that kernel into guest a's share.
acct_prepare() {
	"$RIG_TOP/net-tests/offsets/gen-offsets.sh" "$1" >"$GUEST_RUN/a/offsets.env"
}

# transfer_cmd ROW TCP_BYTES UDP_BYTES JSON [OPTS [TCP_OPTS [UDP_OPTS]]]:
# the row's fixed-size iperf3 transfer (TCP or UDP) from guest a, its
# JSON to JSON in the guest; OPTS are more iperf3 options, TCP_OPTS more
# for TCP only, UDP_OPTS UDP's rate options (default "-b 200M").
transfer_cmd() {
	local peer o=${5:+ $5}
	row_decode "$1" || return 1
	peer=$ROW_PEER
	case "$ROW_PROTO" in
	tcp) echo "iperf3 -c $peer$o${6:+ $6} -n $2 -J >$4" ;;
	udp) echo "iperf3 -c $peer$o -u ${7:--b 200M} -l $ACCT_UDP_LEN -n $3 -J >$4" ;;
	*) return 1 ;;
	esac
}

# acct_cmd ROW: the row's fixed-size transfer, as a guest shell command.
acct_cmd() {
	local row=$1 p f peer cmd s
	row_decode "$row" || return 1
	p=$ROW_PROTO f=$ROW_FAMILY peer=$ROW_PEER
	case "$p" in
	tcp | udp) cmd=$(transfer_cmd "$row" "$ACCT_TCP_BYTES" "$ACCT_UDP_BYTES" /rig/acct-iperf.json) ;;
	icmp)
		cmd=""
		for s in "${ACCT_PING_SIZES[@]}"; do
			cmd+="$(ping_cmd "$f") -q -A -c 10 -s $s $peer >/dev/null && "
		done
		cmd+=true
		;;
	esac
	echo "$cmd"
}

# acct_pass WHAT START-CMD STOP-CMD ROW OUTFILE: the row's fixed transfer
# in guest a between START-CMD and STOP-CMD; STOP-CMD's output to OUTFILE.
acct_pass() {
	local what=$1 start=$2 stop=$3 row=$4 outf=$5
	guest_exec a "$start" >&2 ||
		die "$E_FAIL" "could not set up the $what probes in guest a"
	guest_exec -t 180 a "$(acct_cmd "$row")" >&2 || {
		guest_exec a "$stop" >/dev/null || true
		die "$E_TRAFFIC" "$what transfer for $row failed"
	}
	guest_exec a "$stop" >"$outf" ||
		die "$E_FAIL" "could not read the $what counters in guest a"
}

# acct_row ROW OUTFILE: path counts (guest/acct.sh) over the row's fixed
# transfer, KEY=VALUE in OUTFILE (on the host).  The SA must be up.
acct_row() {
	acct_pass accounting "$G/acct.sh start /rig/offsets.env" "$G/acct.sh stop" "$@"
}

# cost_row ROW OUTFILE [FUNCS]: per-call time (guest/cost.sh) of FUNCS
# ("FUNC4 FUNC6", "-" for none; default esp_output() and esp6_output())
# over the same transfer, in a pass of its own (no other probes active).
cost_row() {
	acct_pass cost "$G/cost.sh start ${3:-}" "$G/cost.sh stop" "$1" "$2"
}

# row_cost_funcs MODE: the encrypt functions a row's cost pass times
# (cost.sh's FUNC4 FUNC6): WireGuard's encrypt_packet() on its rows
# (both families), ESP's default otherwise.
row_cost_funcs() {
	[[ "$1" != wireguard ]] || echo "encrypt_packet -"
}

# cost_json FILE: {"calls":N,"p10_ns":..,"median_ns":..,"p90_ns":..}
cost_json() {
	awk -F= 'NF==2{sub(/^cost_/, "", $1); v[++n] = "\"" $1 "\":" $2}
	END{printf "{"; for (i = 1; i <= n; i++) printf "%s%s", v[i], (i < n ? "," : ""); printf "}"}' "$1"
}

# acct_json FILE: the counts as a JSON object (KEY_total), with per-packet
# ratios (per ESP packet, or on a WireGuard row per packet WireGuard
# encrypted); segment_copied_bytes (skb_segment's payload copy without
# SG), all_copied_bytes (every counted copy, it included), cow_copies
# (skb_cow_data() calls on a cloned or paged skb, any caller) and
# head_bytes (the kmalloc bucket bytes of every skb head allocated,
# any caller) per packet too.
acct_json() {
	awk -F= 'NF==2{v[$1]=$2; k[++n]=$1}
	NF==2 && $1 ~ /^cow_copies\./ {cc += $2}
	NF==2 && $1 ~ /^head_bytes\./ {hb += $2}
	END{
		e = v["esp_packets"] + 0
		if (e == 0) e = v["wg_packets"] + 0
		printf "{"
		for (i = 1; i <= n; i++) printf "\"%s_total\":%s,", k[i], v[k[i]]
		if (e > 0)
			printf "\"inplace\":%.4f,\"pagefrag\":%.4f,\"privhead\":%.4f,\"cow\":%.4f,\"copied_bytes\":%.1f,\"geniv_copied_bytes\":%.1f,\"segment_copied_bytes\":%.1f,\"all_copied_bytes\":%.1f,\"cow_copies\":%.4f,\"head_bytes\":%.1f,",
				v["inplace"]/e, v["pagefrag"]/e, v["privhead"]/e, v["cow"]/e, v["copied_bytes"]/e, v["geniv_copied_bytes"]/e,
				v["segment_copied_bytes"]/e, v["all_copied_bytes"]/e, cc/e, hb/e
		printf "\"esp_packets\":%d,\"packets\":%d}", v["esp_packets"] + 0, e
	}' "$1"
}

# Service demand (bench --icount and its instruction phase): guest CPU
# work of sender and receiver per KB over a fixed-size transfer.
#
# Instructions, counted (RIG_INSN, the default under -icount): the
# skbt-insn QEMU plugin counts every instruction each guest executes and
# writes the count when the guest runs skbt-mark; the pass marks after
# its first snapshot and before its second, in each guest.  Everything
# the CPU executed in between is counted: softirqs, the idle loop's
# entries and exits (which tick-sched's busy time below leaves out: its
# idle period starts before the governor and the tick stop run), and
# nothing that the host's timing does to the guest clock.  Measured on
# the baseline (3 boots x 2 transfers, docs/history.md): the receiver's
# spread on the v6 tunnel and sha rows fell from 8.5-9 % (busy time) to
# 1.4-1.5 %.
#
# Busy time (without the plugin, and kept beside it as a cross-check):
# under -icount the guest's clock counts instructions (2^shift ns each),
# so the busy time is an instruction count.  The busy time is
# the clock minus the idle and iowait sleep times tick-sched keeps in ns
# per CPU (/proc/timer_list, NO_HZ): exact where /proc/stat's cpu line
# (user+nice+system+irq+softirq) samples whole 10 ms ticks on timer
# interrupts (2-37 % spread across boots on the ESP rows).  Kept beside
# it as a cross-check (snd_ticks/rcv_ticks).  A CPU idle at the moment
# of reading has its current idle period not yet added, so the figure is
# exact only for the CPU doing the reading: exact with 1 vCPU (RIG_SMP=1,
# the default), an over-estimate otherwise.  The whole guest is counted
# (iperf3, softirq, charon's idle wakeups).  Plaintext TCP on the tap
# link costs ~1,300 instructions per KB, so those rows send more
# (DEMAND_PLAIN_TCP_BYTES).
#
# A fixed work mix, so that the figure is the kernel's and not the
# interleaving's (net-tests/studies/demand-spread.sh, docs/history.md):
# - b's snapshots are taken by a job of b's own around a one-off iperf3
#   server (-1, DEMAND_PORT): b's job loop does not poll (10 wakeups
#   a second) while the transfer runs, as it did when the host took them;
# - TCP with one ACK per segment (DEMAND_QUICKACK: a quickack host
#   route on b towards a, GRO off on b): with delayed ACKs the receiver
#   sent between 1 ACK per 3.6 and per 20 segments from one transfer to
#   the next, and the sender decrypts every one of them; with GRO (tunnel
#   mode's gro_cells, plaintext) TCP sees batches whose size is timing;
# - UDP at a rate the receiver keeps up with (DEMAND_UDP_RATE, 50M):
#   at 200 Mbit/s under -icount the receiver lost 0.2-41 % and its figure
#   spread 43 % across transfers, at 50 Mbit/s 0-0.3 % and 3.3 %;
# - each side per KB it handled: the sender per KB sent, the receiver
#   per KB received (a loss is paid for by the sender only);
# - TCP's window bounded (DEMAND_WINDOW, iperf3 -w; 0: not) so that fewer
#   segments are in flight than the receiver's queues hold.

# The guest command snapshotting its CPU time: /proc/stat's cpu line and
# "now NS" and per CPU "idle NS" (idle + iowait sleep) from timer_list,
# TCP's segment counters ("segs InSegs OutSegs RetransSegs"), and what
# says how the work was batched: interrupts ("intr N", /proc/stat),
# context switches ("ctxt N") and NET_RX softirqs ("netrx N", all CPUs).
DEMAND_SNAP="awk '\$1 == \"cpu\" || \$1 == \"ctxt\" { print } \$1 == \"intr\" { print \$1, \$2 }' /proc/stat; sed -n 's/^now at \([0-9]*\) nsecs\$/now \1/p; s/^ *\.\(idle\|iowait\)_sleeptime *: *\([0-9]*\) nsecs\$/\1 \2/p' /proc/timer_list; awk '\$1 == \"Tcp:\" && \$2 ~ /^[0-9]/ { print \"segs\", \$11, \$12, \$13 }' /proc/net/snmp; awk '\$1 == \"NET_RX:\" { n = 0; for (i = 2; i <= NF; i++) n += \$i; print \"netrx\", n }' /proc/softirqs"

# The marker the skbt-insn plugin (RIG_INSN) answers with the guest's
# instruction count, in the guest's share of the repository.
INSN_MARK=/src/net-tests/tools/skbt-mark

# mark_deltas LOG FROM: what a plugin's counts grew by between the two
# marks it wrote to LOG (insn.log: instructions; cache.log: accesses,
# L1D and L2 misses) after LOG's first FROM lines, one number per
# column; fails unless there are exactly two.
mark_deltas() {
	awk -v from="$2" 'NR > from { n++; for (i = 1; i <= NF; i++) v[n, i] = $i; k = NF }
	END {
		if (n != 2) exit 1
		for (i = 1; i <= k; i++) printf "%s%.0f", (i > 1 ? " " : ""), v[2, i] - v[1, i]
		print ""
	}' "$1"
}

# snap_busy SNAPSHOT: "TICKS NS IN OUT RETR INTR CTXT NETRX": the busy
# ticks of the cpu line, the busy ns: CPUs x clock - idle - iowait (0
# without timer_list figures), TCP's InSegs, OutSegs, RetransSegs, and
# the interrupt, context switch and NET_RX softirq counts.
snap_busy() {
	awk '$1 == "cpu" { t = $2 + $3 + $4 + $7 + $8 }
	$1 == "now" { now = $2 }
	$1 == "idle" { idle += $2; n++ }
	$1 == "iowait" { idle += $2 }
	$1 == "segs" { si = $2; so = $3; sr = $4 }
	$1 == "intr" { ir = $2 }
	$1 == "ctxt" { cs = $2 }
	$1 == "netrx" { nr = $2 }
	END { printf "%d %.0f %d %d %d %d %d %d\n", t, (n && now) ? n * now - idle : 0, si, so, sr, ir, cs, nr }' <<<"$1"
}

# job_running GUEST: the guest's job loop is running a job (one taken,
# no status yet).
job_running() {
	local f
	for f in "$GUEST_RUN/$1"/jobs/*.run; do
		[[ -f "$f" && ! -f "${f%.run}.rc" ]] && return 0
	done
	return 1
}

# demand_route add|del ROW: TCP rows with DEMAND_QUICKACK=1: guest
# b ACKs every segment TCP sees (a quickack host route towards the row's
# source on the row's device) and TCP sees every segment (GRO off on b's
# eth0, and on a functional row's own link device, whose gro_cells would
# merge the decapsulated segments; xfrm's tunnel-mode gro_cells follow
# eth0), or back; other rows: nothing.
demand_route() {
	[[ "$DEMAND_QUICKACK" == 1 && "$ROW_PROTO" == tcp ]] || return 0
	local ip a=$ROW_SRC dev=$ROW_DEV devs=eth0 defer=/proc/sys/net/ipv4/tcp_backlog_ack_defer
	ip="/usr/sbin/ip $(family_opt "$ROW_FAMILY")"
	# 6.7+ (6.12): ACKs of segments processed from the socket backlog
	# wait for release_sock(), quickack route or not (upstream "tcp:
	# defer regular ACK while processing socket backlog"); measured on
	# 6.12: 5,518 ACKs for 6,220 segments.  Its sysctl turns that off
	# (1 is its default); 6.1 has neither.
	[[ "$dev" == eth0 ]] || devs+=" $dev"
	case "$1" in
	add) guest_exec b "$ip route replace $a dev $dev quickack 1 && for d in $devs; do ethtool -K \$d gro off; done && { [ ! -e $defer ] || echo 0 >$defer; }" ;;
	del) guest_exec b "$ip route del $a dev $dev && for d in $devs; do ethtool -K \$d gro on; done && { [ ! -e $defer ] || echo 1 >$defer; }" ;;
	esac >&2 || die "$E_FAIL" "guest b: cannot $1 the quickack route to $a or switch GRO for $2"
}

# demand_row ROW OUTFILE: KEY=VALUE (bytes_sent, bytes (received),
# retransmits, snd_ticks, rcv_ticks, snd_busy_ns, rcv_busy_ns,
# snd_segs_in, snd_segs_out, rcv_segs_in, rcv_segs_out, snd_intr,
# rcv_intr, snd_ctxt, rcv_ctxt, snd_netrx, rcv_netrx, and with the
# skbt-insn plugin snd_insn, rcv_insn: instructions between the marks)
# in OUTFILE; the iperf3 JSON next to it (OUTFILE.json).
demand_row() {
	local row=$1 outf=$2 cmd tcp=$DEMAND_TCP_BYTES tcpo="" udpr="-b $DEMAND_UDP_RATE" a0 a1 b0 b1 out bjob rc=0 bytes sent
	local bout=$GUEST_RUN/b/demand-job.out
	local at0 an0 ai0 ao0 ar0 ac0 ax0 at1 an1 ai1 ao1 ar1 ac1 ax1
	local bt0 bn0 bi0 bo0 br0 bc0 bx0 bt1 bn1 bi1 bo1 br1 bc1 bx1
	local snap0=$DEMAND_SNAP snap1=$DEMAND_SNAP plugin=0 la lb ca=-1 cb=-1
	# with the plugin: a mark after the first snapshot and before the
	# second, so that only the transfer is between them
	if [[ -f "$GUEST_RUN/a/insn.log" && -f "$GUEST_RUN/b/insn.log" ]]; then
		plugin=1 snap0+="; $INSN_MARK" snap1="$INSN_MARK; $DEMAND_SNAP"
		la=$(wc -l <"$GUEST_RUN/a/insn.log") lb=$(wc -l <"$GUEST_RUN/b/insn.log")
		# and with RIG_INSN=cache the skbt-cache plugin's misses
		[[ ! -f "$GUEST_RUN/a/cache.log" ]] || ca=$(wc -l <"$GUEST_RUN/a/cache.log")
		[[ ! -f "$GUEST_RUN/b/cache.log" ]] || cb=$(wc -l <"$GUEST_RUN/b/cache.log")
	fi
	row_decode "$row" || return 1
	[[ "$ROW_MODE" != plain ]] || tcp=$DEMAND_PLAIN_TCP_BYTES
	[[ "$DEMAND_WINDOW" == 0 ]] || tcpo="-w $DEMAND_WINDOW"
	if [[ "$DEMAND_RATE" != 0 ]]; then
		# TCP's own pacing (SO_MAX_PACING_RATE), iperf3's for UDP
		tcpo+=" --fq-rate $DEMAND_RATE"
		udpr="-b $DEMAND_RATE --pacing-timer 100"
		tcp=$DEMAND_PACED_BYTES
	fi
	# RIG_STREAMS (bench --streams): that many flows, the bytes shared
	local o="-p $DEMAND_PORT"
	((RIG_STREAMS == 1)) || o+=" -P $RIG_STREAMS"
	cmd=$(transfer_cmd "$row" "$tcp" "$DEMAND_UDP_BYTES" /rig/demand-iperf.json \
		"$o" "$tcpo" "$udpr") || return 0
	demand_route add "$row"
	# b: snapshot, a one-off server, snapshot, in one job (its own
	# timeout ends it if a never connects)
	# RIG_PERF_STAT: each side's transfer under perf stat, all CPUs
	local ps='' acmd=$cmd
	if perf_stat_wanted; then
		ps="perf stat -a -x, -e cycles,instructions -o /rig/demand-perfstat.txt -- "
		acmd="${ps}sh -c '$cmd'"
		rm -f "$GUEST_RUN"/{a,b}/demand-perfstat.txt
	fi
	guest_exec -t 330 b "$snap0; echo @; ${ps}timeout 300 iperf3 -s -1 -p $DEMAND_PORT >/rig/demand-server.log 2>&1; rc=\$?; echo @; $snap1; exit \$rc" >"$bout" &
	bjob=$!
	# until b runs that job, then a second for its server to listen: a
	# fixed wait, since b cannot be asked while the job runs and a probe
	# connection would use up the one-off server
	slowwait 30 job_running b || die "$E_FAIL" "guest b: the service-demand server job did not start"
	sleep 1
	out=$(guest_exec -t 300 a "$snap0; echo @; $acmd; rc=\$?; echo @; $snap1; exit \$rc") || rc=$?
	wait "$bjob" || { ((rc)) || rc=$?; }
	demand_route del "$row"
	if ((rc)); then
		sed 's/^/    b: /' "$bout" >&2
		die "$E_TRAFFIC" "service demand transfer for $row failed (status $rc); server log: $GUEST_RUN/b/demand-server.log"
	fi
	# before the first marker, after the second (the transfer's own
	# output, if any, between them)
	a0=$(awk '/^@$/ { exit } { print }' <<<"$out")
	a1=$(awk 'f; /^@$/ && ++n == 2 { f = 1 }' <<<"$out")
	b0=$(awk '/^@$/ { exit } { print }' "$bout")
	b1=$(awk 'f; /^@$/ && ++n == 2 { f = 1 }' "$bout")
	[[ "$a0" == *cpu* && "$a1" == *cpu* && "$b0" == *cpu* && "$b1" == *cpu* ]] ||
		die "$E_FAIL" "no CPU time snapshot around the transfer for $row: a: $out"
	read -r at0 an0 ai0 ao0 _ ar0 ac0 ax0 <<<"$(snap_busy "$a0")"
	read -r at1 an1 ai1 ao1 _ ar1 ac1 ax1 <<<"$(snap_busy "$a1")"
	read -r bt0 bn0 bi0 bo0 _ br0 bc0 bx0 <<<"$(snap_busy "$b0")"
	read -r bt1 bn1 bi1 bo1 _ br1 bc1 bx1 <<<"$(snap_busy "$b1")"
	cp "$GUEST_RUN/a/demand-iperf.json" "$outf.json"
	read -r sent bytes _ <<<"$(iperf_bytes "$outf.json")"
	[[ "$sent" =~ ^[0-9]+$ && "$bytes" =~ ^[0-9]+$ ]] ||
		die "$E_TRAFFIC" "service demand transfer for $row: no byte count in $outf.json"
	printf 'bytes_sent=%s\nbytes=%s\nretransmits=%s\nsnd_ticks=%s\nrcv_ticks=%s\nsnd_busy_ns=%s\nrcv_busy_ns=%s\nsnd_segs_in=%s\nsnd_segs_out=%s\nrcv_segs_in=%s\nrcv_segs_out=%s\n' \
		"$sent" "$bytes" "$(jq -r '.end.sum_sent.retransmits // 0' "$outf.json")" \
		"$((at1 - at0))" "$((bt1 - bt0))" \
		"$(((an0 && an1) ? an1 - an0 : 0))" "$(((bn0 && bn1) ? bn1 - bn0 : 0))" \
		"$((ai1 - ai0))" "$((ao1 - ao0))" "$((bi1 - bi0))" "$((bo1 - bo0))" >"$outf"
	printf 'snd_intr=%s\nrcv_intr=%s\nsnd_ctxt=%s\nrcv_ctxt=%s\nsnd_netrx=%s\nrcv_netrx=%s\n' \
		"$((ar1 - ar0))" "$((br1 - br0))" "$((ac1 - ac0))" "$((bc1 - bc0))" "$((ax1 - ax0))" "$((bx1 - bx0))" >>"$outf"
	[[ -z "$ps" ]] || perf_stat_read "$row" >>"$outf"
	((plugin)) || return 0
	local ia ib
	if ! ia=$(mark_deltas "$GUEST_RUN/a/insn.log" "$la") || ! ib=$(mark_deltas "$GUEST_RUN/b/insn.log" "$lb"); then
		die "$E_FAIL" "service demand for $row: the skbt-insn plugin did not write two marks per guest (insn.log in $GUEST_RUN/a and b)"
	fi
	printf 'snd_insn=%s\nrcv_insn=%s\n' "$ia" "$ib" >>"$outf"
	((ca >= 0 && cb >= 0)) || return 0
	local side g n d acc l1 l2
	for side in snd:a:$ca rcv:b:$cb; do
		IFS=: read -r side g n <<<"$side"
		d=$(mark_deltas "$GUEST_RUN/$g/cache.log" "$n") ||
			die "$E_FAIL" "service demand for $row: the skbt-cache plugin did not write two marks in $GUEST_RUN/$g/cache.log"
		read -r acc l1 l2 <<<"$d"
		printf '%s_data_accesses=%s\n%s_l1d_misses=%s\n%s_l2_misses=%s\n' "$side" "$acc" "$side" "$l1" "$side" "$l2" >>"$outf"
	done
}

# perf_stat_wanted: RIG_PERF_STAT=1, or auto under KVM (where guest
# time is real time and a vPMU counts cycles and instructions).
perf_stat_wanted() {
	case "$RIG_PERF_STAT" in
	1) return 0 ;;
	auto) [[ "$RIG_ACCEL" == kvm ]] ;;
	*) return 1 ;;
	esac
}

# perf_stat_read ROW: KEY=VALUE lines from both guests' perf stat -x,
# output of the service-demand pass: snd_pmu_cycles, snd_pmu_insn,
# rcv_pmu_cycles, rcv_pmu_insn, or pmu=none (and a message naming the
# guest and what perf said) when a guest's PMU does not count them:
# TCG has none; under KVM, QEMU -cpu host gives one where the host lets
# guests use its counters.
perf_stat_read() {
	local g side f c i
	for g in a b; do
		side=snd
		[[ "$g" == a ]] || side=rcv
		f=$GUEST_RUN/$g/demand-perfstat.txt
		IFS='|' read -r c i < <(awk -F, '$3 ~ /^cycles/ { c = $1 } $3 ~ /^instructions/ { i = $1 } END { print (c == "" ? "missing" : c) "|" (i == "" ? "missing" : i) }' "$f" 2>/dev/null || echo "no output|no output")
		if [[ "$c" =~ ^[0-9]+$ && "$i" =~ ^[0-9]+$ ]]; then
			printf '%s_pmu_cycles=%s\n%s_pmu_insn=%s\n' "$side" "$c" "$side" "$i"
		else
			printf 'pmu=none\n'
			echo "  row $1: guest $g has no PMU counts (perf stat: cycles $c, instructions $i; TCG has no PMU, KVM gives one with -cpu host where the host lends its counters): no cycles or instructions per KB" >&2
		fi
	done
}

# demand_json FILE ICOUNT-SPEC: {"bytes_sent","bytes","retransmits","snd_ticks","rcv_ticks",
# "snd_busy_ns","rcv_busy_ns","source","snd_segs_in","snd_segs_out",
# "rcv_segs_in","rcv_segs_out","snd_intr","rcv_intr","snd_ctxt","rcv_ctxt",
# "snd_netrx","rcv_netrx"[,"snd_insn","rcv_insn"][, the skbt-cache counts
# and "snd_l1d_miss_per_kb", "snd_l2_miss_per_kb", "rcv_..."],
# "snd_instr_per_kb","rcv_instr_per_kb"}; instructions per KB sent (snd) or received (rcv;
# "bytes"): counted by the skbt-insn plugin where it ran (source
# "insn"), else guest busy ns / 2^shift from the timer_list busy ns
# (source "timer_list") or the ticks (source "ticks"), null when shift
# is not a number (e.g. shift=auto).
demand_json() {
	local shift
	shift=$(sed -n 's/.*shift=\([0-9][0-9]*\).*/\1/p' <<<"$2")
	awk -F= -v shift="${shift:-x}" 'NF==2{v[$1]=$2}
	END{
		kb = v["bytes"] / 1024 # received
		skb = ("bytes_sent" in v ? v["bytes_sent"] : v["bytes"]) / 1024
		exact = v["snd_busy_ns"] > 0 && v["rcv_busy_ns"] > 0
		insn = v["snd_insn"] > 0 && v["rcv_insn"] > 0
		printf "{\"bytes_sent\":%d,\"bytes\":%d,\"retransmits\":%d,\"snd_ticks\":%d,\"rcv_ticks\":%d,\"snd_busy_ns\":%.0f,\"rcv_busy_ns\":%.0f,\"source\":\"%s\"", skb * 1024, v["bytes"], v["retransmits"], v["snd_ticks"], v["rcv_ticks"], v["snd_busy_ns"], v["rcv_busy_ns"], insn ? "insn" : exact ? "timer_list" : "ticks"
		# TCP segments in and out of each side (ACKs: snd_segs_in)
		if ("snd_segs_in" in v)
			printf ",\"snd_segs_in\":%d,\"snd_segs_out\":%d,\"rcv_segs_in\":%d,\"rcv_segs_out\":%d", v["snd_segs_in"], v["snd_segs_out"], v["rcv_segs_in"], v["rcv_segs_out"]
		# how the work was batched: interrupts, context switches, NET_RX softirqs
		if ("snd_intr" in v)
			printf ",\"snd_intr\":%d,\"rcv_intr\":%d,\"snd_ctxt\":%d,\"rcv_ctxt\":%d,\"snd_netrx\":%d,\"rcv_netrx\":%d", v["snd_intr"], v["rcv_intr"], v["snd_ctxt"], v["rcv_ctxt"], v["snd_netrx"], v["rcv_netrx"]
		if (insn)
			printf ",\"snd_insn\":%.0f,\"rcv_insn\":%.0f", v["snd_insn"], v["rcv_insn"]
		# perf stat (RIG_PERF_STAT): PMU counts of each guest, per KB
		if ("pmu" in v)
			printf ",\"pmu\":\"none\""
		else if ("snd_pmu_cycles" in v && "rcv_pmu_cycles" in v && kb > 0)
			printf ",\"pmu\":\"perf_stat\",\"snd_cycles_per_kb\":%.0f,\"rcv_cycles_per_kb\":%.0f,\"snd_pmu_instr_per_kb\":%.0f,\"rcv_pmu_instr_per_kb\":%.0f", v["snd_pmu_cycles"] / skb, v["rcv_pmu_cycles"] / kb, v["snd_pmu_insn"] / skb, v["rcv_pmu_insn"] / kb
		# skbt-cache (RIG_INSN=cache): simulated data-cache misses, per
		# KB and per TCP segment (or datagram) the sender sent
		if ("snd_l1d_misses" in v && "rcv_l1d_misses" in v && kb > 0) {
			printf ",\"snd_data_accesses\":%.0f,\"snd_l1d_misses\":%.0f,\"snd_l2_misses\":%.0f,\"rcv_data_accesses\":%.0f,\"rcv_l1d_misses\":%.0f,\"rcv_l2_misses\":%.0f", v["snd_data_accesses"], v["snd_l1d_misses"], v["snd_l2_misses"], v["rcv_data_accesses"], v["rcv_l1d_misses"], v["rcv_l2_misses"]
			printf ",\"snd_l1d_miss_per_kb\":%.2f,\"snd_l2_miss_per_kb\":%.2f,\"rcv_l1d_miss_per_kb\":%.2f,\"rcv_l2_miss_per_kb\":%.2f", v["snd_l1d_misses"] / skb, v["snd_l2_misses"] / skb, v["rcv_l1d_misses"] / kb, v["rcv_l2_misses"] / kb
		}
		if (insn && kb > 0)
			printf ",\"snd_instr_per_kb\":%.0f,\"rcv_instr_per_kb\":%.0f", v["snd_insn"] / skb, v["rcv_insn"] / kb
		else if (shift != "x" && kb > 0) {
			if (exact) {
				snd = v["snd_busy_ns"]; rcv = v["rcv_busy_ns"]
			} else {
				snd = v["snd_ticks"] * 1e7; rcv = v["rcv_ticks"] * 1e7 # USER_HZ ticks
			}
			printf ",\"snd_instr_per_kb\":%.0f,\"rcv_instr_per_kb\":%.0f", snd / (2 ^ shift) / skb, rcv / (2 ^ shift) / kb
		} else
			printf ",\"snd_instr_per_kb\":null,\"rcv_instr_per_kb\":null"
		printf "}"
	}' "$1"
}

# CPU cost of the throughput pass on both ends, as netperf -cC reports
# it: each guest's /proc/stat cpu line (all its vCPUs) before and after
# the iperf3 run, taken b, a, (transfer), a, b; busy = user + nice +
# system + irq + softirq (steal is the host's, not the guest's work),
# in USER_HZ ticks (10 ms).  Utilisation is busy time over the time
# between the two snapshots (/proc/uptime) times the vCPUs, as netperf
# measures over its interval; service demand busy us per KB: the
# sender's per KB sent, the receiver's per KB received.  The snapshots
# bracket the transfer by the job loop's latency (well under a second
# of a mostly idle guest), so a saturated side reads a little under
# 100 %, never over it.  Under TCG the
# guests' "CPU" is a host thread's share of QEMU's emulation: context
# next to the instruction counts; under KVM it is the figure.
CPU_SNAP="awk '\$1 == \"cpu\" { print } \$1 ~ /^cpu[0-9]/ { n++ } END { print \"ncpu\", n }' /proc/stat; awk '{ print \"uptime\", \$1 }' /proc/uptime"

# cpu_snap GUEST: that guest's CPU_SNAP output (fails the run without).
cpu_snap() {
	local s
	if ! s=$(guest_exec "$1" "$CPU_SNAP") || [[ "$s" != cpu* ]]; then
		die "$E_FAIL" "guest $1: cannot read /proc/stat for the CPU figures"
	fi
	printf '%s\n' "$s"
}

# snap_interval SNAP0 SNAP1 DEFAULT: seconds between two CPU_SNAP
# snapshots (their uptime lines), or DEFAULT without them.
snap_interval() {
	awk -v a="$(sed -n 's/^uptime //p' <<<"$1")" -v b="$(sed -n 's/^uptime //p' <<<"$2")" -v d="$3" \
		'BEGIN { print (a != "" && b != "" && b > a) ? b - a : d }'
}

# iperf_bytes JSON: "SENT RECEIVED SECONDS" of an iperf3 -J run: TCP's
# bytes sent and received; UDP's bytes sent and those not lost; the
# receiver's seconds.
iperf_bytes() {
	jq -r 'if .start.test_start.protocol == "UDP"
		then [.end.sum.bytes, .end.sum.bytes * (1 - .end.sum.lost_percent / 100), .end.sum.seconds]
		else [.end.sum_sent.bytes, .end.sum_received.bytes, .end.sum_received.seconds] end
		| "\(.[0] | floor) \(.[1] | floor) \(.[2])"' "$1"
}

# cpu_json SND0 SND1 RCV0 RCV1 IPERF_JSON: the throughput pass's CPU
# figures as JSON: {"source":"proc_stat","seconds","snd_cpus","rcv_cpus",
# "snd_busy_ticks","rcv_busy_ticks","snd_util_pct","rcv_util_pct",
# "snd_us_per_kb","rcv_us_per_kb","bytes_sent","bytes","snd_interval_s",
# "rcv_interval_s"}; busy ticks as snap_busy counts them; the interval
# from the snapshots' uptime (iperf3's seconds where they have none).
cpu_json() {
	local sent rcvd secs t0 t1 st rt sc rc si ri
	read -r sent rcvd secs <<<"$(iperf_bytes "$5")"
	read -r t0 _ <<<"$(snap_busy "$1")"
	read -r t1 _ <<<"$(snap_busy "$2")"
	st=$((t1 - t0)) sc=$(sed -n 's/^ncpu //p' <<<"$2")
	read -r t0 _ <<<"$(snap_busy "$3")"
	read -r t1 _ <<<"$(snap_busy "$4")"
	rt=$((t1 - t0)) rc=$(sed -n 's/^ncpu //p' <<<"$4")
	si=$(snap_interval "$1" "$2" "$secs") ri=$(snap_interval "$3" "$4" "$secs")
	awk -v sent="$sent" -v rcvd="$rcvd" -v secs="$secs" -v st="$st" -v rt="$rt" -v sc="${sc:-0}" -v rc="${rc:-0}" \
		-v si="$si" -v ri="$ri" 'BEGIN {
		if (secs <= 0 || si <= 0 || ri <= 0 || sc < 1 || rc < 1) exit 1
		printf "{\"source\":\"proc_stat\",\"seconds\":%.3f,\"bytes_sent\":%d,\"bytes\":%d,", secs, sent, rcvd
		printf "\"snd_interval_s\":%.2f,\"rcv_interval_s\":%.2f,", si, ri
		printf "\"snd_cpus\":%d,\"rcv_cpus\":%d,\"snd_busy_ticks\":%d,\"rcv_busy_ticks\":%d,", sc, rc, st, rt
		printf "\"snd_util_pct\":%.1f,\"rcv_util_pct\":%.1f,", st / 100 / (sc * si) * 100, rt / 100 / (rc * ri) * 100
		su = "null"; ru = "null"
		if (sent > 0) su = sprintf("%.3f", st * 1e4 / (sent / 1024))
		if (rcvd > 0) ru = sprintf("%.3f", rt * 1e4 / (rcvd / 1024))
		printf "\"snd_us_per_kb\":%s,\"rcv_us_per_kb\":%s}", su, ru
	}'
}
