# shellcheck shell=bash
# Group "wire": capture guest a's link on the host (QEMU filter-dump; on
# the tap link QEMU 7.2 writes the vnet header before each frame and
# wirecheck.py strips it, --vnet-hdr auto) and
# prove what crossed it.  Tunnel boot: after IKE every IP packet is ESP
# or IKE, and a marker sent through the tunnel never appears.  Control
# boot: the same traffic after the SA is torn down shows the marker and
# fails both checks, so the checks can fail.
#
# Deliberate breakages seen to fail (static-wire-checks, hand-built
# captures; no guest run):
#  - wire_expect checking the exit code only: a capture with IKE and no
#    ESP (exit 1 for "no ESP packet after IKE", no cleartext) passed the
#    control's cleartext check.
#  - main's wirecheck.py: a truncated capture passed the tunnel
#    marker-absent check and the control cleartext check.
[[ -z "${RIG_T_WIRE_SH:-}" ]] || return 0
RIG_T_WIRE_SH=1
# shellcheck source=net-tests/lib/tap.sh
. "$RIG_TOP/net-tests/lib/tap.sh"
# shellcheck source=net-tests/lib/payload.sh
. "$RIG_TOP/net-tests/lib/payload.sh"

WIRE_MARKER=SKBT-PLAINTEXT-MARKER-7e3a
# What wirecheck.py prints when each check fails for the reason the
# control run shows.
WIRE_WHY_MARKER='marker seen in cleartext'
WIRE_WHY_CLEAR='cleartext IP packets after IKE'

# Functional row tfc (net-tests/matrix.sh): with esp4_offload/esp6_offload
# loaded before the SAs, a tunnel SA with TFC padding must pad every ESP
# packet a sends.  The baseline does not (esp_xmit()/esp6_xmit() add no
# TFC padding and xfrm_dev_offload_ok() lets such states take that
# path): its capture must fail the length check for that reason, the
# patched kernel's (series v4 patch 2) must pass it.
WIRE_WHY_SHORT='shorter than'

t_wire_tfc() { # baseline|patched
	local k=$1 f child pad
	pad=$(matrix_attr func tfc swanctl) || return
	pad=${pad#*=}
	defer_scope_push
	GUEST_WIRE_PCAP=$CHECK_DIR/wire-tfc-$k.pcap guests_start "$CHECK_DIR/wire-tfc-$k" \
		"$RIG_KERNELS/$k"
	ipsec_start || { reason "charon/iperf3 did not start"; return 1; }
	ipsec_offload on
	for f in $(matrix_func_families tfc); do
		child=$(matrix_func_child "$f" tfc)
		ipsec_up "$child" >&2 || { reason "SA $child not up"; return 1; }
		guest_exec a "/usr/sbin/ip xfrm state" | grep -qw "tfcpad $pad" ||
			{ reason "a's SA of $child has no 'tfcpad $pad' (ip xfrm state)"; return 1; }
		guest_exec a "$(ping_cmd "$f") -c 5 -s 100 $(peer_addr "$f")" >&2 ||
			{ reason "ping through $child failed"; return 1; }
		ipsec_down || { reason "teardown left SAs"; return 1; }
	done
	defer_scope_pop
	[[ -s "$CHECK_DIR/wire-tfc-$k.pcap" ]] || { reason "no capture written"; return 1; }
}

# wire_tfc_checks KERNEL RC WHY NAME: per family, the length check on
# KERNEL's capture must exit RC (printing WHY).
wire_tfc_checks() {
	local k=$1 rc=$2 why=$3 name=$4 f min
	min=$(matrix_attr func tfc wire) || return
	min=${min#esp-min-len=}
	for f in $(matrix_func_families tfc); do
		check "wire-tfc-$f-$name" wire_expect "$rc" "$why" "$CHECK_DIR/wire-tfc-$k.pcap" \
			--esp-min-len "$(matrix_addr "$f" a)=$min"
	done
}

wire_traffic() {
	payload_check v4 tcp -n 256K --marker "$WIRE_MARKER" >&2 &&
		payload_check v4 udp -l 100-1400 -i 300 --marker "$WIRE_MARKER" >&2
}

t_wire_boot() { # tunnel|control
	local kind=$1
	# This test's scope: popping it stops the guests (QEMU writes out the
	# capture) and leaves nothing of the group's.
	defer_scope_push
	GUEST_WIRE_PCAP=$CHECK_DIR/wire-$kind.pcap guests_start "$CHECK_DIR/wire-$kind" \
		"$RIG_KERNELS/patched"
	ipsec_start || { reason "charon/iperf3 did not start"; return 1; }
	ipsec_up v4-gcm-transport >&2 || { reason "SA not up"; return 1; }
	if [[ "$kind" == tunnel ]]; then
		wire_traffic || { reason "transfer failed"; return 1; }
		ipsec_down || { reason "teardown left SAs"; return 1; }
	else
		ipsec_down || { reason "teardown left SAs: the control run would not be in the clear"; return 1; }
		wire_traffic || { reason "transfer failed"; return 1; }
	fi
	defer_scope_pop
	[[ -s "$CHECK_DIR/wire-$kind.pcap" ]] || { reason "no capture written"; return 1; }
}

# wire_expect RC WHY PCAP CHECK-ARGS...: wirecheck.py must exit RC, and
# for RC 1 print WHY (fixed text): a control run must fail for the reason
# it was set up to show, not for any other (exit 2 is a bad capture).
wire_expect() {
	local want=$1 why=$2 pcap=$3 rc=0 out
	shift 3
	out=$(python3 "$RIG_TOP/net-tests/wirecheck.py" "$pcap" "$@" 2>&1) || rc=$?
	printf '%s\n' "$out" >&2
	((rc == want)) || { reason "wirecheck.py $pcap $* exited $rc, expected $want"; return 1; }
	[[ -z "$why" ]] || grep -qF -- "$why" <<<"$out" ||
		{ reason "wirecheck.py $pcap $* exited $rc but did not say '$why'"; return 1; }
}

group_wire() {
	payload_build
	if check_ok wire-capture-tfc-baseline t_wire_tfc baseline; then
		wire_tfc_checks baseline 1 "$WIRE_WHY_SHORT" baseline-unpadded
	fi
	if check_ok wire-capture-tfc-patched t_wire_tfc patched; then
		wire_tfc_checks patched 0 '' padded
	fi
	if check_ok wire-capture-tunnel t_wire_boot tunnel; then
		check wire-tunnel-only-esp-after-ike wire_expect 0 '' "$CHECK_DIR/wire-tunnel.pcap" --after-ike-only-esp
		check wire-tunnel-marker-absent wire_expect 0 '' "$CHECK_DIR/wire-tunnel.pcap" --absent "$WIRE_MARKER"
	fi
	if check_ok wire-capture-control t_wire_boot control; then
		check wire-control-marker-present wire_expect 0 '' "$CHECK_DIR/wire-control.pcap" --present "$WIRE_MARKER"
		check wire-control-absent-check-fails wire_expect 1 "$WIRE_WHY_MARKER" \
			"$CHECK_DIR/wire-control.pcap" --absent "$WIRE_MARKER"
		check wire-control-esp-check-fails wire_expect 1 "$WIRE_WHY_CLEAR" \
			"$CHECK_DIR/wire-control.pcap" --after-ike-only-esp
	fi
}
