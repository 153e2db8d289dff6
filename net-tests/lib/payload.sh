# shellcheck shell=bash
# Byte-exact transfers with net-tests/tools/skbt-payload (static, run in
# the guests from /src): receiver on b, sender on a.

[[ -z "${RIG_PAYLOAD_SH:-}" ]] || return 0
RIG_PAYLOAD_SH=1
# shellcheck source=net-tests/lib/ipsec.sh
. "$(dirname "${BASH_SOURCE[0]}")/ipsec.sh"

PAYLOAD=/src/net-tests/tools/skbt-payload

payload_build() {
	make -s -C "$RIG_TOP/net-tests/tools" all >&2 ||
		die "$E_BUILD" "net-tests/tools does not build"
}

# payload_check [--to ADDR] FAMILY tcp|udp [sender options...]: prints
# both sides' summary lines; returns 0 only if every byte arrived intact.
# To b's address of FAMILY, or to ADDR (an address of b's on another
# link, e.g. a GRE tunnel's).
payload_check() {
	local fam proto peer='' opts='' rdir=$GUEST_RUN/b port=7000 o
	[[ "$1" != --to ]] || { peer=$2; shift 2; }
	fam=$1 proto=$2
	shift 2
	[[ -n "$peer" ]] || peer=$(peer_addr "$fam")
	o=$(family_opt "$fam")
	[[ -z "$o" ]] || opts+=" $o"
	[[ "$proto" == udp ]] && { opts+=" -u"; port=7001; }
	rm -f "$rdir/recv.out" "$rdir/recv.rc"
	guest_exec b "($PAYLOAD recv -p $port$opts -t 60 >/rig/recv.out 2>&1; echo \$? >/rig/recv.rc) &" >/dev/null
	guests_wait 10 grep -q '^port=' "$rdir/recv.out" ||
		{ echo "receiver on b never listened"; return 1; }
	local src=0
	guest_exec -t 240 a "$PAYLOAD send -c $peer -p $port$opts $*" || src=$?
	guests_wait 90 test -s "$rdir/recv.rc" || true
	grep -v '^port=' "$rdir/recv.out" 2>/dev/null | sed 's/^/recv: /'
	[[ -s "$rdir/recv.rc" ]] || { echo "receiver on b did not finish"; return 1; }
	((src == 0)) && [[ "$(cat "$rdir/recv.rc")" == 0 ]]
}
