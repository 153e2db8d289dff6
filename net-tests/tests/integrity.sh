# shellcheck shell=bash
# Group "integrity": byte-exact payloads through the tunnel on the
# patched kernel, every family x mode x proposal x ESP offload: TCP with
# mixed write sizes, UDP of every size 1..1500 (ESP block and kmalloc
# bucket edges included) plus sizes that fragment.  Nothing lost, nothing
# corrupted, and the SA still up and carrying the traffic afterwards.
#
# Deliberate breakages seen to fail:
#  - "ipsec_start || true" in integrity_boot (as integrity.sh:28 was):
#    static-group-setup-failures, guests replaced and ipsec_start failing,
#    saw integrity-boot recorded ok.  No guest run.
#  - the loop spelling the matrix out again (for c in gcm sha):
#    static-matrix-one-source named this file and the line, and
#    static-matrix-generated saw no payload-*-ccm-* test for a proposal
#    added to the table.
[[ -z "${RIG_T_INTEGRITY_SH:-}" ]] || return 0
RIG_T_INTEGRITY_SH=1
# shellcheck source=net-tests/lib/tap.sh
. "$RIG_TOP/net-tests/lib/tap.sh"
# shellcheck source=net-tests/lib/payload.sh
. "$RIG_TOP/net-tests/lib/payload.sh"

t_integrity() {
	local child=$1 fam before after
	fam=$(child_family "$child")
	ipsec_up "$child" >&2 || { reason "SA not up"; return 1; }
	before=$(esp_packets b)
	payload_check "$fam" tcp -n 2M -w 1,7,100,1000,1448,4096,65536 >&2 ||
		{ reason "TCP payload not intact"; ipsec_down; return 1; }
	payload_check "$fam" udp -l "$PAYLOAD_UDP_SIZES" -i 300 >&2 ||
		{ reason "UDP payload not intact"; ipsec_down; return 1; }
	after=$(esp_packets b)
	((after - before > 2000)) || { reason "only $((after - before)) ESP packets for the transfers"; ipsec_down; return 1; }
	ipsec_check_up >&2 || { reason "tunnel went down during the transfer"; return 1; }
	ipsec_down || { reason "teardown left SAs"; return 1; }
}

# The tools built, the guest pair up on the patched kernel, charon and
# iperf3 started (check_setup: the group's, for every test after it).
integrity_boot() {
	payload_build
	guests_start "$CHECK_DIR/integrity" "$RIG_KERNELS/patched"
	ipsec_start
}

# Every ESP configuration of the table (net-tests/matrix.sh) under each
# offload mode the table marks integrity=yes.
group_integrity() {
	local o f m c
	check_setup integrity-boot integrity_boot
	for o in $(matrix_values offload integrity=yes); do
		ipsec_offload "$o"
		while read -r f m c; do
			check "payload-$f-$m-$c-offload-$o" t_integrity "$(matrix_child "$f" "$m" "$c")"
		done < <(matrix_esp)
	done
}
