# shellcheck shell=bash
# Byte-exact transfers with net-tests/tools/skbt-payload (static, run in
# the guests from /src): receiver on b, sender on a.  Sourced after
# ipsec.sh.

PAYLOAD=/src/net-tests/tools/skbt-payload
: "${PAYLOAD_UDP_SIZES:=1-1500,1999-2001,3000,4095-4097,8000,16000}"

payload_build() {
	make -s -C "$RIG_TOP/net-tests/tools" all >&2 ||
		die "$E_BUILD" "net-tests/tools does not build"
}

# payload_check FAMILY tcp|udp [sender options...]: prints both sides'
# summary lines; returns 0 only if every byte arrived intact.
payload_check() {
	local fam=$1 proto=$2 peer opts='' rdir=$GUEST_RUN/b t port=7000
	shift 2
	peer=$(peer_addr "$fam")
	[[ "$fam" == v6 ]] && opts+=" -6"
	[[ "$proto" == udp ]] && { opts+=" -u"; port=7001; }
	rm -f "$rdir/recv.out" "$rdir/recv.rc"
	guest_exec b "($PAYLOAD recv -p $port$opts -t 60 >/rig/recv.out 2>&1; echo \$? >/rig/recv.rc) &" >/dev/null
	for ((t = 0; t < 100; t++)); do
		grep -q '^port=' "$rdir/recv.out" 2>/dev/null && break
		sleep 0.1
	done
	local src=0
	guest_exec -t 240 a "$PAYLOAD send -c $peer -p $port$opts $*" || src=$?
	for ((t = 0; t < 900; t++)); do
		[[ -s "$rdir/recv.rc" ]] && break
		sleep 0.1
	done
	grep -v '^port=' "$rdir/recv.out" 2>/dev/null | sed 's/^/recv: /'
	[[ -s "$rdir/recv.rc" ]] || { echo "receiver on b did not finish"; return 1; }
	((src == 0)) && [[ "$(cat "$rdir/recv.rc")" == 0 ]]
}
