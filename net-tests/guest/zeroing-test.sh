#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# zeroing-test.sh - do IPsec SA keys reach kfree() unwiped?
#
# Runs inside a guest (busybox sh, iproute2 at /usr/sbin/ip, tracefs).
# Output is KTAP (qemu-net/guest/lib.sh's writer); exit 0 = all ok,
# 1 = a test failed, 4 = skipped (kselftest's codes, no others).
#
#   kprobe events on kfree() and on kfree_sensitive()
#        |  fetch 8 bytes at the start of the object (identifies it)
#        |  and 8 bytes at the offset of the key inside it
#        v
#   ip xfrm state add  (IPv4 + IPv6, AEAD and auth+enc SAs, marker keys)
#   ip xfrm state delete  -> xfrm_state_gc_destroy() from a workqueue
#        v
#   count events whose fetched bytes are the marker key:
#     kfree() hit             -> the key was freed unwiped     (not ok)
#     kfree_sensitive() hit   -> the key was freed and wiped    (ok)
#     neither                 -> the probe saw nothing (blind)  (not ok,
#                                marked "# ZT-BLIND-PROBE: ...")
#
# The kfree_sensitive() probe is the positive control: on a kernel that
# wipes, the probe must see the marker at kfree_sensitive() entry, so a
# test cannot pass because the probe looked at the wrong bytes.  The
# IPv4 authenc key blob (esp4.c, already freed with kfree_sensitive()
# upstream) is a control that passes on the baseline kernel too.
#
# Offsets (x86_64; the layouts have no padding, so they hold on any
# 64-bit or 32-bit architecture).  Derived from the declarations in
# include/uapi/linux/xfrm.h, include/uapi/linux/rtnetlink.h and
# include/crypto/authenc.h, with pahole unavailable:
#
#   struct xfrm_algo_aead (x->aead)     struct xfrm_algo_auth (x->aalg)
#     +0  char alg_name[64]               +0  char alg_name[64]
#     +64 unsigned int alg_key_len        +64 unsigned int alg_key_len
#     +68 unsigned int alg_icv_len        +68 unsigned int alg_trunc_len
#     +72 char alg_key[]                  +72 char alg_key[]
#
#   struct xfrm_algo (x->ealg)
#     +0  char alg_name[64]
#     +64 unsigned int alg_key_len
#     +68 char alg_key[]
#
#   authenc key blob of esp_init_authenc() (esp4.c and esp6.c)
#     +0  struct rtattr { u16 rta_len = 8; u16 rta_type = 1 (KEYA_PARAM) }
#     +4  struct crypto_authenc_key_param { __be32 enckeylen = 16 }
#     +8  auth key (RTA_SPACE(sizeof(param)) = RTA_ALIGN(4 + 4) = 8)
#     +8+32 = +40 enc key (after the 32-byte hmac(sha256) key)
#
# Note x->aalg is struct xfrm_algo_auth (key at +72), not struct
# xfrm_algo (+68): attach_auth()/attach_auth_trunc() in xfrm_user.c.
#
# The first 8 bytes identify the object: the algorithm name
# ("rfc4106(", "hmac(sha", "cbc(aes)") or the blob header
# 08 00 01 00 00 00 00 10, read as a little-endian u64.
#
# Environment (for running the logic against a fake tracefs):
#   TRACEFS (default /sys/kernel/tracing), IP (default /usr/sbin/ip),
#   ZT_TIMEOUT (seconds to wait for the state GC, default 30),
#   ZT_GROUP (kprobe event group, default zt<pid>).

# The polling helper (slowwait) and the KTAP writer (ktap_*), beside the
# script's own directory.
# shellcheck source=qemu-net/guest/lib.sh
. "${0%/*}/../../qemu-net/guest/lib.sh"

TRACEFS=${TRACEFS:-/sys/kernel/tracing}
IP=${IP:-/usr/sbin/ip}
ZT_TIMEOUT=${ZT_TIMEOUT:-30}
GROUP=${ZT_GROUP:-zt$$}

# Marks the verdict of an object no probe saw freed: a blind probe, which
# proves nothing about wiping.  The host matches this exact string
# (ZEROING_BLIND_MARK in net-tests/tests/kernel.sh): keep both in step.
BLIND_MARK=ZT-BLIND-PROBE

# Marker keys.  The first 8 bytes of each are what the probes compare;
# their top byte is 0x10..0x7f so the value prints as 16 hex digits and
# is positive as a signed 64-bit number.
K_AEAD4=0x21436587a9cbed1fa0a1a2a3a4a5a6a7a8a9aaab	# 160 bits
K_AEAD6=0x314253647586972aa0a1a2a3a4a5a6a7a8a9aaab	# 160 bits
K_AUTH4=0x123456789abcde71a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7
K_ENC4=0x13579bdf2468ac61a0a1a2a3a4a5a6a7	# 128 bits
K_AUTH6=0x22446608aaccee72a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7
K_ENC6=0x23456709abcdef63a0a1a2a3a4a5a6a7	# 128 bits

# Object headers (first 8 bytes as a little-endian u64).
H_RFC4106=0x2836303134636672	# "rfc4106("
H_HMACSHA=0x6168732863616d68	# "hmac(sha"
H_CBCAES=0x2973656128636263	# "cbc(aes)"
H_BLOB=0x1000000000010008	# rtattr{8, 1} + be32 16

SPI_AEAD4=0x7a5e0001
SPI_AEAD6=0x7a5e0002
SPI_AE4=0x7a5e0003
SPI_AE6=0x7a5e0004

# le64 0xKEY: the first 8 key bytes read as a little-endian u64, in the
# form the x64 fetch type prints ("0x%llx").
le64() {
	s=${1#0x}
	s=$(printf '%.16s' "$s")
	out=
	while [ -n "$s" ]; do
		b=${s%"${s#??}"}
		s=${s#??}
		out=$b$out
	done
	echo "0x$out" | tr 'A-F' 'a-f'
}

M_AEAD4=$(le64 $K_AEAD4)
M_AEAD6=$(le64 $K_AEAD6)
M_AUTH4=$(le64 $K_AUTH4)
M_ENC4=$(le64 $K_ENC4)
M_AUTH6=$(le64 $K_AUTH6)
M_ENC6=$(le64 $K_ENC6)

cleanup() {
	if [ -d "$TRACEFS/events/$GROUP" ]; then
		echo 0 >"$TRACEFS/events/$GROUP/enable" 2>/dev/null
		for ev in "$TRACEFS/events/$GROUP"/*/; do
			ev=${ev%/}
			ev=${ev##*/}
			[ "$ev" = "*" ] && continue
			echo "-:$GROUP/$ev" >>"$TRACEFS/kprobe_events" 2>/dev/null
		done
	fi
	del_sas
}

del_sas() {
	"$IP" xfrm state delete src 192.0.2.1 dst 192.0.2.2 proto esp \
		spi $SPI_AEAD4 2>/dev/null
	"$IP" -6 xfrm state delete src 2001:db8::1 dst 2001:db8::2 \
		proto esp spi $SPI_AEAD6 2>/dev/null
	"$IP" xfrm state delete src 192.0.2.1 dst 192.0.2.2 proto esp \
		spi $SPI_AE4 2>/dev/null
	"$IP" -6 xfrm state delete src 2001:db8::1 dst 2001:db8::2 \
		proto esp spi $SPI_AE6 2>/dev/null
}

# add_probe NAME FUNC ARGS... : one kprobe event, first with the
# portable $arg1, then with x86_64's %di.
add_probe() {
	name=$1
	func=$2
	shift 2
	args=$*
	# shellcheck disable=SC2016 # $arg1 is for the kernel, not the shell
	echo "p:$GROUP/$name $func $(echo "$args" | sed 's/ARG1/$arg1/g')" \
		>>"$TRACEFS/kprobe_events" 2>/dev/null && return 0
	[ "$(uname -m)" = x86_64 ] || return 1
	echo "p:$GROUP/$name $func $(echo "$args" | sed 's/ARG1/%di/g')" \
		>>"$TRACEFS/kprobe_events" 2>/dev/null
}

set_filter() {
	echo "$2" >"$TRACEFS/events/$GROUP/$1/filter"
}

# The four object layouts, each probed at kfree() (kf_*) and at
# kfree_sensitive() (ks_*).
setup_probes() {
	for fn in kfree kfree_sensitive; do
		p=kf
		[ $fn = kfree_sensitive ] && p=ks
		add_probe ${p}_aead $fn 'h=+0(ARG1):x64 k=+72(ARG1):x64' || return 1
		add_probe ${p}_auth $fn 'h=+0(ARG1):x64 k=+72(ARG1):x64' || return 1
		add_probe ${p}_enc $fn 'h=+0(ARG1):x64 k=+68(ARG1):x64' || return 1
		add_probe ${p}_blob $fn \
			'h=+0(ARG1):x64 a=+8(ARG1):x64 e=+40(ARG1):x64' || return 1
		set_filter ${p}_aead \
			"h == $H_RFC4106 && (k == $M_AEAD4 || k == $M_AEAD6)" || return 1
		set_filter ${p}_auth \
			"h == $H_HMACSHA && (k == $M_AUTH4 || k == $M_AUTH6)" || return 1
		set_filter ${p}_enc \
			"h == $H_CBCAES && (k == $M_ENC4 || k == $M_ENC6)" || return 1
		set_filter ${p}_blob \
			"h == $H_BLOB && ((a == $M_AUTH4 && e == $M_ENC4) || (a == $M_AUTH6 && e == $M_ENC6))" ||
			return 1
	done
}

# hits EVENT FIELD VALUE: events of that kind whose FIELD had VALUE.
hits() {
	grep -cE " $1: .* $2=$3( |\$)" "$TRACEFS/trace"
}

# seen OBJ: kfree() + kfree_sensitive() hits for one object.
seen() {
	# shellcheck disable=SC2046 # spec prints three words
	set -- $(spec "$1")
	echo $(($(hits "kf_$1" "$2" "$3") + $(hits "ks_$1" "$2" "$3")))
}

# spec OBJ -> "layout field marker"
spec() {
	case $1 in
	aead4) echo aead k "$M_AEAD4" ;;
	aead6) echo aead k "$M_AEAD6" ;;
	aalg4) echo auth k "$M_AUTH4" ;;
	ealg4) echo enc k "$M_ENC4" ;;
	aalg6) echo auth k "$M_AUTH6" ;;
	ealg6) echo enc k "$M_ENC6" ;;
	blob4) echo blob a "$M_AUTH4" ;;
	blob6) echo blob a "$M_AUTH6" ;;
	esac
}

OBJS="aead4 aead6 aalg4 ealg4 aalg6 ealg6 blob4 blob6"

desc() {
	case $1 in
	aead4) echo "xfrm_state_gc_destroy: x->aead key wiped (IPv4 rfc4106(gcm(aes)))" ;;
	aead6) echo "xfrm_state_gc_destroy: x->aead key wiped (IPv6 rfc4106(gcm(aes)))" ;;
	aalg4) echo "xfrm_state_gc_destroy: x->aalg key wiped (IPv4 hmac(sha256))" ;;
	ealg4) echo "xfrm_state_gc_destroy: x->ealg key wiped (IPv4 cbc(aes))" ;;
	aalg6) echo "xfrm_state_gc_destroy: x->aalg key wiped (IPv6 hmac(sha256))" ;;
	ealg6) echo "xfrm_state_gc_destroy: x->ealg key wiped (IPv6 cbc(aes))" ;;
	blob4) echo "esp4 esp_init_authenc: key blob wiped (control, upstream)" ;;
	blob6) echo "esp6 esp_init_authenc: key blob wiped" ;;
	esac
}

# --- prerequisites -------------------------------------------------------
[ "$(id -u)" = 0 ] || ktap_skip_all "needs root"
[ -x "$IP" ] || ktap_skip_all "$IP (iproute2) not found"
if [ ! -e "$TRACEFS/kprobe_events" ]; then
	mount -t tracefs nodev "$TRACEFS" 2>/dev/null
	[ -e "$TRACEFS/kprobe_events" ] || ktap_skip_all "no tracefs kprobe_events at $TRACEFS"
fi
"$IP" xfrm state list >/dev/null 2>&1 || ktap_skip_all "ip xfrm not usable (XFRM_USER?)"

trap cleanup EXIT
trap 'exit 1' INT TERM

ktap_header
del_sas
setup_probes || {
	echo "# could not create kprobe events on kfree/kfree_sensitive"
	cleanup
	trap - EXIT
	ktap_skip_all "kprobe events on kfree() unavailable"
}
echo 1 >"$TRACEFS/tracing_on"
: >"$TRACEFS/trace"
echo 1 >"$TRACEFS/events/$GROUP/enable"

ktap_plan 8

# --- SAs with marker keys: added (authenc blob freed) then deleted ---------
add_err=
"$IP" xfrm state add src 192.0.2.1 dst 192.0.2.2 proto esp spi $SPI_AEAD4 \
	mode transport aead 'rfc4106(gcm(aes))' $K_AEAD4 128 || add_err="$add_err aead4"
"$IP" -6 xfrm state add src 2001:db8::1 dst 2001:db8::2 proto esp spi $SPI_AEAD6 \
	mode transport aead 'rfc4106(gcm(aes))' $K_AEAD6 128 || add_err="$add_err aead6"
"$IP" xfrm state add src 192.0.2.1 dst 192.0.2.2 proto esp spi $SPI_AE4 \
	mode transport auth-trunc 'hmac(sha256)' $K_AUTH4 128 \
	enc 'cbc(aes)' $K_ENC4 || add_err="$add_err ae4"
"$IP" -6 xfrm state add src 2001:db8::1 dst 2001:db8::2 proto esp spi $SPI_AE6 \
	mode transport auth-trunc 'hmac(sha256)' $K_AUTH6 128 \
	enc 'cbc(aes)' $K_ENC6 || add_err="$add_err ae6"
[ -n "$add_err" ] && echo "# ip xfrm state add failed for:$add_err"
del_sas

# --- wait for the state GC work (slowwait, bounded) ------------------------
# all_seen: a free seen for every object (the others in $missing).
all_seen() {
	missing=
	for o in $OBJS; do
		[ "$(seen "$o")" -gt 0 ] || missing="$missing $o"
	done
	[ -z "$missing" ]
}
slowwait "$ZT_TIMEOUT" all_seen || true
echo 0 >"$TRACEFS/events/$GROUP/enable"
[ -n "$missing" ] && echo "# after ${ZT_TIMEOUT}s no free seen for:$missing"

# --- verdicts ---------------------------------------------------------------
for o in $OBJS; do
	# shellcheck disable=SC2046 # spec prints three words
	set -- $(spec "$o")
	kf=$(hits "kf_$1" "$2" "$3")
	ks=$(hits "ks_$1" "$2" "$3")
	echo "# $o: layout $1, $2=$3: kfree() unwiped $kf, kfree_sensitive() $ks"
	if [ "$kf" -gt 0 ]; then
		ktap_not_ok "$(desc "$o")" "marker reached kfree() unwiped $kf time(s)"
	elif [ "$ks" -eq 0 ]; then
		ktap_not_ok "$(desc "$o")" "$BLIND_MARK: probe saw no free of this object"
	else
		ktap_ok "$(desc "$o")"
	fi
done

ktap_finish
