# shellcheck shell=bash
# Where the service-demand spread of the ESP TCP rows comes from: the
# same fixed transfer, DS_REPS times per method in one boot, with both
# guests' busy time and TCP segment counters.  A body for qemu-net/pair.sh
# under -icount (busy ns = instructions at shift=0):
#   RIG_ICOUNT=shift=0,sleep=on qemu-net/pair.sh baseline --ike net-tests/studies/demand-spread.sh
# Methods (DS_METHODS below):
#   host    today's demand pass: b snapshotted by the host before and
#           after a's job (b's job loop polls every 0.1 s meanwhile)
#   srv     b's snapshots in a job of its own around a one-off iperf3
#           server (-1): no polling on b during the transfer
#   srv-w   srv with the window bounded (iperf3 -w RIG_DEMAND_WINDOW)
#   srv-qa  srv with quickack on b's route to a (one ACK per segment)
#   srv-w-qa  both
# Output on stdout, a line per transfer:
#   demand-spread VARIANT ROW METHOD REP bytes= snd_ns= rcv_ns= snd_ipk= rcv_ipk=
#     a_in= a_out= b_in= b_out= retr=
# (eval'd by pair.sh: no trap here, it would replace pair.sh's cleanup)
# shellcheck disable=SC2154 # pair.sh's variant
. "$RIG_TOP/net-tests/lib/acct.sh"
# What it runs (edit to vary; the window and size are the rig's settings
# RIG_DEMAND_WINDOW and RIG_DEMAND_TCP_BYTES):
DS_ROWS="tcp-v4-transport-gcm-off tcp-v6-tunnel-gcm-off tcp-v4-plain"
DS_METHODS="host srv srv-w srv-qa srv-w-qa"
DS_REPS=3
DS_BYTES=$RIG_DEMAND_TCP_BYTES
DS_WINDOW=$RIG_DEMAND_WINDOW
snap=$DEMAND_SNAP

# ds_busy SNAPSHOT: "NS IN OUT RETR"
ds_busy() {
	local t ns i o r
	read -r t ns i o r <<<"$(snap_busy "$1")"
	echo "$ns $i $o $r"
}

ds_one() { # ds_one ROW METHOD REP
	local row=$1 m=$2 rep=$3 peer fam opts="" b0 b1 a0 a1 out bout bjob
	local ans ain aout aretr bns bin bout2 ans1 ain1 aout1 aretr1 bns1 bin1 bout1 bytes
	row_decode "$row"
	fam=$ROW_FAMILY peer=$(peer_addr "$fam")
	[[ "$m" == *-w* ]] && opts+=" -w $DS_WINDOW"
	if [[ "$m" == host ]]; then
		b0=$(guest_exec b "$snap")
		out=$(guest_exec -t 600 a "$snap; echo @; iperf3 -c $peer -n $DS_BYTES$opts -J >/rig/ds.json; echo @; $snap")
		b1=$(guest_exec b "$snap")
	else
		bout=$(mktemp)
		guest_exec -t 600 b "$snap; echo @; iperf3 -s -1 -p $RIG_DEMAND_PORT >/dev/null 2>&1; echo @; $snap" >"$bout" &
		bjob=$!
		# until b's job runs and its server listens
		sleep 2
		out=$(guest_exec -t 600 a "$snap; echo @; iperf3 -c $peer -p $RIG_DEMAND_PORT -n $DS_BYTES$opts -J >/rig/ds.json; echo @; $snap")
		wait "$bjob"
		b0=$(awk '/^@$/ { exit } { print }' "$bout")
		b1=$(awk 'f; /^@$/ && ++n == 2 { f = 1 }' "$bout")
		rm -f "$bout"
	fi
	a0=$(awk '/^@$/ { exit } { print }' <<<"$out")
	a1=$(awk 'f; /^@$/ && ++n == 2 { f = 1 }' <<<"$out")
	read -r ans ain aout aretr <<<"$(ds_busy "$a0")"
	read -r ans1 ain1 aout1 aretr1 <<<"$(ds_busy "$a1")"
	read -r bns bin bout2 _ <<<"$(ds_busy "$b0")"
	read -r bns1 bin1 bout1 _ <<<"$(ds_busy "$b1")"
	bytes=$(jq -r '.end.sum_received.bytes' "$GUEST_RUN/a/ds.json")
	awk -v v="$RIG_TREE/$variant" -v row="$row" -v m="$m" -v rep="$rep" -v by="$bytes" \
		-v s=$((ans1 - ans)) -v r=$((bns1 - bns)) -v ai=$((ain1 - ain)) -v ao=$((aout1 - aout)) \
		-v bi=$((bin1 - bin)) -v bo=$((bout1 - bout2)) -v re=$((aretr1 - aretr)) 'BEGIN {
		printf "demand-spread %s %s %s %d bytes=%d snd_ns=%d rcv_ns=%d snd_ipk=%.0f rcv_ipk=%.0f a_in=%d a_out=%d b_in=%d b_out=%d retr=%d\n",
			v, row, m, rep, by, s, r, s / (by / 1024), r / (by / 1024), ai, ao, bi, bo, re }'
}

ipsec_start
for row in $DS_ROWS; do
	ipsec_row_up "$row" >/dev/null
	row_decode "$row"
	for m in $DS_METHODS; do
		if [[ "$m" == *qa* ]]; then
			guest_exec b "/usr/sbin/ip $(family_opt "$ROW_FAMILY") route replace $(matrix_addr "$ROW_FAMILY" a) dev eth0 quickack 1"
		fi
		for ((rep = 1; rep <= DS_REPS; rep++)); do
			ds_one "$row" "$m" "$rep"
		done
		if [[ "$m" == *qa* ]]; then
			guest_exec b "/usr/sbin/ip $(family_opt "$ROW_FAMILY") route del $(matrix_addr "$ROW_FAMILY" a) dev eth0"
		fi
	done
	[[ -z "$ROW_CHILD" ]] || ipsec_down
done
