# shellcheck shell=bash
# Host side of the ESP output accounting (net-tests/guest/acct.sh): a
# fixed-size transfer with kprobe counting on the sender (guest a).
# Sourced after ipsec.sh and rows.sh.

: "${ACCT_TCP_BYTES:=8M}" "${ACCT_UDP_BYTES:=4M}" "${ACCT_UDP_LEN:=1300}"
ACCT_PING_SIZES=(56 1000 1400 3000)

# acct_prepare KERNEL_DIR: offsets for that kernel into guest a's share.
acct_prepare() {
	"$RIG_TOP/net-tests/offsets/gen-offsets.sh" "$1" >"$GUEST_RUN/a/offsets.env"
}

# acct_row ROW OUTFILE: run the row's fixed transfer under the probes and
# write KEY=VALUE counts to OUTFILE (on the host).  The SA must be up.
acct_row() {
	local row=$1 outf=$2 p f peer cmd s
	p=$(row_proto "$row")
	f=$(row_family "$row")
	peer=$(peer_addr "$f")
	case "$p" in
	tcp) cmd="iperf3 -c $peer -n $ACCT_TCP_BYTES -J >/rig/acct-iperf.json" ;;
	udp) cmd="iperf3 -c $peer -u -b 200M -l $ACCT_UDP_LEN -n $ACCT_UDP_BYTES -J >/rig/acct-iperf.json" ;;
	icmp)
		cmd=""
		for s in "${ACCT_PING_SIZES[@]}"; do
			cmd+="$(ping_cmd "$f") -q -A -c 10 -s $s $peer >/dev/null && "
		done
		cmd+=true
		;;
	esac
	guest_exec a "$G/acct.sh start /rig/offsets.env" >&2 ||
		die "$E_FAIL" "could not set up the kprobe accounting in guest a"
	guest_exec -t 180 a "$cmd" >&2 || {
		guest_exec a "$G/acct.sh stop" >/dev/null || true
		die "$E_TRAFFIC" "accounting transfer for $row failed"
	}
	guest_exec a "$G/acct.sh stop" >"$outf" ||
		die "$E_FAIL" "could not read the accounting counters in guest a"
}

# acct_json FILE: the counts as a JSON object, with per-ESP-packet ratios.
acct_json() {
	awk -F= 'NF==2{v[$1]=$2; k[++n]=$1}
	END{
		e = v["esp_packets"] + 0
		printf "{"
		for (i = 1; i <= n; i++) printf "\"%s_total\":%s,", k[i], v[k[i]]
		if (e > 0)
			printf "\"inplace\":%.4f,\"pagefrag\":%.4f,\"cow\":%.4f,\"copied_bytes\":%.1f,",
				v["inplace"]/e, v["pagefrag"]/e, v["cow"]/e, v["copied_bytes"]/e
		printf "\"esp_packets\":%d}", e
	}' "$1"
}
