# shellcheck shell=bash
# The setups of the functional rows (net-tests/matrix.sh, dimension func),
# run on the host against the booted pair.  A row's setup NAME has
#   func_NAME_up FAMILY      before its traffic
#   func_NAME_check FAMILY   after its traffic (optional): the setup did
#                            what the row is for; prints what it counted
#   func_NAME_down FAMILY    after its check
# Each returns non-zero with its reason on stderr.  Guest commands use
# full paths (the guests' PATH has no /usr/sbin).

[[ -z "${RIG_FUNC_SH:-}" ]] || return 0
RIG_FUNC_SH=1
# shellcheck source=net-tests/lib/ipsec.sh
. "$(dirname "${BASH_SOURCE[0]}")/ipsec.sh"

IP=/usr/sbin/ip
FUNC_PEER=

# func_setup up|down FUNC FAMILY: a functional row's setup (none: nothing).
func_setup() {
	local setup
	setup=$(matrix_attr func "$2" setup) || return
	[[ "$setup" == - ]] || "func_${setup}_$1" "$3"
}

# func_row_up ROW FAMILY: the row's SAs (its swanctl child, unless the
# row keys them itself) and its setup; FUNC_PEER: b's address of the
# row's traffic (func_addr: its own link's or the family's).
# func_row_down ROW FAMILY: the reverse.  Both say why on stderr.
func_row_up() {
	local row=$1 f=$2 child
	FUNC_PEER=$(func_addr "$row" "$f" b) || return
	if [[ "$(matrix_attr func "$row" ike)" == yes ]]; then
		child=$(matrix_func_child "$f" "$row")
		ipsec_up "$child" >&2 || { echo "SA $child not up" >&2; return 1; }
	fi
	func_setup up "$row" "$f"
}
func_row_down() {
	local row=$1 f=$2
	func_setup down "$row" "$f" || return
	if [[ "$(matrix_attr func "$row" ike)" == yes ]]; then
		ipsec_down || { echo "teardown left SAs" >&2; return 1; }
	fi
}

# func_study_up ROW FAMILY: a study's row: a functional row
# (func_row_up), or "esp", the family's transport gcm SA alone, the
# control the studies read the functional rows against; FUNC_PEER set.
# func_study_down ROW FAMILY: the reverse.
func_study_up() {
	if [[ "$1" != esp ]]; then
		func_row_up "$1" "$2"
		return
	fi
	# shellcheck disable=SC2034 # FUNC_PEER: the caller's
	FUNC_PEER=$(peer_addr "$2")
	ipsec_up "$(matrix_child "$2" transport gcm)" >/dev/null
}
func_study_down() {
	if [[ "$1" != esp ]]; then func_row_down "$1" "$2"; else ipsec_down; fi
}

# row_up ROW: a bench row's SA (ipsec_row_up: ROW_* set, prints
# ike_up_seconds=N) and, on a functional row, its setup.
# row_down ROW: the reverse (ipsec_down); both fail with E_FAIL or E_IKE.
row_up() {
	ipsec_row_up "$1" || return
	[[ -z "$ROW_FUNC" ]] || func_setup up "$ROW_FUNC" "$ROW_FAMILY" >&2 ||
		die "$E_FAIL" "row $1: the setup of the functional row $ROW_FUNC failed"
}
row_down() {
	row_decode "$1" || die "$E_USAGE" "unknown row '$1' (see net-tests/matrix.sh)"
	[[ -z "$ROW_FUNC" ]] || func_setup down "$ROW_FUNC" "$ROW_FAMILY" >&2 ||
		die "$E_FAIL" "row $1: the teardown of the functional row $ROW_FUNC failed"
	ipsec_down
}

# func_link_up ROW FAMILY KIND ARGS: a link of KIND (gre, vxlan) between
# a and b over the family's addresses, with the row's own addresses (a=,
# b= of the row), MTU 1400 so that an ESP packet of a full inner frame
# stays within the guest link's 1500.
func_link_up() {
	local row=$1 f=$2 kind=$3 largs=$4 g me peer dev
	dev=$(func_dev "$row")
	for g in a b; do
		[[ "$g" == a ]] && peer=b || peer=a
		me=$(matrix_attr func "$row" "$g") || return
		guest_exec "$g" "modprobe $([[ $kind == gre ]] && echo ip_gre || echo vxlan) &&
			$IP link add $dev type $kind $largs local $(matrix_addr "$f" "$g") remote $(matrix_addr "$f" "$peer") &&
			$IP link set $dev mtu 1400 up && $IP addr add $me dev $dev" >&2 ||
			{ echo "could not set up the $kind link on $g" >&2; return 1; }
	done
}

func_link_down() {
	local g dev
	dev=$(func_dev "$1")
	for g in a b; do
		guest_exec "$g" "$IP link del $dev" >&2 || { echo "could not remove $dev on $g" >&2; return 1; }
	done
}

# GRE over IPsec: GRE (IP protocol 47) between the guests' addresses is
# covered by the host-to-host transport SA.
func_gre_up() { func_link_up gre "$1" gre ''; }
func_gre_down() { func_link_down gre; }

# VXLAN over IPsec: UDP 4789 between the guests' addresses, same SA.
func_vxlan_up() { func_link_up vxlan "$1" vxlan 'id 42 dstport 4789'; }
func_vxlan_down() { func_link_down vxlan; }

# Netfilter matching ESP on both sides: a counts ESP leaving (OUTPUT) and
# the TCP it encrypts (policy match, out), b counts ESP arriving (INPUT)
# and the TCP it decrypted (policy match, in).
func_nf_ipt() { [[ "$1" == v6 ]] && echo /usr/sbin/ip6tables || echo /usr/sbin/iptables; }
func_nf_up() {
	local ipt
	ipt=$(func_nf_ipt "$1")
	if ! guest_exec a "$ipt -A OUTPUT -p esp -j ACCEPT && $ipt -A OUTPUT -p tcp -m policy --dir out --pol ipsec -j ACCEPT" >&2 ||
		! guest_exec b "$ipt -A INPUT -p esp -j ACCEPT && $ipt -A INPUT -p tcp -m policy --dir in --pol ipsec -j ACCEPT" >&2; then
		echo "could not add the $ipt rules" >&2
		return 1
	fi
}
# The rules' packet counts (prints "a OUTPUT esp=N ipsec-tcp=N" and b's):
# both of a's and b's policy rule matched; b's ESP rule matched without
# the offload modules, and with them matched nothing: the ESP offload
# module's GRO handler (esp4_gro_receive()/esp6_gro_receive())
# decrypts ESP before the IP layer, so LOCAL_IN sees only the decrypted
# packet (a rule dropping ESP on INPUT no longer drops it).  Should that
# change, this check says so.
func_nf_check() {
	local ipt g chain n
	ipt=$(func_nf_ipt "$1")
	for g in a b; do
		[[ "$g" == a ]] && chain=OUTPUT || chain=INPUT
		n=$(guest_exec "$g" "$ipt -L $chain -v -x -n" | awk 'NR > 2 {printf "%s ", $1}') ||
			{ echo "$ipt -L $chain failed on $g" >&2; return 1; }
		read -r -a n <<<"$n"
		echo "$g $chain esp=${n[0]:-none} ipsec-tcp=${n[1]:-none} (offload $FUNC_OFFLOAD)"
		[[ "${n[1]:-0}" -gt 0 ]] ||
			{ echo "$ipt policy rule on $g's $chain matched nothing" >&2; return 1; }
		if [[ "$g" == a || "$FUNC_OFFLOAD" == off ]]; then
			[[ "${n[0]:-0}" -gt 0 ]] ||
				{ echo "$ipt ESP rule on $g's $chain matched nothing" >&2; return 1; }
		else
			[[ "${n[0]:-x}" == 0 ]] ||
				{ echo "$ipt ESP rule on b's INPUT matched ${n[0]:-none} packets with the offload module loaded (ESP GRO decrypted them before LOCAL_IN until now)" >&2; return 1; }
		fi
	done
}
func_nf_down() {
	local ipt
	ipt=$(func_nf_ipt "$1")
	guest_exec a "$ipt -F OUTPUT" >&2 && guest_exec b "$ipt -F INPUT" >&2
}

# Nested SAs, transport in tunnel, keyed by hand (strongSwan does not
# negotiate bundles): per direction a transport SA (SPI 0x1xx) inside a
# tunnel SA (0x2xx) between the same two addresses, the row's proposal
# (rfc4106(gcm(aes)), fresh keys each run), one policy per direction with
# both templates.  The inner ESP packet a tunnel SA decapsulated needs no
# policy of its own (ESP's protocol handler is no_policy); the payload's
# policy check wants both SAs in the sec_path, which the ESP GRO path
# loses without the series' nested-SA fix (XfrmInTmplMismatch).
func_nested_up() {
	local f=$1 g me peer key keyed='' src dst spi i=0
	local A B
	A=$(matrix_addr "$f" a) B=$(matrix_addr "$f" b)
	for src in "$A" "$B"; do
		[[ "$src" == "$A" ]] && dst=$B || dst=$A
		for spi in 1 2; do
			i=$((i + 1))
			key=$(od -An -tx1 -N20 /dev/urandom | tr -d ' \n')
			keyed+="$IP xfrm state add src $src dst $dst proto esp spi 0x${spi}0$i"
			keyed+=" mode $([[ $spi == 1 ]] && echo transport || echo tunnel)"
			keyed+=" aead 'rfc4106(gcm(aes))' 0x$key 128 && "
		done
	done
	for g in a b; do
		me=$(matrix_addr "$f" "$g")
		[[ "$g" == a ]] && peer=$B || peer=$A
		guest_exec "$g" "$keyed
			$IP xfrm policy add src $me dst $peer dir out \
				tmpl src $me dst $peer proto esp mode transport \
				tmpl src $me dst $peer proto esp mode tunnel &&
			$IP xfrm policy add src $peer dst $me dir in \
				tmpl src $peer dst $me proto esp mode transport \
				tmpl src $peer dst $me proto esp mode tunnel" >&2 ||
			{ echo "could not key the nested SAs on $g" >&2; return 1; }
	done
}
# Each of a's four SAs carried packets.
func_nested_check() {
	local n
	n=$(sa_packets a | awk '$3 > 0 {k++} END{print k+0}')
	echo "a: $n of 4 nested SAs carried packets"
	[[ "$n" == 4 ]] || { echo "only $n of a's 4 nested SAs carried packets" >&2; return 1; }
}
func_nested_down() {
	local g
	for g in a b; do
		guest_exec "$g" "$IP xfrm policy flush && $IP xfrm state flush" >&2 ||
			{ echo "could not flush the nested SAs on $g" >&2; return 1; }
	done
}

# ESP with IPComp (swanctl ipcomp = yes; compressed payloads inside ESP,
# the offload modules loaded): b's IPComp state must have counted
# packets, or the row only tested plain ESP.
func_ipcomp_up() { :; }
func_ipcomp_check() {
	local n
	n=$(sa_packets b | awk '$4 == "comp" {n += $3} END{print n+0}')
	echo "b: IPComp states counted $n packets"
	((n > 0)) || { echo "no IPComp state on b counted a packet (IPComp not negotiated?)" >&2; return 1; }
}
func_ipcomp_down() { :; }

# WireGuard (no ESP): a link rigwg between the guests, keys made per run
# in the guests (wg genkey), the peer's endpoint on the family's address,
# UDP port 51820, MTU 1420 (an IPv6 underlay's 80 bytes of overhead
# within the guest link's 1500).  The row's traffic goes to b's address
# on the link (a=, b=; a6=, b6=).
WG_PORT=51820
func_wg_up() {
	local f=$1 g peer dev pub_a pub_b pub ep me plen
	dev=$(func_dev wg)
	if ! pub_a=$(guest_exec a "umask 077; wg genkey >/tmp/wg.key && wg pubkey </tmp/wg.key") ||
		! pub_b=$(guest_exec b "umask 077; wg genkey >/tmp/wg.key && wg pubkey </tmp/wg.key"); then
		echo "could not make WireGuard keys (wg genkey) in the guests" >&2
		return 1
	fi
	[[ "$f" == v6 ]] && plen=128 || plen=32
	for g in a b; do
		peer=a pub=$pub_a
		[[ "$g" != a ]] || peer=b pub=$pub_b
		ep=$(matrix_addr "$f" "$peer")
		[[ "$f" != v6 ]] || ep="[$ep]"
		[[ "$f" == v6 ]] && me=${MATRIX_ATTR[func.wg.${g}6]} || me=${MATRIX_ATTR[func.wg.$g]}
		guest_exec "$g" "$IP link add $dev type wireguard &&
			wg set $dev listen-port $WG_PORT private-key /tmp/wg.key \
				peer $pub endpoint $ep:$WG_PORT allowed-ips $(func_addr wg "$f" "$peer")/$plen &&
			$IP addr add $me dev $dev && $IP link set $dev mtu 1420 up" >&2 ||
			{ echo "could not set up the WireGuard link on $g" >&2; return 1; }
	done
}
# Both ends' peers carried the traffic: a sent and b received at least
# the 1 MiB TCP transfer (wg show DEV transfer: peer, rx bytes, tx bytes).
func_wg_check() {
	local dev tx rx
	dev=$(func_dev wg)
	tx=$(guest_exec a "wg show $dev transfer" | awk '{print $3}')
	rx=$(guest_exec b "wg show $dev transfer" | awk '{print $2}')
	echo "WireGuard: a sent ${tx:-none} B, b received ${rx:-none} B"
	[[ "${tx:-0}" -gt 1048576 && "${rx:-0}" -gt 1048576 ]] ||
		{ echo "the WireGuard peers carried less than the 1 MiB transfer: a sent ${tx:-none} B, b received ${rx:-none} B" >&2; return 1; }
}
func_wg_down() {
	local g dev
	dev=$(func_dev wg)
	for g in a b; do
		guest_exec "$g" "$IP link del $dev && rm -f /tmp/wg.key" >&2 ||
			{ echo "could not remove $dev on $g" >&2; return 1; }
	done
}
