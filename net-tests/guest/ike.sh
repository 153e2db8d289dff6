#!/bin/sh
# Guest side of the IKE/ESP plumbing (busybox sh, run through the rig's
# job channel).  Usage:
#   ike.sh start initiator|responder   charon + swanctl --load-all
#   ike.sh up CHILD                    swanctl --initiate, check the SAs
#   ike.sh down                        terminate every IKE SA, wait until
#                                      xfrm state and policy are empty
#   ike.sh offload on|off|auto         load/unload esp4_offload esp6_offload;
#                                      auto: unload, and let the kernel load
#                                      them with the first SA if it asks
# Exit: 0 ok, 8 IKE/ESP failure (the charon log is in /rig/charon.log).
set -eu
ip=/usr/sbin/ip

wait_for() { # wait_for TENTHS CMD...: poll CMD every 0.1 s
	n=$1
	shift
	while ! "$@" >/dev/null 2>&1; do
		n=$((n - 1))
		[ "$n" -gt 0 ] || return 1
		sleep 0.1
	done
}

# charon's per-socket IKE bypass policies ("socket in/out") stay; every
# SA and every "dir in/out/fwd" policy must be gone.
xfrm_empty() { [ -z "$($ip xfrm state)" ] && ! $ip xfrm policy | grep -q '^[[:space:]]*dir '; }

case "${1:-}" in
start)
	role=$2
	[ -S /var/run/charon.vici ] || {
		setsid /usr/lib/ipsec/charon >/rig/charon.out 2>&1 </dev/null &
		wait_for 200 test -S /var/run/charon.vici || {
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
	n=$($ip xfrm state | grep -c '^src')
	[ "$n" -eq 2 ] || {
		$ip xfrm state
		echo "IKE: expected 2 ESP SAs after initiating $child, found $n"
		exit 8
	}
	echo "ike_up_seconds=$(awk -v a="$start" -v b="$end" 'BEGIN{printf "%.2f", b-a}')"
	;;
down)
	swanctl --terminate --ike v4 --timeout 10 >/dev/null 2>&1 || true
	swanctl --terminate --ike v6 --timeout 10 >/dev/null 2>&1 || true
	wait_for 100 xfrm_empty || {
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
	case "${2:-}" in
	on) modprobe esp4_offload && modprobe esp6_offload ;;
	off | auto)
		if [ "$2" = off ]; then
			printf 'blacklist esp4_offload\nblacklist esp6_offload\n' >"$conf"
		fi
		modprobe -r esp4_offload esp6_offload 2>/dev/null || true
		if grep -qE '^esp[46]_offload ' /proc/modules; then exit 1; fi
		;;
	*) echo "usage: ike.sh offload on|off|auto" >&2; exit 2 ;;
	esac
	;;
*)
	echo "usage: ike.sh start ROLE | up CHILD | down | offload on|off|auto" >&2
	exit 2
	;;
esac
