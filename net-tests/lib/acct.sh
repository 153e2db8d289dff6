# shellcheck shell=bash
# Host side of the ESP output accounting (net-tests/guest/acct.sh): a
# fixed-size transfer with kprobe counting on the sender (guest a).

[[ -z "${RIG_ACCT_SH:-}" ]] || return 0
RIG_ACCT_SH=1
# shellcheck source=net-tests/lib/ipsec.sh
. "$(dirname "${BASH_SOURCE[0]}")/ipsec.sh"

# Transfer sizes: RIG_ACCT_*, RIG_DEMAND_* (qemu-net/defaults.sh).
ACCT_PING_SIZES=(56 1000 1400 3000)

# acct_prepare KERNEL_DIR: offsets for that kernel into guest a's share.
acct_prepare() {
	"$RIG_TOP/net-tests/offsets/gen-offsets.sh" "$1" >"$GUEST_RUN/a/offsets.env"
}

# transfer_cmd ROW TCP_BYTES UDP_BYTES JSON: the row's fixed-size iperf3
# transfer (TCP or UDP) from guest a, its JSON to JSON in the guest.
transfer_cmd() {
	local peer
	row_decode "$1" || return 1
	peer=$(peer_addr "$ROW_FAMILY")
	case "$ROW_PROTO" in
	tcp) echo "iperf3 -c $peer -n $2 -J >$4" ;;
	udp) echo "iperf3 -c $peer -u -b 200M -l $RIG_ACCT_UDP_LEN -n $3 -J >$4" ;;
	*) return 1 ;;
	esac
}

# acct_cmd ROW: the row's fixed-size transfer, as a guest shell command.
acct_cmd() {
	local row=$1 p f peer cmd s
	row_decode "$row" || return 1
	p=$ROW_PROTO f=$ROW_FAMILY
	peer=$(peer_addr "$f")
	case "$p" in
	tcp | udp) cmd=$(transfer_cmd "$row" "$RIG_ACCT_TCP_BYTES" "$RIG_ACCT_UDP_BYTES" /rig/acct-iperf.json) ;;
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

# cost_row ROW OUTFILE: esp_output() time per call (guest/cost.sh) over
# the same transfer, in a pass of its own (no other probes active).
cost_row() {
	acct_pass cost "$G/cost.sh start" "$G/cost.sh stop" "$@"
}

# cost_json FILE: {"calls":N,"p10_ns":..,"median_ns":..,"p90_ns":..}
cost_json() {
	awk -F= 'NF==2{sub(/^cost_/, "", $1); v[++n] = "\"" $1 "\":" $2}
	END{printf "{"; for (i = 1; i <= n; i++) printf "%s%s", v[i], (i < n ? "," : ""); printf "}"}' "$1"
}

# acct_json FILE: the counts as a JSON object (KEY_total), with per-ESP-packet
# ratios; segment_copied_bytes (skb_segment's payload copy without SG) and
# all_copied_bytes (every counted copy, it included) per packet too.
acct_json() {
	awk -F= 'NF==2{v[$1]=$2; k[++n]=$1}
	END{
		e = v["esp_packets"] + 0
		printf "{"
		for (i = 1; i <= n; i++) printf "\"%s_total\":%s,", k[i], v[k[i]]
		if (e > 0)
			printf "\"inplace\":%.4f,\"pagefrag\":%.4f,\"privhead\":%.4f,\"cow\":%.4f,\"copied_bytes\":%.1f,\"geniv_copied_bytes\":%.1f,\"segment_copied_bytes\":%.1f,\"all_copied_bytes\":%.1f,",
				v["inplace"]/e, v["pagefrag"]/e, v["privhead"]/e, v["cow"]/e, v["copied_bytes"]/e, v["geniv_copied_bytes"]/e,
				v["segment_copied_bytes"]/e, v["all_copied_bytes"]/e
		printf "\"esp_packets\":%d}", e
	}' "$1"
}

# Service demand (bench --icount and its instruction phase): guest CPU
# time of sender and receiver per KB delivered over a fixed-size
# transfer; under -icount the guest's clock counts instructions (2^shift
# ns each), so the busy time is an instruction count.  The busy time is
# the clock minus the idle and iowait sleep times tick-sched keeps in ns
# per CPU (/proc/timer_list, NO_HZ): exact where /proc/stat's cpu line
# (user+nice+system+irq+softirq) samples whole 10 ms ticks on timer
# interrupts (2-37 % spread across boots on the ESP rows).  Kept beside
# it as a cross-check (snd_ticks/rcv_ticks).  A CPU idle at the moment
# of reading has its current idle period not yet added, so the figure is
# exact only for the CPU doing the reading: exact with 1 vCPU (RIG_SMP=1,
# the default), an over-estimate otherwise.  The whole guest is counted
# (iperf3, softirq, charon's idle wakeups, the rig's job loop).  Plaintext
# TCP on the tap link costs ~1,300 instructions per KB, so those rows send
# more (RIG_DEMAND_PLAIN_TCP_BYTES).

# The guest command snapshotting its CPU time: /proc/stat's cpu line and
# "now NS" and per CPU "idle NS" (idle + iowait sleep) from timer_list.
DEMAND_SNAP="head -n 1 /proc/stat; sed -n 's/^now at \([0-9]*\) nsecs\$/now \1/p; s/^ *\.\(idle\|iowait\)_sleeptime *: *\([0-9]*\) nsecs\$/\1 \2/p' /proc/timer_list"

# snap_busy SNAPSHOT: "TICKS NS": the busy ticks of the cpu line, and the
# busy ns: CPUs x clock - idle - iowait (0 without timer_list figures).
snap_busy() {
	awk '$1 == "cpu" { t = $2 + $3 + $4 + $7 + $8 }
	$1 == "now" { now = $2 }
	$1 == "idle" { idle += $2; n++ }
	$1 == "iowait" { idle += $2 }
	END { printf "%d %.0f\n", t, (n && now) ? n * now - idle : 0 }' <<<"$1"
}

# demand_row ROW OUTFILE: KEY=VALUE (bytes, retransmits, snd_ticks,
# rcv_ticks, snd_busy_ns, rcv_busy_ns) in OUTFILE; the iperf3 JSON next to
# it (OUTFILE.json).
demand_row() {
	local row=$1 outf=$2 cmd tcp=$RIG_DEMAND_TCP_BYTES b0 b1 a0 a1 out bytes
	local at0 an0 at1 an1 bt0 bn0 bt1 bn1
	row_decode "$row" || return 1
	[[ "$ROW_MODE" != plain ]] || tcp=$RIG_DEMAND_PLAIN_TCP_BYTES
	cmd=$(transfer_cmd "$row" "$tcp" "$RIG_DEMAND_UDP_BYTES" /rig/demand-iperf.json) || return 0
	b0=$(guest_exec b "$DEMAND_SNAP") || die "$E_FAIL" "guest b: cannot read /proc/stat or /proc/timer_list"
	out=$(guest_exec -t 300 a "$DEMAND_SNAP; echo @; $cmd; rc=\$?; echo @; $DEMAND_SNAP; exit \$rc") ||
		die "$E_TRAFFIC" "service demand transfer for $row failed"
	b1=$(guest_exec b "$DEMAND_SNAP") || die "$E_FAIL" "guest b: cannot read /proc/stat or /proc/timer_list"
	# before the first marker, after the second (the transfer's own
	# output, if any, between them)
	a0=$(awk '/^@$/ { exit } { print }' <<<"$out")
	a1=$(awk 'f; /^@$/ && ++n == 2 { f = 1 }' <<<"$out")
	[[ "$a0" == *cpu* && "$a1" == *cpu* ]] ||
		die "$E_FAIL" "guest a: no CPU time snapshot around the transfer for $row: $out"
	read -r at0 an0 <<<"$(snap_busy "$a0")"
	read -r at1 an1 <<<"$(snap_busy "$a1")"
	read -r bt0 bn0 <<<"$(snap_busy "$b0")"
	read -r bt1 bn1 <<<"$(snap_busy "$b1")"
	cp "$GUEST_RUN/a/demand-iperf.json" "$outf.json"
	bytes=$(jq -r 'if .start.test_start.protocol == "UDP"
		then .end.sum.bytes * (1 - .end.sum.lost_percent / 100)
		else .end.sum_received.bytes end | floor' "$outf.json") ||
		die "$E_TRAFFIC" "service demand transfer for $row: no byte count in $outf.json"
	# Retransmit episodes (the receiver overflowing) raise both sides'
	# demand: kept beside it (3 boots, ESP gcm: 0 retr -> 13,600/13,750
	# instr/KB, 56-70 retr -> 14,700-15,200/17,600-18,900).
	printf 'bytes=%s\nretransmits=%s\nsnd_ticks=%s\nrcv_ticks=%s\nsnd_busy_ns=%s\nrcv_busy_ns=%s\n' \
		"$bytes" "$(jq -r '.end.sum_sent.retransmits // 0' "$outf.json")" \
		"$((at1 - at0))" "$((bt1 - bt0))" \
		"$(((an0 && an1) ? an1 - an0 : 0))" "$(((bn0 && bn1) ? bn1 - bn0 : 0))" >"$outf"
}

# demand_json FILE ICOUNT-SPEC: {"bytes","retransmits","snd_ticks","rcv_ticks",
# "snd_busy_ns","rcv_busy_ns","snd_instr_per_kb","rcv_instr_per_kb",
# "source"}; instructions = guest busy ns / 2^shift, from the timer_list
# busy ns where the guest had them, else from the ticks (source "ticks");
# null when shift is not a number (e.g. shift=auto).
demand_json() {
	local shift
	shift=$(sed -n 's/.*shift=\([0-9][0-9]*\).*/\1/p' <<<"$2")
	awk -F= -v shift="${shift:-x}" 'NF==2{v[$1]=$2}
	END{
		kb = v["bytes"] / 1024
		exact = v["snd_busy_ns"] > 0 && v["rcv_busy_ns"] > 0
		printf "{\"bytes\":%d,\"retransmits\":%d,\"snd_ticks\":%d,\"rcv_ticks\":%d,\"snd_busy_ns\":%.0f,\"rcv_busy_ns\":%.0f,\"source\":\"%s\"", v["bytes"], v["retransmits"], v["snd_ticks"], v["rcv_ticks"], v["snd_busy_ns"], v["rcv_busy_ns"], exact ? "timer_list" : "ticks"
		if (shift != "x" && kb > 0) {
			if (exact) {
				snd = v["snd_busy_ns"]; rcv = v["rcv_busy_ns"]
			} else {
				snd = v["snd_ticks"] * 1e7; rcv = v["rcv_ticks"] * 1e7 # USER_HZ ticks
			}
			printf ",\"snd_instr_per_kb\":%.0f,\"rcv_instr_per_kb\":%.0f", snd / (2 ^ shift) / kb, rcv / (2 ^ shift) / kb
		} else
			printf ",\"snd_instr_per_kb\":null,\"rcv_instr_per_kb\":null"
		printf "}"
	}' "$1"
}
