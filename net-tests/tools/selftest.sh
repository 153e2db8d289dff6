#!/bin/bash
# Loopback self-test of skbt-payload (make selftest).  Only 127.0.0.1 and
# ::1 are used; every receiver binds port 0 and reports the port it got.
# Positive cases must verify; the negative ones (corruption, loss, wrong
# length, timeout, oversize datagram) must fail with the right reason,
# which proves the checks can fail.  Output: KTAP (net-tests/lib/tap.sh's
# ktap_line), the plan at the end.  Exit 0 when every case passed.
#
# Usage: selftest.sh [PATH-TO-skbt-payload]
set -uo pipefail

bin=${1:-./skbt-payload}
[[ -x $bin ]] || { echo "selftest: $bin not found or not executable" >&2; exit 2; }
# The rig's polling helper (loopy_wait, qemu-net/lib.sh; its EXIT trap is
# replaced below) and KTAP writer (ktap_line).
# shellcheck source=net-tests/lib/tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/tap.sh" || exit 2
tmp=$(mktemp -d) || exit 2
rpid=
trap '[[ -n $rpid ]] && kill "$rpid" 2>/dev/null; rm -rf "$tmp"' EXIT
npass=0 nfail=0 nskip=0 port=

echo "KTAP version 1"
# pass|skip NAME DETAIL, fail NAME WHY [FILE...]: one result; the detail
# and the files' lines as "# " diagnostics.
pass() { npass=$((npass + 1)); printf '# %s\n' "$2"; ktap_line ok "$((npass + nfail + nskip))" "$1"; }
skip() { nskip=$((nskip + 1)); ktap_line skip "$((npass + nfail + nskip))" "$1" "$2"; }
fail() {
	local f
	nfail=$((nfail + 1))
	for f in "${@:3}"; do
		[[ -s $f ]] && sed "s|^|# ${f##*/}: |" "$f"
	done
	ktap_line fail "$((npass + nfail + nskip))" "$1" "$2"
}

# port_or_gone OUT: the receiver printed its port (sets port) or exited.
port_or_gone() {
	port=$(sed -n '1s/^port=//p' "$1")
	[[ -n $port ]] || ! kill -0 "$rpid" 2>/dev/null
}

# start_recv OUT ARGS...: background receiver on port 0; sets rpid, port
start_recv() {
	local out=$1
	shift
	port=
	: >"$out"
	"$bin" recv -p 0 "$@" >"$out" 2>"$out.err" &
	rpid=$!
	loopy_wait "sleep 0.05" 5000 port_or_gone "$out"
	[[ -n $port ]]
}

# t NAME RECV_RC SEND_RC REGEX RECV_ARGS... [-- SEND_ARGS...]
# Runs "recv -p 0 RECV_ARGS" and, if SEND_ARGS are given, "send -p PORT
# SEND_ARGS"; both exit codes must match and the receiver's summary line
# must match REGEX (extended).
t() {
	local name=$1 want_r=$2 want_s=$3 re=$4 rc_r=0 rc_s=- sum
	local -a rargs=() sargs=()
	local out=$tmp/$1
	shift 4
	while (($#)) && [[ $1 != -- ]]; do
		rargs+=("$1")
		shift
	done
	(($#)) && shift
	sargs=("$@")
	if ! start_recv "$out" "${rargs[@]}"; then
		fail "$name" "receiver did not report its port" "$out" "$out.err"
		return
	fi
	if ((${#sargs[@]})); then
		rc_s=0
		"$bin" send -p "$port" "${sargs[@]}" >"$out.send" 2>"$out.send.err" || rc_s=$?
	fi
	wait "$rpid" || rc_r=$?
	rpid=
	sum=$(tail -n 1 "$out")
	if [[ $rc_r == "$want_r" && $rc_s == "$want_s" ]] && grep -Eq -- "$re" <<<"$sum"; then
		pass "$name" "recv rc=$rc_r send rc=$rc_s: $sum"
	else
		fail "$name" "want recv rc=$want_r send rc=$want_s /$re/, got recv rc=$rc_r send rc=$rc_s" \
			"$out" "$out.err" "$out.send" "$out.send.err"
	fi
}

# the binary must be static: it runs in a busybox initramfs
if readelf -l "$bin" 2>/dev/null | grep -q 'program interpreter'; then
	fail static "$bin is dynamically linked"
elif ! command -v readelf >/dev/null; then
	skip static "readelf not installed"
else
	pass static "no program interpreter"
fi

mark=SKBT-KNOWN-PLAINTEXT
ok_tcp='^result=ok proto=tcp .* mismatches=0$'

t tcp4 0 0 "$ok_tcp" -b 127.0.0.1 -- -c 127.0.0.1 -s 1
t tcp6-marker 0 0 "^result=ok proto=tcp family=ipv6 .*marker=20 expected=300000 bytes=300000 mismatches=0$" \
	-b ::1 -6 -n 300000 -- -c ::1 -6 -s 0xdeadbeef -n 300000 -w 1,2,3,511-513,1500,9000 --marker "$mark"
t tcp4-empty 0 0 "$ok_tcp" -b 127.0.0.1 -- -c 127.0.0.1 -n 0
t udp4 0 0 '^result=ok proto=udp family=ipv4 .*datagrams=1472 received=1472 lost=0 corrupt=0 dup=0 ' \
	-u -b 127.0.0.1 -- -u -c 127.0.0.1 -s 2 -l 1-1472
t udp6-marker 0 0 '^result=ok proto=udp family=ipv6 .*marker=20 datagrams=280 received=280 lost=0 corrupt=0 dup=0 ' \
	-u -6 -b ::1 -- -u -c ::1 -s 3 -l 1-64,1380-1450,2000,4000,8000,16000,65527 -r 2 --marker "$mark"
t udp4-max 0 0 '^result=ok proto=udp .*datagrams=3 received=3 lost=0 corrupt=0 ' \
	-u -b 127.0.0.1 -n 3 -- -u -c 127.0.0.1 -l 65505-65507 -i 0

# negative cases: the receiver must notice
t tcp-corrupt 1 1 ' first_mismatch=12345 .*reason=mismatch$' \
	-b 127.0.0.1 -- -c 127.0.0.1 -s 4 -n 100000 --corrupt-at 12345
t tcp6-corrupt-mark 1 1 ' first_mismatch=1024 .*reason=mismatch$' \
	-b ::1 -- -c ::1 -n 4096 --marker "$mark" --corrupt-at 1024
t tcp-length 1 1 'expected=4000 bytes=4000 .*reason=expect$' \
	-b 127.0.0.1 -n 5000 -- -c 127.0.0.1 -n 4000
t udp-corrupt 1 0 ' lost=0 corrupt=1 dup=0 .*first_corrupt_seq=7 reason=corrupt$' \
	-u -b ::1 -- -u -c ::1 -l 100-200 --corrupt-at 7
t udp-corrupt-hdr 1 0 ' lost=0 corrupt=1 .*first_corrupt_seq=2 reason=corrupt$' \
	-u -b 127.0.0.1 -- -u -c 127.0.0.1 -l 1-30 --marker XY --corrupt-at 2
t udp-lost 1 0 ' datagrams=100 received=99 lost=1 corrupt=0 .*reason=lost$' \
	-u -b 127.0.0.1 -- -u -c 127.0.0.1 -l 1-100 --drop-at 50
t udp-expect 1 0 ' datagrams=10 received=10 lost=0 .*reason=expect$' \
	-u -b ::1 -n 11 -- -u -c ::1 -l 100-109
t timeout 1 - ' reason=timeout$' -u -b 127.0.0.1 -t 1

# an IPv4 datagram above 65507 bytes is refused before anything is sent
rc=0
"$bin" send -u -c 127.0.0.1 -p 9 -l 65508 >"$tmp/big.out" 2>"$tmp/big.err" || rc=$?
if ((rc == 2)) && grep -q 'exceeds the ipv4 UDP maximum 65507' "$tmp/big.err"; then
	pass udp4-too-big "rc=2: $(cat "$tmp/big.err")"
else
	fail udp4-too-big "want rc=2 and a clear message, got rc=$rc" "$tmp/big.out" "$tmp/big.err"
fi

# The marker really is on the wire, and the stream is what the wire format
# in skbt-payload.c says: a raw TCP sink on 127.0.0.1 (an independent
# implementation of the generator) checks header and payload and counts the
# marker: 300000 payload bytes -> ceil(300000 / 512) = 586 copies, +1 in
# the header.
if command -v python3 >/dev/null; then
	sink=$tmp/sink
	: >"$sink"
	python3 - "$mark" >"$sink" <<'EOF' &
import socket, struct, sys
M = (1 << 64) - 1
def mix(z):
    z = ((z ^ (z >> 30)) * 0xbf58476d1ce4e5b9) & M
    z = ((z ^ (z >> 27)) * 0x94d049bb133111eb) & M
    return z ^ (z >> 31)
def gen(key, n, mark):
    out = bytearray()
    i = 0
    while len(out) < n:
        i += 1
        out += mix((key + i * 0x9e3779b97f4a7c15) & M).to_bytes(8, "little")
    del out[n:]
    for k in range(0, n, 512):
        seg = mark[:n - k]
        out[k:k + len(seg)] = seg
    return bytes(out)
mark = sys.argv[1].encode()
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(1)
print("port=%d" % s.getsockname()[1], flush=True)
s.settimeout(30)
c, _ = s.accept()
c.settimeout(30)
data = bytearray()
while True:
    b = c.recv(65536)
    if not b:
        break
    data += b
c.sendall(b"Y")
c.close()
ml = len(mark)
seed, n = struct.unpack(">QI", data[4:16])
spec = (data[:3] == b"SKT" and data[3] == ml and data[16:16 + ml] == mark
        and data[16 + ml:] == gen(seed, n, mark))
print("count=%d bytes=%d seed=0x%x spec=%s" % (data.count(mark), len(data),
      seed, "ok" if spec else "MISMATCH"), flush=True)
EOF
	rpid=$!
	loopy_wait "sleep 0.05" 5000 port_or_gone "$sink" || true
	rc=0
	"$bin" send -c 127.0.0.1 -p "${port:-1}" -s 0x0123456789abcdef -n 300000 \
		-w 1,1000,65536 --marker "$mark" >"$sink.send" 2>&1 || rc=$?
	wait "$rpid"
	rpid=
	if ((rc == 0)) && grep -qx 'count=587 bytes=300036 seed=0x123456789abcdef spec=ok' "$sink"; then
		pass marker-on-wire "$(tail -n 1 "$sink")"
	else
		fail marker-on-wire "want count=587 bytes=300036 spec=ok and send rc=0 (rc=$rc)" \
			"$sink" "$sink.send"
	fi
else
	skip marker-on-wire "python3 not installed"
fi

echo "1..$((npass + nfail + nskip))"
echo "# selftest: $npass passed, $nfail failed, $nskip skipped"
((nfail == 0))
