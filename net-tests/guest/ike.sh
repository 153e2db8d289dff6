#!/bin/sh
# Guest side of the IKE/ESP plumbing (busybox sh, run through the rig's
# job channel).  Usage:
#   ike.sh start initiator|responder   charon + swanctl --load-all
#   ike.sh up CHILD                    swanctl --initiate, check the SAs
#   ike.sh down IKE...                 terminate the IKE SAs of these
#                                      connections, wait until xfrm state
#                                      and policy are empty
#   ike.sh offload on|off|auto MOD...  load/unload the ESP offload modules
#                                      MOD (esp4_offload esp6_offload);
#                                      auto: unload, and let the kernel load
#                                      them with the first SA if it asks
# The connections and modules come from the host (net-tests/matrix.sh,
# written to /rig by ipsec_conf).
# Exit: 0 ok, 8 IKE/ESP failure (the charon log is in /rig/charon.log).
set -eu
ip=/usr/sbin/ip
# shellcheck source=qemu-net/guest/lib.sh
. "${0%/*}/../../qemu-net/guest/lib.sh"

# charon's per-socket IKE bypass policies ("socket in/out") stay; every
# SA and every "dir in/out/fwd" policy must be gone.
xfrm_empty() { [ -z "$($ip xfrm state)" ] && ! $ip xfrm policy | grep -q '^[[:space:]]*dir '; }

case "${1:-}" in
start)
	role=$2
	# strongswan.conf from the repository, swanctl.conf and the PSK from
	# the host (ipsec_conf, net-tests/lib/ipsec.sh)
	mkdir -p /etc/swanctl/conf.d /etc/swanctl/x509 /etc/swanctl/x509ca /etc/swanctl/private
	cp /src/configs/strongswan/strongswan.conf /etc/strongswan.conf
	cp /rig/swanctl.conf "/etc/swanctl/swanctl-$role.conf" || exit 8
	cp /rig/secrets.conf /etc/swanctl/conf.d/secrets.conf || exit 8
	[ -S /var/run/charon.vici ] || {
		setsid /usr/lib/ipsec/charon >/rig/charon.out 2>&1 </dev/null &
		slowwait 20 test -S /var/run/charon.vici || {
			echo "charon did not open its vici socket"
			cat /rig/charon.out
			exit 8
		}
	}
	swanctl --load-all --file "/etc/swanctl/swanctl-$role.conf" || exit 8
	;;
up)
	child=$2
	start=$(cut -d' ' -f1 /proc/uptime)
	if ! swanctl --initiate --child "$child" --timeout 30 >/rig/initiate.log 2>&1; then
		cat /rig/initiate.log
		echo "IKE: swanctl --initiate --child $child failed"
		exit 8
	fi
	end=$(cut -d' ' -f1 /proc/uptime)
	# (a child with IPComp adds its IPComp states, and IPIP states for
	# packets sent uncompressed: only the ESP SAs are counted)
	n=$($ip xfrm state | grep -c 'proto esp ')
	[ "$n" -eq 2 ] || {
		$ip xfrm state
		echo "IKE: expected 2 ESP SAs after initiating $child, found $n"
		exit 8
	}
	echo "ike_up_seconds=$(awk -v a="$start" -v b="$end" 'BEGIN{printf "%.2f", b-a}')"
	;;
down)
	shift
	for ike in "$@"; do
		swanctl --terminate --ike "$ike" --timeout 10 >/dev/null 2>&1 || true
	done
	slowwait 10 xfrm_empty || {
		echo "xfrm state/policy not empty after terminating the IKE SAs:"
		$ip xfrm state
		$ip xfrm policy
		exit 8
	}
	;;
offload)
	# A kernel that requests the offload type for every ESP state
	# (patched) would load the modules with the first SA: "off" also
	# blacklists their aliases (xfrm-offload-2-50, xfrm-offload-10-50).
	conf=/etc/modprobe.d/rig-esp-offload.conf
	mkdir -p /etc/modprobe.d
	rm -f "$conf"
	mode=${2:-}
	shift 2 || { echo "usage: ike.sh offload on|off|auto MODULE..." >&2; exit 2; }
	[ "$#" -gt 0 ] || { echo "usage: ike.sh offload on|off|auto MODULE..." >&2; exit 2; }
	case "$mode" in
	on) for m in "$@"; do modprobe "$m"; done ;;
	off | auto)
		for m in "$@"; do
			if [ "$mode" = off ]; then echo "blacklist $m" >>"$conf"; fi
			modprobe -r "$m" 2>/dev/null || true
		done
		for m in "$@"; do
			if grep -q "^$m " /proc/modules; then exit 1; fi
		done
		;;
	*) echo "usage: ike.sh offload on|off|auto MODULE..." >&2; exit 2 ;;
	esac
	;;
*)
	echo "usage: ike.sh start ROLE | up CHILD | down IKE... | offload on|off|auto MODULE..." >&2
	exit 2
	;;
esac
