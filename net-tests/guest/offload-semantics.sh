#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# offload-semantics.sh - what the autoload RFC changes, shown in a guest
# (patched kernel, busybox sh, iproute2, iptables-legacy, tcpdump).
#
#   ns1 veth1 10.0.1.1 ------------ veth2 10.0.1.2 ns2
#   hand-keyed transport SAs, rfc4106(gcm(aes)); a 1 MiB TCP stream of a
#   marker line from ns1 to ns2 (iperf3 -F)
#
#  1 modprobe-once-per-family: with the kernel's modprobe replaced by a
#    wrapper that logs its arguments and fails (the module "missing"),
#    20 IPv4 and 20 IPv6 ESP states ask for xfrm-offload-2-50 and
#    xfrm-offload-10-50 exactly once each.  (v4 of the RFC asked 20
#    times each; a kernel without the RFC asks 0 times.)
#  2 without-module-ciphertext: esp4_offload not loaded: the POSTROUTING
#    hook (an NFLOG rule, read by tcpdump) sees wire-sized ESP packets
#    and never the marker.
#  3 with-module-plaintext: esp4_offload loaded: NFLOG at POSTROUTING
#    sees GSO packets (over 2,000 bytes) with the marker in clear: ESP
#    runs after the hook (and after the qdisc and tc egress, whose
#    counters are printed for context).
# Exit: 0 all ok, 1 a test failed, 4 skipped (kselftest's codes).

# shellcheck source=qemu-net/guest/lib.sh
. "${0%/*}/../../qemu-net/guest/lib.sh"

IP=${IP:-/usr/sbin/ip}
NS1=os-a
NS2=os-b
A=10.0.1.1
B=10.0.1.2
MARK=SKBTMARKER
WRAP=/tmp/modprobe-count
CALLS=/tmp/modprobe-calls
ALGO="rfc4106(gcm(aes))"

cleanup() {
	[ -z "${old_modprobe:-}" ] || echo "$old_modprobe" >/proc/sys/kernel/modprobe
	$IP netns pids $NS1 2>/dev/null | xargs -r kill 2>/dev/null
	$IP netns pids $NS2 2>/dev/null | xargs -r kill 2>/dev/null
	$IP netns del $NS1 2>/dev/null
	$IP netns del $NS2 2>/dev/null
	rm -f "$WRAP" "$CALLS" /tmp/os-*.pcap /tmp/os-*.log /tmp/os-marker.txt
}
trap cleanup EXIT

key() { echo "0x$(od -An -tx1 -N20 /dev/urandom | tr -d ' \n')"; }

setup() {
	$IP netns add $NS1 && $IP netns add $NS2 &&
		$IP link add veth1 netns $NS1 type veth peer name veth2 netns $NS2 &&
		$IP -n $NS1 addr add $A/24 dev veth1 &&
		$IP -n $NS2 addr add $B/24 dev veth2 &&
		$IP -n $NS1 link set veth1 up && $IP -n $NS2 link set veth2 up &&
		$IP -n $NS1 link set lo up && $IP -n $NS2 link set lo up
}

# sas: a fresh transport SA pair and its policies (the states take the
# offload type if esp4_offload is registered when they are added).
sas() {
	k1=$(key) k2=$(key)
	for ns in $NS1 $NS2; do
		$IP -n $ns xfrm state flush && $IP -n $ns xfrm policy flush || return
		$IP -n $ns xfrm state add src $A dst $B proto esp spi 0x100 mode transport aead "$ALGO" "$k1" 128 &&
			$IP -n $ns xfrm state add src $B dst $A proto esp spi 0x101 mode transport aead "$ALGO" "$k2" 128 ||
			return
	done
	$IP -n $NS1 xfrm policy add src $A dst $B dir out tmpl src $A dst $B proto esp mode transport &&
		$IP -n $NS1 xfrm policy add src $B dst $A dir in tmpl src $B dst $A proto esp mode transport &&
		$IP -n $NS2 xfrm policy add src $B dst $A dir out tmpl src $B dst $A proto esp mode transport &&
		$IP -n $NS2 xfrm policy add src $A dst $B dir in tmpl src $A dst $B proto esp mode transport
}

modprobe_once() {
	old_modprobe=$(cat /proc/sys/kernel/modprobe)
	printf '#!/bin/sh\necho "$*" >>%s\nexit 1\n' "$CALLS" >"$WRAP"
	chmod +x "$WRAP"
	: >"$CALLS"
	echo "$WRAP" >/proc/sys/kernel/modprobe
	i=0
	while [ $i -lt 20 ]; do
		i=$((i + 1))
		$IP -n $NS1 xfrm state add src $A dst $B proto esp spi $((0x1000 + i)) \
			mode transport aead "$ALGO" "$(key)" 128 || return 1
		$IP -n $NS1 xfrm state add src fd00:1::1 dst fd00:1::2 proto esp spi $((0x1000 + i)) \
			mode transport aead "$ALGO" "$(key)" 128 || return 1
	done
	echo "$old_modprobe" >/proc/sys/kernel/modprobe
	old_modprobe=
	$IP -n $NS1 xfrm state flush
	n4=$(grep -c 'xfrm-offload-2-50$' "$CALLS")
	n6=$(grep -c 'xfrm-offload-10-50$' "$CALLS")
	echo "# modprobe calls for 20 + 20 states: xfrm-offload-2-50 $n4, xfrm-offload-10-50 $n6"
	sed 's/^/#   /' "$CALLS"
	[ "$n4" = 1 ] && [ "$n6" = 1 ]
}

# iperf3's server (port 5201) listening in ns2 (an IPv6 socket, dual-stack)
listening() { $IP netns exec $NS2 cat /proc/net/tcp /proc/net/tcp6 | grep -q ':1451 0*:0000 0A'; }
nflog_ready() { grep -q "listening on" /tmp/os-nflog.log; }

# visibility WANT: one marker stream; WANT plaintext (module loaded) or
# ciphertext: what NFLOG at POSTROUTING and tc egress saw.
visibility() {
	sas || return 1
	$IP netns exec $NS1 iptables -t mangle -F POSTROUTING
	$IP netns exec $NS1 iptables -t mangle -A POSTROUTING -p esp -j NFLOG --nflog-group 5 || return 1
	$IP netns exec $NS1 tc qdisc del dev veth1 clsact 2>/dev/null
	$IP netns exec $NS1 tc qdisc add dev veth1 clsact &&
		$IP netns exec $NS1 tc filter add dev veth1 egress protocol ip matchall action pass || return 1
	$IP netns exec $NS1 tcpdump -i nflog:5 -Z root -U -w /tmp/os-$1.pcap 2>/tmp/os-nflog.log &
	dump=$!
	slowwait 10 nflog_ready || {
		echo "# tcpdump on nflog:5 did not start:"
		sed 's/^/#   /' /tmp/os-nflog.log
		return 1
	}
	yes "$MARK" | head -c 1048576 >/tmp/os-marker.txt
	$IP netns exec $NS2 iperf3 -s -1 -D >/dev/null &&
		slowwait 10 listening || { echo "# iperf3 did not listen"; kill "$dump"; return 1; }
	$IP netns exec $NS1 iperf3 -c $B -F /tmp/os-marker.txt -n 1M >/dev/null ||
		{ echo "# iperf3 -c $B failed"; kill "$dump"; return 1; }
	kill "$dump"
	wait "$dump"
	seen=$(tcpdump -Z root -r /tmp/os-$1.pcap -A 2>/dev/null | grep -c "$MARK")
	all=$(tcpdump -Z root -nn -r /tmp/os-$1.pcap 2>/dev/null | wc -l)
	big=$(tcpdump -Z root -nn -r /tmp/os-$1.pcap greater 2000 2>/dev/null | wc -l)
	# tc's counters (context, not asserted: an action counts gso_segs
	# packets and the qdisc length of a GSO skb, so they cannot tell one
	# GSO packet from its segments)
	tcs=$($IP netns exec $NS1 tc -s filter show dev veth1 egress |
		awk '/Sent/ { print $2 + 0, $4 + 0; exit }')
	echo "# $1 expected: NFLOG at POSTROUTING: $all ESP packets, $big over 2,000 bytes (GSO), marker lines in clear $seen; tc egress: ${tcs% *} bytes in ${tcs#* } packets"
	if [ "$1" = plaintext ]; then
		[ "$seen" -gt 0 ] && [ "$big" -gt 0 ]
	else
		[ "$all" -gt 0 ] && [ "$seen" = 0 ] && [ "$big" = 0 ]
	fi
}

ktap_header
ktap_plan 3
for m in esp4_offload esp6_offload; do
	grep -q "^$m " /proc/modules || continue
	slowwait 30 rmmod "$m" || ktap_skip_all "$m is loaded and cannot be removed"
done
setup || ktap_skip_all "cannot make the two namespaces"
if modprobe_once; then ktap_ok modprobe-once-per-family; else ktap_not_ok modprobe-once-per-family "not one request per family"; fi
if visibility ciphertext; then ktap_ok without-module-ciphertext; else ktap_not_ok without-module-ciphertext; fi
if modprobe esp4_offload && visibility plaintext; then ktap_ok with-module-plaintext; else ktap_not_ok with-module-plaintext; fi
ktap_finish
