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

# Service demand (bench --icount): guest CPU time of sender and receiver
# per KB delivered over a fixed-size transfer.  From /proc/stat's cpu line
# (user+nice+system+irq+softirq, USER_HZ ticks of 10 ms) sampled around
# the transfer in each guest; under -icount the guest's clock counts
# instructions (2^shift ns each), so the busy time is an instruction
# count.  Resolution: one tick per field (10^7 instructions at shift=0),
# hence transfers of tens of MB (RIG_DEMAND_*).  The whole guest is
# counted (iperf3, softirq, charon's idle wakeups, the rig's job loop).
# Plaintext TCP on the tap link (TSO, checksum offload) costs ~1,500
# instructions per KB: 64M is only ~10 ticks, so those rows send more
# (RIG_DEMAND_PLAIN_TCP_BYTES).

# busy ticks of a /proc/stat "cpu" line
stat_busy() { awk '{print $2 + $3 + $4 + $7 + $8}' <<<"$1"; }

# demand_row ROW OUTFILE: KEY=VALUE (bytes, snd_ticks, rcv_ticks) in
# OUTFILE; the iperf3 JSON next to it (OUTFILE.json).
demand_row() {
	local row=$1 outf=$2 cmd tcp=$RIG_DEMAND_TCP_BYTES b0 b1 a0 a1 out bytes
	row_decode "$row" || return 1
	[[ "$ROW_MODE" != plain ]] || tcp=$RIG_DEMAND_PLAIN_TCP_BYTES
	cmd=$(transfer_cmd "$row" "$tcp" "$RIG_DEMAND_UDP_BYTES" /rig/demand-iperf.json) || return 0
	b0=$(guest_exec b "head -n 1 /proc/stat") || die "$E_FAIL" "guest b: cannot read /proc/stat"
	out=$(guest_exec -t 300 a "head -n 1 /proc/stat; $cmd; rc=\$?; head -n 1 /proc/stat; exit \$rc") ||
		die "$E_TRAFFIC" "service demand transfer for $row failed"
	b1=$(guest_exec b "head -n 1 /proc/stat") || die "$E_FAIL" "guest b: cannot read /proc/stat"
	a0=$(sed -n 1p <<<"$out")
	a1=$(sed -n 2p <<<"$out")
	cp "$GUEST_RUN/a/demand-iperf.json" "$outf.json"
	bytes=$(jq -r 'if .start.test_start.protocol == "UDP"
		then .end.sum.bytes * (1 - .end.sum.lost_percent / 100)
		else .end.sum_received.bytes end | floor' "$outf.json") ||
		die "$E_TRAFFIC" "service demand transfer for $row: no byte count in $outf.json"
	# Retransmit episodes (the receiver overflowing) raise both sides'
	# demand: kept beside it (3 boots, ESP gcm: 0 retr -> 13,600/13,750
	# instr/KB, 56-70 retr -> 14,700-15,200/17,600-18,900).
	printf 'bytes=%s\nretransmits=%s\nsnd_ticks=%s\nrcv_ticks=%s\n' "$bytes" \
		"$(jq -r '.end.sum_sent.retransmits // 0' "$outf.json")" \
		"$(($(stat_busy "$a1") - $(stat_busy "$a0")))" \
		"$(($(stat_busy "$b1") - $(stat_busy "$b0")))" >"$outf"
}

# demand_json FILE ICOUNT-SPEC: {"bytes","retransmits","snd_ticks","rcv_ticks",
# "snd_instr_per_kb","rcv_instr_per_kb"}; instructions = guest ns /
# 2^shift (null when shift is not a number, e.g. shift=auto).
demand_json() {
	local shift
	shift=$(sed -n 's/.*shift=\([0-9][0-9]*\).*/\1/p' <<<"$2")
	awk -F= -v shift="${shift:-x}" 'NF==2{v[$1]=$2}
	END{
		kb = v["bytes"] / 1024
		printf "{\"bytes\":%d,\"retransmits\":%d,\"snd_ticks\":%d,\"rcv_ticks\":%d", v["bytes"], v["retransmits"], v["snd_ticks"], v["rcv_ticks"]
		if (shift != "x" && kb > 0) {
			ns = 1e9 / 100 / (2 ^ shift) # USER_HZ ticks -> instructions
			printf ",\"snd_instr_per_kb\":%.0f,\"rcv_instr_per_kb\":%.0f", v["snd_ticks"] * ns / kb, v["rcv_ticks"] * ns / kb
		} else
			printf ",\"snd_instr_per_kb\":null,\"rcv_instr_per_kb\":null"
		printf "}"
	}' "$1"
}
