# shellcheck shell=bash
# GRE and VXLAN over IPsec with and without the ESP offload modules: does
# the software GSO path collapse an overlay's throughput (as reported for
# GRE over IPsec with esp4_offload loaded, libreswan issue 415)?  A body
# for qemu-net/pair.sh, one boot per kernel:
#   qemu-net/pair.sh baseline net-tests/studies/overlay-offload.sh
# Per offload mode in the order off, on, on, off (OO_ORDER) and per row of
# OO_ROWS (func rows of net-tests/matrix.sh with a link of their own, plus
# "esp": the same transport SA without an overlay), one iperf3 TCP
# transfer of OO_SECONDS from a to b through it.  One line per transfer:
#   kernel=K offload=on|off row=R mbps=N retransmits=N esp_out=N
# (esp_out: ESP packets a's outbound SA counted, i.e. per GSO skb on the
# offload path).  Throughput under TCG is context: this looks for a
# collapse (a factor), not for a few per cent.
# shellcheck source=net-tests/lib/func.sh
. "$RIG_TOP/net-tests/lib/func.sh"

OO_ROWS="esp gre vxlan"
OO_ORDER="off on on off"
OO_SECONDS=10

oo_one() { # oo_one OFFLOAD ROW
	local o=$1 row=$2 peer out
	func_study_up "$row" v4 2>/dev/null
	peer=$FUNC_PEER
	out=$GUEST_RUN/oo-$o-$row.json
	guest_exec -t 120 a "iperf3 -J -c $peer -t $OO_SECONDS >/rig/oo.json" >/dev/null ||
		echo "iperf3 through $row (offload $o) failed" >&2
	cp "$GUEST_RUN/a/oo.json" "$out" 2>/dev/null || : >"$out"
	# kdir: pair.sh's, the kernel's installed folder (VARIANT-KEY)
	# shellcheck disable=SC2154
	printf 'kernel=%s offload=%s row=%s mbps=%s retransmits=%s esp_out=%s\n' \
		"$(basename "$(readlink -f "$kdir")")" "$o" "$row" \
		"$(awk '{printf "%d", $1 / 1e6}' <(iperf_goodput "$out" 2>/dev/null || echo 0))" \
		"$(jq -r '.end.sum_sent.retransmits // "?"' "$out" 2>/dev/null || echo '?')" \
		"$(sa_packets a | awk -v s="$(matrix_addr v4 a)" '$1 == s {print $3; exit}')"
	func_study_down "$row" v4
}

ipsec_start
for o in $OO_ORDER; do
	ipsec_offload "$o"
	for row in $OO_ROWS; do
		oo_one "$o" "$row"
	done
done
