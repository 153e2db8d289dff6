# shellcheck shell=bash
# The virtio link between the two guests.  Sourced by guests.sh.
#
# tap (default when it can be made): a private network namespace made for
# the run and held by one process of the rig's own tree,
#
#   setpriv --pdeathsig KILL unshare -n sleep infinity      (the holder)
#   +------------------------- netns of the holder ---------------------+
#   |  lo up    rigtap0 ---- rigbr0 (bridge) ---- rigtap1               |
#   |           (vnet_hdr)                        (vnet_hdr)            |
#   |  QEMU a (nsenter -t HOLDER -n)              QEMU b                |
#   +--------------------------------------------------------------------+
#
# QEMU opens its tap with vnet_hdr=on, so the guests negotiate checksum
# offload, scatter-gather and TSO/GSO on virtio-net (ethtool -k in the
# guest shows them on; the guest init records it in RUN/<guest>/ethtool-k.txt).
# Nothing is created in the host's network namespace and nothing is
# loaded into the host kernel (tun and bridge are built in here; the
# probe finds out when they are not).  Killing the holder (and the QEMUs,
# which die first) frees the namespace, and with it the taps and the
# bridge: the rig's EXIT trap does it, and pdeathsig does it when the
# rig's shell is killed.
#
# socket (the fallback): QEMU -netdev socket between the two QEMUs on
# 127.0.0.1; needs no privileges, but has no vnet header, so no checksum
# or TSO offload reaches the guests (they segment in software).
#
# RIG_LINK (--link): tap | socket | empty = auto (tap if the probe can
# make the namespace and devices, else socket); rig_settings_check is
# where a bad value is refused.  The decision is made once per run
# (link_choose), printed as one line, and carried to children as one
# exported value, RIG_LINK_DECIDED="RIG_LINK|LINK|WHY" (the RIG_LINK it
# answers, the link, why), which link_choose reads back into
# RIG_LINK_USED and RIG_LINK_WHY.

# shellcheck source=qemu-net/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

LINK_HOLDER=
LINK_NS=

# link_probe: can this run make a private netns with vnet_hdr taps and a
# bridge?  Everything is made inside a throw-away `unshare -n`, which
# takes it all with it when it exits.  Prints why not on failure.
link_probe() {
	local out
	[[ -c /dev/net/tun ]] || { echo "no /dev/net/tun"; return 1; }
	command -v unshare >/dev/null && command -v nsenter >/dev/null ||
		{ echo "unshare/nsenter (util-linux) missing"; return 1; }
	out=$(unshare -n -- sh -c 'ip link set lo up &&
		ip tuntap add rigprobe0 mode tap vnet_hdr &&
		ip link add rigprobebr type bridge &&
		ip link set rigprobe0 master rigprobebr' 2>&1) ||
		{ printf '%s\n' "${out:-unshare -n failed}" | head -n 1; return 1; }
}

# link_choose: decide the link once (RIG_LINK_USED, RIG_LINK_WHY) and
# print one line saying which and why.  --link tap that cannot be made
# exits with E_GUEST (the guests cannot be started as asked).
link_choose() {
	local why
	if [[ -n "${RIG_LINK_DECIDED:-}" && "${RIG_LINK_DECIDED%%|*}" == "$RIG_LINK" ]]; then
		IFS='|' read -r _ RIG_LINK_USED RIG_LINK_WHY <<<"$RIG_LINK_DECIDED"
		return 0
	fi
	case "$RIG_LINK" in
	socket) RIG_LINK_USED=socket RIG_LINK_WHY="asked for: --link socket or RIG_LINK=socket" ;;
	tap)
		why=$(link_probe) ||
			die "$E_GUEST" "--link tap: cannot make the tap link here: $why (use --link socket, or leave --link unset for the automatic fallback)"
		RIG_LINK_USED=tap RIG_LINK_WHY="asked for: --link tap or RIG_LINK=tap"
		;;
	'' | auto)
		if why=$(link_probe); then
			RIG_LINK_USED=tap RIG_LINK_WHY="auto: a private netns with vnet_hdr taps and a bridge can be made"
		else
			RIG_LINK_USED=socket RIG_LINK_WHY="auto: tap link not possible here ($why); no checksum/TSO offload in the guests"
		fi
		;;
	*) rig_settings_check --no-boot ;;
	esac
	export RIG_LINK_DECIDED="$RIG_LINK|$RIG_LINK_USED|$RIG_LINK_WHY"
	printf 'link: %s (%s)\n' "$RIG_LINK_USED" "$RIG_LINK_WHY" >&2
}

netns_of() { readlink "/proc/$1/ns/net" 2>/dev/null; }
# holder_ready: the holder is in its own netns (dies if it exited).
holder_ready() {
	kill -0 "$LINK_HOLDER" 2>/dev/null || die "$E_GUEST" "tap link: the namespace holder (unshare -n) exited"
	holder_in_own_ns
}
holder_in_own_ns() {
	local ns
	ns=$(netns_of "$LINK_HOLDER") && [[ "$ns" != "$(netns_of $$)" ]]
}

# link_start RUNDIR: make the tap link (no-op for socket).  Logs the
# commands and the namespace's devices to RUNDIR/link.log.
link_start() {
	local run=$1 logf=$1/link.log i
	[[ "$RIG_LINK_USED" == tap ]] || return 0
	if ((RIG_DRY_RUN)); then
		LINK_HOLDER='$HOLDER'
		printf '%s\n' 'setpriv --pdeathsig KILL -- unshare -n -- sleep infinity & HOLDER=$!' \
			'nsenter -t $HOLDER -n -- ip link set lo up' \
			'nsenter -t $HOLDER -n -- ip tuntap add rigtap0 mode tap vnet_hdr (and rigtap1)' \
			'nsenter -t $HOLDER -n -- ip link add rigbr0 type bridge; ip link set rigtapN master rigbr0 up'
		return 0
	fi
	setpriv --pdeathsig KILL -- unshare -n -- sleep infinity &
	LINK_HOLDER=$!
	echo "$LINK_HOLDER" >"$run/link-holder.pid"
	defer link_stop
	loopy_wait "sleep 0.05" 10000 holder_ready ||
		die "$E_GUEST" "tap link: the namespace holder never entered its own netns"
	LINK_NS=$(netns_of "$LINK_HOLDER")
	echo "$LINK_NS" >"$run/link-netns"
	link_devices >"$logf" 2>&1 ||
		die "$E_GUEST" "tap link: could not make the devices in the run's netns" "$logf"
}

# The devices, inside the holder's netns.  IPv6 is off on them so the
# bridge itself never sends anything onto the guests' link.
link_devices() {
	local i
	link_ns sysctl -qw net.ipv6.conf.default.disable_ipv6=1 net.ipv6.conf.all.disable_ipv6=1 || return
	link_ns ip link set lo up || return
	link_ns ip link add rigbr0 type bridge || return
	for i in 0 1; do
		link_ns ip tuntap add "rigtap$i" mode tap vnet_hdr || return
		link_ns ip link set "rigtap$i" master rigbr0 || return
		link_ns ip link set "rigtap$i" up || return
	done
	link_ns ip link set rigbr0 up || return
	link_ns ip -d link show
}

# link_ns CMD...: run CMD in the link's namespace (logged).
link_ns() {
	printf '+ nsenter -n %s\n' "$*"
	nsenter -t "$LINK_HOLDER" -n -- "$@"
}

# link_netdev GUEST-INDEX: the -netdev argument for guest 0 or 1.
# For socket, LINK_PORT must be set (a listens, b connects).
link_netdev() {
	if [[ "$RIG_LINK_USED" == tap ]]; then
		echo "tap,id=n0,ifname=rigtap$1,script=no,downscript=no,vnet_hdr=on"
	elif (($1 == 0)); then
		echo "socket,id=n0,listen=127.0.0.1:$LINK_PORT"
	else
		echo "socket,id=n0,connect=127.0.0.1:$LINK_PORT"
	fi
}

# link_wrap: the command prefix that puts QEMU into the link's netns.
link_wrap() {
	[[ "$RIG_LINK_USED" == tap ]] && printf '%s\n' nsenter -t "$LINK_HOLDER" -n --
	return 0
}

# link_stop: kill the holder; the namespace, taps and bridge go with it
# once the QEMUs (killed before, by guests_stop) are gone too.
link_stop() {
	local pid=$LINK_HOLDER
	[[ -n "$pid" && "$pid" != '$HOLDER' ]] || return 0
	LINK_HOLDER=
	kill "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
}

# link_leftovers RUNDIR: print what of RUNDIR's tap link still exists
# (holder process, a process in its netns, rig devices in the host's
# netns); empty output = nothing left.
link_leftovers() {
	local run=$1 pid ns
	pid=$(cat "$run/link-holder.pid" 2>/dev/null) || true
	ns=$(cat "$run/link-netns" 2>/dev/null) || true
	if [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null && [[ "$(netns_of "$pid")" == "$ns" ]]; then
		echo "namespace holder $pid still running"
	fi
	if [[ -n "$ns" ]]; then
		# Any process still in the run's netns keeps it (and its taps) alive.
		for pid in /proc/[0-9]*; do
			[[ "$(netns_of "${pid#/proc/}")" == "$ns" ]] || continue
			echo "process ${pid#/proc/} ($(tr '\0' ' ' <"$pid/cmdline" 2>/dev/null | cut -c1-80)) still in the run's netns $ns"
		done
	fi
	ip -o link show 2>/dev/null | grep -E ': (rigtap[0-9]|rigbr0)[:@]' | sed 's/^/host netns has: /' || true
}
