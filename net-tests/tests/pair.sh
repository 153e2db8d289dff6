# shellcheck shell=bash
# Group "pair": boot both guests on the patched kernel (PAIR_KERNEL
# picks another variant already in the cache, e.g. baseline), on the run's
# link (qemu-net/link.sh: tap by default, socket as the fallback or with
# --link socket), then for every (family x mode x proposal) child of
# net-tests/matrix.sh: IKE
# up, ping and a short iperf3 through the tunnel, and proof that ESP
# carried them (SA counters).  The link checks: the offloads each guest
# reports (ethtool -k) are the link's (on for tap, off for socket), on tap
# the QEMUs run in the run's own netns, and after the pair is stopped no
# QEMU, namespace holder, tap or bridge is left.
[[ -z "${RIG_T_PAIR_SH:-}" ]] || return 0
RIG_T_PAIR_SH=1
# shellcheck source=net-tests/lib/tap.sh
. "$RIG_TOP/net-tests/lib/tap.sh"

#
# Deliberate breakages seen to fail:
#  - "ipsec_start || true" in pair_boot (its status ignored):
#    static-group-setup-failures, guests replaced and ipsec_start failing,
#    saw boot-pair recorded ok and the ike-* tests run.  No guest run.
#  - the IKE loop spelling the children out again (for c in v4-gcm-...):
#    static-matrix-one-source named this file and the line.
# shellcheck source=net-tests/lib/ipsec.sh
. "$RIG_TOP/net-tests/lib/ipsec.sh"


# The guests and daemons are the group's (check_setup): later tests use
# them, and QEMU dies with the shell that started it.
pair_boot() {
	local t=$SECONDS
	guests_start "$CHECK_DIR/pair" "$RIG_KERNELS/$PAIR_KERNEL"
	printf 'guest pair (%s) booted in %ds on the %s link\n' "$PAIR_KERNEL" "$((SECONDS - t))" "$RIG_LINK_USED" >&2
	ipsec_start || { reason "charon/iperf3 did not start"; return 1; }
}

# The offloads virtio-net gave each guest, from RUN/<guest>/ethtool-k.txt
# (the guest init records them): on with the tap link's vnet header, off
# on the socket link (so the check is seen to tell the two apart).
t_link_offloads() {
	local want g f feat line bad=0
	want=$(matrix_attr link "$RIG_LINK_USED" offloads) || { reason "link '$RIG_LINK_USED' not in the matrix"; return 1; }
	for g in a b; do
		f=$CHECK_DIR/pair/$g/ethtool-k.txt
		[[ -s "$f" ]] || { reason "guest $g: no ethtool -k record ($f)"; return 1; }
		for feat in tx-checksumming scatter-gather tcp-segmentation-offload; do
			line=$(grep -m1 "^$feat:" "$f") || line="$feat: (missing)"
			printf 'guest %s (%s link): %s\n' "$g" "$RIG_LINK_USED" "$line" >&2
			[[ "$line" == "$feat: $want"* ]] || bad=1
		done
	done
	((bad == 0)) || { reason "offloads not $want on the $RIG_LINK_USED link (see log)"; return 1; }
}

# Tap link only: both QEMUs are in the run's netns, not in the host's.
t_link_private_netns() {
	[[ "$RIG_LINK_USED" == tap ]] || { reason "socket link: no netns of its own"; return 4; }
	local g ns host
	host=$(netns_of $$)
	[[ -n "$LINK_NS" && "$LINK_NS" != "$host" ]] || { reason "no private netns recorded"; return 1; }
	for g in a b; do
		ns=$(netns_of "${GUEST_PID[$g]}")
		printf 'QEMU %s (pid %s): %s, host %s\n' "$g" "${GUEST_PID[$g]}" "$ns" "$host" >&2
		[[ "$ns" == "$LINK_NS" ]] || { reason "QEMU $g is in $ns, not the run's $LINK_NS"; return 1; }
	done
}

# t_left_nothing PID...: after the group stopped the pair (its scope
# popped): none of PIDs (QEMUs, the netns holder) runs, no process is in
# the run's netns, no rig tap/bridge is in the host's netns.
t_left_nothing() {
	local p left=''
	for p in "$@"; do
		kill -0 "$p" 2>/dev/null && left+="pid $p still running; "
	done
	left+=$(link_leftovers "$CHECK_DIR/pair")
	left+=$(pgrep -af "qemu-system-x86_64.*$CHECK_DIR/pair/" || true)
	printf 'stopped: %s; left: %s\n' "$*" "${left:-nothing}" >&2
	[[ -z "$left" ]] || { reason "left behind: $left"; return 1; }
}

t_child() {
	local child=$1 fam peer before after mbps ping
	fam=$(child_family "$child")
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
	# The boot is the group's, in a scope of its own: popping it stops
	# the guests and the link; then nothing of them may be left.
	defer_scope_push
	check_setup boot-pair pair_boot
	check pair-link-offloads t_link_offloads
	check pair-link-private-netns t_link_private_netns
	for c in $(matrix_children); do
		check "ike-$c" t_child "$c"
	done
	local pids=("${GUEST_PID[@]}")
	[[ -z "${LINK_HOLDER:-}" ]] || pids+=("$LINK_HOLDER")
	defer_scope_pop
	check pair-stop-leaves-nothing t_left_nothing "${pids[@]}"
}
