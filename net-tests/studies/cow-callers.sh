# shellcheck shell=bash
# Which skb_cow_data() callers run in the rig's rows, and which of their
# packets take the copy (a cloned or paged skb): guest/acct.sh's cowa,
# cowp and kmr probes on both guests, by the caller's function, over a
# fixed transfer per case.  On v5 the copy allocates its head itself, so
# kmalloc_reserve() called from skb_cow_data (head_allocs.skb_cow_data)
# counts the new path; on the baseline those heads come from
# pskb_expand_head.  Cases: ESP transport (IPv4) and tunnel (IPv6), TCP
# and UDP, without and with the ESP offload modules; AH transport keyed
# by hand (IPv6: the guests' IPv4 has no AH, CONFIG_INET_AH is off);
# WireGuard TCP and UDP (IPv4 and IPv6).
# A body for qemu-net/pair.sh (run it on each kernel):
#   qemu-net/pair.sh --lib net-tests/lib/ipsec.sh baseline net-tests/studies/cow-callers.sh
#   qemu-net/pair.sh --lib net-tests/lib/ipsec.sh patched net-tests/studies/cow-callers.sh
# Output on stdout, one line per case, guest and key:
#   cow-callers VARIANT CASE GUEST KEY=VALUE
# shellcheck source=net-tests/lib/acct.sh
. "$RIG_TOP/net-tests/lib/acct.sh"
# shellcheck source=net-tests/lib/func.sh
. "$RIG_TOP/net-tests/lib/func.sh"
ipsec_start

# shellcheck disable=SC2154 # pair.sh's variant and kernel directory
study_variant=$RIG_TREE/$variant
acct_prepare "$kdir"
cp "$GUEST_RUN/a/offsets.env" "$GUEST_RUN/b/offsets.env"

# study_case NAME PEER tcp|udp: the fixed transfer to PEER with both
# guests' probes; prints their counts of skb_cow_data(), by caller.
study_case() {
	local name=$1 peer=$2 proto=$3 g cmd
	for g in a b; do
		guest_exec "$g" "$G/acct.sh start /rig/offsets.env" >/dev/null ||
			die "$E_FAIL" "$name: could not set up the probes in guest $g"
	done
	if [[ "$proto" == tcp ]]; then
		cmd="iperf3 -c $peer -n 4M -J >/rig/study-iperf.json"
	else
		cmd="iperf3 -c $peer -u -b 50M -l 1300 -n 2M -J >/rig/study-iperf.json"
	fi
	guest_exec -t 180 a "$cmd" >/dev/null || die "$E_TRAFFIC" "$name: the transfer failed"
	for g in a b; do
		guest_exec "$g" "$G/acct.sh stop" |
			grep -E '^(esp_packets|wg_packets|cow_calls\.|cow_copies\.|head_allocs\.|head_bytes\.)' |
			sed "s|^|cow-callers $study_variant $name $g |"
	done
}

for o in $(matrix_values offload); do
	ipsec_offload "$o"
	ipsec_up "$(matrix_child v4 transport gcm)" >/dev/null
	study_case "esp-v4-transport-tcp-$o" "$(peer_addr v4)" tcp
	study_case "esp-v4-transport-udp-$o" "$(peer_addr v4)" udp
	ipsec_down
	ipsec_up "$(matrix_child v6 tunnel gcm)" >/dev/null
	study_case "esp-v6-tunnel-tcp-$o" "$(peer_addr v6)" tcp
	ipsec_down
done

# AH transport, IPv6, keyed by hand (the rig's IKE children are ESP)
A=$(matrix_addr v6 a) B=$(matrix_addr v6 b)
keyed=''
for sd in "$A $B 0x301" "$B $A 0x302"; do
	read -r s d spi <<<"$sd"
	keyed+="$IP xfrm state add src $s dst $d proto ah spi $spi mode transport auth 'hmac(sha256)' 0x$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n') && "
done
for g in a b; do
	me=$A peer=$B
	[[ "$g" == a ]] || { me=$B peer=$A; }
	guest_exec "$g" "$keyed
		$IP xfrm policy add src $me dst $peer dir out tmpl src $me dst $peer proto ah mode transport &&
		$IP xfrm policy add src $peer dst $me dir in tmpl src $peer dst $me proto ah mode transport" >/dev/null ||
		die "$E_FAIL" "could not key the AH SAs on $g"
done
study_case ah-v6-transport-tcp "$B" tcp
for g in a b; do guest_exec "$g" "$IP xfrm policy flush && $IP xfrm state flush" >/dev/null; done

for f in $(matrix_values family); do
	func_row_up wg "$f" || die "$E_FAIL" "WireGuard link on $f not up"
	study_case "wg-$f-tcp" "$FUNC_PEER" tcp
	study_case "wg-$f-udp" "$FUNC_PEER" udp
	func_row_down wg "$f" || die "$E_FAIL" "WireGuard link on $f not down"
done
