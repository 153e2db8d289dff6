# shellcheck shell=bash
# Which ESP output path each functional row's TCP takes, with and without
# the ESP offload modules: the question "once the offload module is
# loaded by default, which packets still reach esp_output() as clones,
# and so the right-sized copy?".  A body for qemu-net/pair.sh, one boot
# per kernel:
#   qemu-net/pair.sh patched net-tests/studies/esp-paths.sh
# Per offload mode (EP_ORDER: off, then on) and per row of EP_ROWS
# (func rows of net-tests/matrix.sh, IPv4, plus "esp": the plain
# transport SA), one fixed iperf3 TCP transfer of EP_BYTES from a to b
# through it, counted on a by net-tests/guest/acct.sh (kprobes + hist
# triggers).  One line per transfer:
#   kernel=K offload=on|off row=R tcp_outsegs=N esp_packets=N cow=N
#   privhead=N pagefrag=N
# esp_packets: esp_output_head()/esp6_output_head() calls, one per GSO
# skb on the offload path (esp_xmit()), one per packet otherwise; cow:
# skb_cow_data() calls with a trailer; privhead: clones copied into a
# right-sized private head (series kernels only).  Counts, not times:
# deterministic up to TCP's own segmentation.
# shellcheck source=net-tests/lib/func.sh
. "$RIG_TOP/net-tests/lib/func.sh"
# shellcheck source=net-tests/lib/acct.sh
. "$RIG_TOP/net-tests/lib/acct.sh"

EP_ROWS="esp natt tfc nested gre vxlan"
EP_ORDER="off on"
EP_BYTES=4M

ep_one() { # ep_one OFFLOAD ROW
	local o=$1 row=$2 peer out=$GUEST_RUN/ep-$1-$2.env k
	func_study_up "$row" v4 2>/dev/null
	peer=$FUNC_PEER
	guest_exec a "$G/acct.sh start /rig/offsets.env" >/dev/null ||
		{ echo "no accounting probes in guest a" >&2; return 1; }
	guest_exec -t 180 a "iperf3 -c $peer -n $EP_BYTES -J >/rig/ep.json" >/dev/null ||
		echo "iperf3 through $row (offload $o) failed" >&2
	guest_exec a "$G/acct.sh stop" >"$out" || : >"$out"
	# kdir: pair.sh's, the kernel's installed folder (VARIANT-KEY)
	# shellcheck disable=SC2154
	printf 'kernel=%s offload=%s row=%s' "$(basename "$(readlink -f "$kdir")")" "$o" "$row"
	for k in tcp_outsegs esp_packets cow privhead pagefrag; do
		printf ' %s=%s' "$k" "$(awk -F= -v k="$k" '$1==k{print $2; f=1} END{if(!f) print "-"}' "$out")"
	done
	echo
	func_study_down "$row" v4
}

acct_prepare "$kdir"
ipsec_start
for o in $EP_ORDER; do
	ipsec_offload "$o"
	for row in $EP_ROWS; do
		ep_one "$o" "$row"
	done
done
