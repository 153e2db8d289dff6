# shellcheck shell=bash
# Group "pair": boot both guests on the patched kernel, then for every
# (family x proposal x mode) child: IKE up, ping and a short iperf3
# through the tunnel, and proof that ESP carried them (SA counters).
#
# Deliberate breakages seen to fail:
#  - "ipsec_start || true" in pair_boot (its status ignored):
#    static-group-setup-failures, guests replaced and ipsec_start failing,
#    saw boot-pair recorded ok and the ike-* tests run.  No guest run.

# The guests and daemons are the group's (check_setup): later tests use
# them, and QEMU dies with the shell that started it.
pair_boot() {
	local t=$SECONDS
	guests_start "$CHECK_DIR/pair" "$SKB_TAILROOM_CACHE/kernels/patched"
	printf 'guest pair booted in %ds\n' "$((SECONDS - t))" >&2
	ipsec_start || { reason "charon/iperf3 did not start"; return 1; }
}

t_child() {
	local child=$1 fam=${1%%-*} peer before after mbps ping
	peer=$(peer_addr "$fam")
	ping=$(ping_cmd "$fam")
	ipsec_up "$child" >&2 || { reason "CHILD_SA not established"; return 1; }
	before=$(esp_packets b)
	guest_exec a "$ping -c 3 -W 5 $peer" >&2 || { reason "ping $peer failed"; ipsec_down; return 1; }
	mbps=$(iperf_run "$CHECK_DIR/$child-iperf.json" "$fam" tcp -t 2) ||
		{ reason "iperf3 failed"; ipsec_down; return 1; }
	after=$(esp_packets b)
	printf '%s: iperf3 %s Mbit/s, ESP packets on b: %s -> %s\n' "$child" "$mbps" "$before" "$after" >&2
	# 3 echo requests + replies and the iperf3 flow must be on the SAs.
	((after - before > 100)) || { reason "only $((after - before)) ESP packets: traffic bypassed the tunnel"; ipsec_down; return 1; }
	ipsec_down || { reason "teardown left SAs"; return 1; }
}

group_pair() {
	local c
	check_setup boot-pair pair_boot
	for c in v4-gcm-transport v4-gcm-tunnel v4-sha-transport v4-sha-tunnel \
		v6-gcm-transport v6-gcm-tunnel v6-sha-transport v6-sha-tunnel; do
		check "ike-$c" t_child "$c"
	done
}
