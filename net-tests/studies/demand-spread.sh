# shellcheck shell=bash
# Where the service-demand spread of the ESP TCP rows comes from: the
# same fixed transfer, DS_REPS times per method in one boot, with both
# guests' busy time and TCP segment counters.  A body for qemu-net/pair.sh
# under -icount (busy ns = instructions at shift=0):
#   RIG_ICOUNT=shift=0,sleep=on qemu-net/pair.sh --lib net-tests/lib/ipsec.sh baseline net-tests/studies/demand-spread.sh
# Methods (DS_METHODS below):
#   host    the demand pass before commit 258d54a: b snapshotted by the
#           host before and after a's job (b's job loop polls every
#           0.1 s meanwhile), iperf3's own server
#   srv     the rig's demand_row with DEMAND_WINDOW=0 and
#           DEMAND_QUICKACK=0: b's snapshots in a job of its own
#           around a one-off iperf3 server, no polling on b
#   srv-w   srv with the window bounded (DEMAND_WINDOW=DS_WINDOW)
#   srv-qa  srv with one ACK per segment (DEMAND_QUICKACK=1: quickack
#           route and GRO off on b)
#   srv-w-qa  both: the rig's demand pass as it is
#   paced   srv-w-qa paced at DS_RATE (DEMAND_RATE: TCP's own pacing),
#           DS_PACED_BYTES per transfer: every segment on its own
#   nogso   srv-w-qa with the sender's TSO and GSO off (ethtool), plaintext
#           TCP rows only, DS_BYTES per transfer
#   udp-R   srv-w-qa with UDP at R bits/s (DEMAND_UDP_RATE=R), e.g.
#           udp-50M; UDP rows only (srv-w-qa: the rig's default rate)
#   udpt-R  UDP paced at R (DEMAND_RATE=R: -b R --pacing-timer 100, a
#           datagram per wakeup); UDP rows only
# Kept outputs (docs/results/demand-spread/, README there): *.out at
# 753d1eb (the study then had its own copy of the srv transfer and
# srv-qa left GRO on); paced-vs-srv-w-qa-busy-N.out with DS_METHODS="paced
# srv-w-qa" and RIG_INSN=0 in effect (no plugin yet); insn-N.out as
# below; paced-insn-N.out with DS_METHODS=paced and the first three rows.
# Output on stdout, a line per transfer:
#   demand-spread VARIANT ROW METHOD REP bytes= snd_ns= rcv_ns= snd_ipk= rcv_ipk=
#     a_in= a_out= b_in= b_out= retr= a_intr= b_intr= a_ctxt= b_ctxt=
#     a_netrx= b_netrx= [snd_ins_ipk= rcv_ins_ipk=: counted by the
#     skbt-insn plugin (RIG_INSN), instructions per KB] sent= (bytes
#     sent: UDP's loss is sent - bytes)
# (eval'd by pair.sh: no trap here, it would replace pair.sh's cleanup)
# shellcheck disable=SC2154 # pair.sh's variant
. "$RIG_TOP/net-tests/lib/acct.sh"
# What it runs (edit to vary; the window and size are the rig's settings
# DEMAND_WINDOW and DEMAND_TCP_BYTES):
DS_ROWS="tcp-v4-transport-gcm-off tcp-v6-tunnel-gcm-off tcp-v4-transport-sha-off tcp-v4-plain"
DS_METHODS="srv-w-qa"
DS_REPS=2
DS_BYTES=$DEMAND_TCP_BYTES
DS_WINDOW=$DEMAND_WINDOW
DS_RATE=10M
DS_PACED_BYTES=16M

# ds_host ROW OUTFILE: the old pass, demand_row's KEY=VALUE in OUTFILE.
ds_host() {
	local row=$1 outf=$2 peer out a0 a1 b0 b1 at0 an0 ai0 ao0 at1 an1 ai1 ao1 bt0 bn0 bi0 bo0 bt1 bn1 bi1 bo1
	row_decode "$row"
	peer=$(peer_addr "$ROW_FAMILY")
	b0=$(guest_exec b "$DEMAND_SNAP")
	out=$(guest_exec -t 600 a "$DEMAND_SNAP; echo @; iperf3 -c $peer -n $DS_BYTES -J >/rig/ds.json; echo @; $DEMAND_SNAP")
	b1=$(guest_exec b "$DEMAND_SNAP")
	a0=$(awk '/^@$/ { exit } { print }' <<<"$out")
	a1=$(awk 'f; /^@$/ && ++n == 2 { f = 1 }' <<<"$out")
	read -r at0 an0 ai0 ao0 _ <<<"$(snap_busy "$a0")"
	read -r at1 an1 ai1 ao1 _ <<<"$(snap_busy "$a1")"
	read -r bt0 bn0 bi0 bo0 _ <<<"$(snap_busy "$b0")"
	read -r bt1 bn1 bi1 bo1 _ <<<"$(snap_busy "$b1")"
	printf 'bytes=%s\nretransmits=%s\nsnd_busy_ns=%s\nrcv_busy_ns=%s\nsnd_segs_in=%s\nsnd_segs_out=%s\nrcv_segs_in=%s\nrcv_segs_out=%s\n' \
		"$(jq -r '.end.sum_received.bytes' "$GUEST_RUN/a/ds.json")" \
		"$(jq -r '.end.sum_sent.retransmits // 0' "$GUEST_RUN/a/ds.json")" \
		"$((an1 - an0))" "$((bn1 - bn0))" "$((ai1 - ai0))" "$((ao1 - ao0))" "$((bi1 - bi0))" "$((bo1 - bo0))" >"$outf"
}

ds_one() { # ds_one ROW METHOD REP
	local row=$1 m=$2 rep=$3 f=$GUEST_RUN/ds-$1-$2-$3 w=0 qa=0 rate=0 udpr=$DEMAND_UDP_RATE plain=$DEMAND_PLAIN_TCP_BYTES
	[[ "$m" == *-w* ]] && w=$DS_WINDOW
	[[ "$m" == *qa* ]] && qa=1
	[[ "$m" != paced ]] || { w=$DS_WINDOW qa=1 rate=$DS_RATE; }
	# methods that do not apply to the row: nothing
	[[ "$m" != nogso || "$row" == tcp-*-plain ]] || return 0
	[[ "$m" != udp* || "$row" == udp-* ]] || return 0
	[[ "$m" != nogso ]] || { w=$DS_WINDOW qa=1 plain=$DS_BYTES; }
	[[ "$m" != udp-* ]] || { w=$DS_WINDOW qa=1 udpr=${m#udp-}; }
	[[ "$m" != udpt-* ]] || { w=$DS_WINDOW qa=1 rate=${m#udpt-}; }
	[[ "$m" != nogso ]] || guest_exec a "ethtool -K eth0 tso off gso off" >&2
	if [[ "$m" == host ]]; then
		ds_host "$row" "$f"
	else
		DEMAND_WINDOW=$w DEMAND_QUICKACK=$qa DEMAND_RATE=$rate DEMAND_PACED_BYTES=$DS_PACED_BYTES \
			DEMAND_UDP_RATE=$udpr DEMAND_PLAIN_TCP_BYTES=$plain \
			DEMAND_TCP_BYTES=$DS_BYTES demand_row "$row" "$f"
	fi
	[[ "$m" != nogso ]] || guest_exec a "ethtool -K eth0 tso on gso on" >&2
	awk -F= -v v="$RIG_TREE/$variant" -v row="$row" -v m="$m" -v rep="$rep" '{ x[$1] = $2 }
	END {
		kb = x["bytes"] / 1024
		skb = ("bytes_sent" in x ? x["bytes_sent"] : x["bytes"]) / 1024
		printf "demand-spread %s %s %s %d bytes=%d snd_ns=%.0f rcv_ns=%.0f snd_ipk=%.0f rcv_ipk=%.0f a_in=%d a_out=%d b_in=%d b_out=%d retr=%d a_intr=%d b_intr=%d a_ctxt=%d b_ctxt=%d a_netrx=%d b_netrx=%d",
			v, row, m, rep, x["bytes"], x["snd_busy_ns"], x["rcv_busy_ns"], x["snd_busy_ns"] / skb, x["rcv_busy_ns"] / kb,
			x["snd_segs_in"], x["snd_segs_out"], x["rcv_segs_in"], x["rcv_segs_out"], x["retransmits"],
			x["snd_intr"], x["rcv_intr"], x["snd_ctxt"], x["rcv_ctxt"], x["snd_netrx"], x["rcv_netrx"]
		if ("snd_insn" in x)
			printf " snd_ins_ipk=%.0f rcv_ins_ipk=%.0f", x["snd_insn"] / skb, x["rcv_insn"] / kb
		printf " sent=%d\n", skb * 1024 }' "$f"
}

ipsec_start
for row in $DS_ROWS; do
	ipsec_row_up "$row" >/dev/null
	for m in $DS_METHODS; do
		for ((rep = 1; rep <= DS_REPS; rep++)); do
			ds_one "$row" "$m" "$rep"
		done
	done
	[[ -z "$ROW_CHILD" ]] || ipsec_down
done
