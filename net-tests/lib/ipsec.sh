# shellcheck shell=bash
# Host-side IPsec and traffic helpers over the guest pair.  Guest a
# initiates and sends, guest b responds and receives; the connections,
# children, offload modules and addresses are net-tests/matrix.sh's
# (peer_addr, ping_cmd there).

[[ -z "${RIG_IPSEC_SH:-}" ]] || return 0
RIG_IPSEC_SH=1
# shellcheck source=qemu-net/guests.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../qemu-net/guests.sh"
# shellcheck source=net-tests/matrix.sh
. "$RIG_TOP/net-tests/matrix.sh"
# shellcheck source=net-tests/constants.sh
. "$RIG_TOP/net-tests/constants.sh"
# shellcheck source=net-tests/lib/plugins.sh
. "$RIG_TOP/net-tests/lib/plugins.sh"

# The guest scripts, as the guests see the repository.
G=/src/net-tests/guest

# Show both sides' charon logs and fail with E_IKE.
ike_fail() {
	local g
	printf 'ERROR: IKE: %s\n' "$1" >&2
	for g in b a; do
		printf -- '--- charon log of guest %s (%s) ---\n' "$g" "$GUEST_RUN/$g/charon.log" >&2
		tail -n "$RIG_TAIL" "$GUEST_RUN/$g/charon.log" >&2 2>/dev/null || true
	done
	return "$E_IKE"
}

# ipsec_conf: each guest's swanctl.conf (from the matrix) and one fresh
# PSK for both, into their run folders (/rig), where ike.sh start takes
# them; never committed, never cached.
ipsec_conf() {
	local psk g role
	psk=$(head -c 32 /dev/urandom | base64)
	for g in a b; do
		role=initiator
		[[ "$g" == a ]] || role=responder
		swanctl_conf "$role" >"$GUEST_RUN/$g/swanctl.conf"
		printf 'secrets {\n\tike-rig {\n\t\tsecret = 0s%s\n\t}\n}\n' "$psk" >"$GUEST_RUN/$g/secrets.conf"
	done
}

# ipsec_start: charon on both guests and iperf3's server on b, once per
# boot; a new boot has the offload modules its guests booted with.
ipsec_start() {
	IPSEC_OFFLOAD=none
	ipsec_conf
	guest_exec b "$G/ike.sh start responder" >/dev/null || { ike_fail "charon failed to start on b"; return; }
	guest_exec a "$G/ike.sh start initiator" >/dev/null || { ike_fail "charon failed to start on a"; return; }
	guest_exec b "iperf3 -s -D --logfile /rig/iperf3-server.log" >/dev/null ||
		die "$E_TRAFFIC" "iperf3 server did not start on b"
}

# ipsec_offload on|off|auto: the ESP offload modules (esp4_offload,
# esp6_offload) in both guests (before any SA).
ipsec_offload() {
	local g mods
	mods=$(matrix_offload_mods | tr '\n' ' ')
	for g in a b; do
		guest_exec "$g" "$G/ike.sh offload $1 $mods" >/dev/null ||
			die "$E_FAIL" "could not switch ESP offload modules $1 on $g"
	done
}

# ipsec_up CHILD: prints ike_up_seconds=N.
ipsec_up() {
	local out
	out=$(guest_exec -t 60 a "$G/ike.sh up $1") || {
		printf '%s\n' "$out" >&2
		ike_fail "CHILD_SA $1 not established"
		return
	}
	printf '%s\n' "$out"
}

# ipsec_row_up ROW: decode ROW (row_decode: ROW_* are set), switch both
# guests' ESP offload modules to the row's mode unless this shell last
# switched them to it (IPSEC_OFFLOAD), and bring the row's child up
# (prints ike_up_seconds=N); a plaintext row needs neither.
IPSEC_OFFLOAD=none
ipsec_row_up() {
	row_decode "$1" || die "$E_USAGE" "unknown row '$1' (see net-tests/matrix.sh)"
	if [[ "$ROW_OFFLOAD" != any && "$ROW_OFFLOAD" != "$IPSEC_OFFLOAD" ]]; then
		ipsec_offload "$ROW_OFFLOAD"
		IPSEC_OFFLOAD=$ROW_OFFLOAD
	fi
	[[ -z "$ROW_CHILD" ]] || ipsec_up "$ROW_CHILD"
}

# ipsec_check_up: the CHILD_SA is still installed on both guests (a
# tunnel torn down mid-transfer would let traffic go out in the clear).
ipsec_check_up() {
	local g n
	for g in a b; do
		n=$(guest_exec "$g" "/usr/sbin/ip xfrm state | grep -c 'proto esp '" || true)
		if [[ "$n" != 2 ]]; then
			printf 'ERROR: IKE: tunnel torn down: guest %s has %s ESP SAs, expected 2\n' "$g" "${n:-0}" >&2
			return "$E_IKE"
		fi
	done
}

# ipsec_down: every IKE SA (a's connections: matrix_connections)
# terminated, no SA or policy left in either guest.
ipsec_down() {
	local g out ikes
	ikes=$(matrix_connections | tr '\n' ' ')
	for g in a b; do
		out=$(guest_exec -t "$IKE_DOWN_TIMEOUT" "$g" "$G/ike.sh down $ikes") || {
			printf '%s\n' "$out" >&2
			ike_fail "SAs left behind on $g after teardown"
			return
		}
	done
}

# sa_packets GUEST: one line per SA on that guest, "SRC DST PACKETS
# PROTO" (the packets its lifetime counted, from ip -s xfrm state; PROTO
# esp, comp, ...).
sa_packets() {
	guest_exec "$1" "/usr/sbin/ip -s xfrm state" |
		awk '/^src /{s = $2; d = $4} /^[ \t]+proto /{p = $2}
			/^[ \t]+[0-9]+\(bytes\), [0-9]+\(packets\)/{gsub(/\(packets\)/, "", $2); print s, d, $2, p}'
}

# esp_packets GUEST: ESP packets counted on that guest's ESP SAs (out + in).
esp_packets() {
	sa_packets "$1" | awk '$4 == "esp" {n += $3} END{print n+0}'
}

# iperf_run OUTJSON FAMILY|ADDRESS tcp|udp [iperf3 args...]: client on a,
# server on b (at its FAMILY address, or at ADDRESS), JSON kept on the
# host at OUTJSON.  Fails (E_TRAFFIC) on an iperf3 error or zero
# throughput.  Prints the goodput in Mbit/s.
iperf_run() {
	local out=$1 fam=$2 proto=$3 peer=$2 args=() bps rc=0
	shift 3
	! matrix_has family "$fam" || peer=$(peer_addr "$fam")
	[[ "$proto" == udp ]] && args=(-u)
	guest_exec -t 120 a "iperf3 -J -c $peer ${args[*]} $* >/rig/last-iperf.json" >/dev/null || rc=$?
	cp "$GUEST_RUN/a/last-iperf.json" "$out" 2>/dev/null || : >"$out"
	if ((rc != 0)) || ! jq -e 'has("error") | not' "$out" >/dev/null 2>&1; then
		printf 'ERROR: iperf3 %s %s to %s failed (exit %s): %s\n' "$proto" "$fam" "$peer" "$rc" \
			"$(jq -r '.error // empty' "$out" 2>/dev/null)" >&2
		tail -n 5 "$GUEST_RUN/b/iperf3-server.log" >&2 2>/dev/null || true
		return "$E_TRAFFIC"
	fi
	bps=$(iperf_goodput "$out")
	awk -v b="$bps" 'BEGIN{exit !(b > 0)}' || {
		printf 'ERROR: iperf3 %s %s: zero throughput\n' "$proto" "$fam" >&2
		return "$E_TRAFFIC"
	}
	awk -v b="$bps" 'BEGIN{printf "%.1f\n", b / 1e6}'
}

# Receiver-side goodput in bit/s from an iperf3 -J file (TCP or UDP).
iperf_goodput() {
	jq -r 'if .start.test_start.protocol == "UDP"
		then .end.sum.bits_per_second * (1 - .end.sum.lost_percent / 100)
		else .end.sum_received.bits_per_second end' "$1"
}
