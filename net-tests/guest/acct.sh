#!/bin/sh
# ESP output path accounting in the sending guest, from tracefs kprobe
# events with in-kernel hist aggregation (no counting code in the kernel).
#   acct.sh start OFFSETS_FILE   define probes + hist triggers, snapshot counters
#   acct.sh stop                 print KEY=VALUE totals for the interval, remove probes
#
# Probes (x86_64 calling convention: args in di, si, dx, cx):
#   eoh   esp_output_head / esp6_output_head entry        = ESP packets sent
#   cow   skb_cow_data(skb, tailbits, trailer) tailbits>0 = head realloc + copy;
#         it copies the linear part (skb->tail, head-relative) and pulls
#         the paged part (skb->data_len): copied_bytes sums both
#   pfrag esp_output_tail / esp6_output_tail, esp->inplace == 0
#                                                         = out of place: trailer
#         in a page frag, or (patched) into a private head (skr below)
#   put   pskb_put() (called by esp*_output_head on the in-place and cow paths)
#         so in-place = put - cow, and in-place + page-frag + private-head
#         + cow must equal eoh
#   pet   pskb_expand_head: bytes copied = skb->tail (head-relative offset)
#   ppt   __pskb_pull_tail(skb, delta): bytes copied = delta
#   sce   skb_copy_expand(skb, headroom, ...): bytes copied = headroom + skb->len
#         (pet/ppt/sce are system-wide, receive path included)
#   seg   skb_segment calls (GSO)
#   segc  skb_segment(head_skb, features) without NETIF_F_SG (bit 0 of
#         features, filter "!(features & 1)"): head_skb->len at entry =
#         segment_copied_bytes.  Software ESP GSO segments without SG
#         (esp4/esp6_gso_segment and validate_xmit_xfrm() mask NETIF_F_SG
#         and the checksum features), and skb_segment() with !sg builds
#         every segment in a new linear skb: skb_copy_and_csum_bits()
#         (skb_copy_bits() with csum) of the segment's len payload bytes,
#         offset running from doffset to head_skb->len after its
#         __skb_push(doffset).  At entry head_skb->data is past the
#         headers, so head_skb->len is exactly the payload those copies
#         add up to (except skb_segment's frag_list clone branch, which
#         copies no payload and would be over-counted here: it needs a
#         frag_list skb, and the TCP/UDP skbs ESP sends have none).
#         Probing the copy functions instead would count
#         every other caller of these two exported helpers (system-wide,
#         receive path included) with no way to tell skb_segment's calls
#         apart in a filter.  Not counted: the per-segment copy of the
#         doffset + tnl_hlen header bytes (82 B on the IPv4 transport
#         GSO row; an inline memcpy, paid with SG too), since a fetcharg
#         cannot reach gso_segs (shinfo = head + end needs an addition).  With SG skb_segment copies no payload
#         (it references the frags), so the filter sees none of those.
#   skr   skb_head_replace (series kernels only): a clone given a private
#         head (privhead).  Series v2 encrypted the clone out of place into
#         it and copied only the headers in front of the ESP header
#         (transport_header - network_header + 8 bytes, added to
#         copied_bytes); the trailer went to esp_output_tail with
#         inplace == 0, so those are taken out of pfrag.
#   skl   skb_linearize_private(skb, headroom, tailroom) (series v3): the
#         clone is copied into a private linear head, headroom + skb->len
#         bytes (copied_bytes; privhead_headroom_bytes sums the headroom),
#         then encrypted in place (pskb_put, taken out of in-place).  When
#         it exists, every skr call is one of these; a call that fails
#         (allocation failure) counts its bytes without copying them.
#   gnc   null_skcipher_crypt(req): req->cryptlen (first field) bytes copied
#         by crypto_null (7.x: memcpy_sglist(dst, src, nbytes): nbytes).  seqiv/echainiv (ESP's IV generators) copy
#         assoclen + cryptlen from src to dst this way whenever ESP
#         encrypts out of place (the page-frag path): geniv_copied_bytes
#   cowa  skb_cow_data calls by caller (the return address's function:
#         esp_output_head, encrypt_packet, ...): cow_calls.FN
#   cowp  those of them with a cloned or paged skb (the cloned bit of
#         skb->__cloned_offset, or data_len > 0): the calls that copy the
#         packet, by caller: cow_copies.FN
#   kmr   kmalloc_reserve(&size, ...) by caller (__alloc_skb,
#         pskb_expand_head, and on v5 skb_cow_data itself) and requested
#         size: the skb heads kmalloc gives, head_allocs.FN and their
#         bucket bytes head_bytes.FN (kmalloc_size_roundup() of
#         SKB_HEAD_ALIGN(size): 6.1's buckets; 6.12's small-head cache
#         not modelled): the slab footprint of the heads
#   wge   WireGuard's encrypt_packet() (when it is in kallsyms): its
#         packets, the per-packet denominator of a WireGuard row
#
# all_copied_bytes is every copy above: pet + ppt + sce (which include
# skb_cow_data's copy) + segc + skr + gnc.  Until segc was added it was
# pet + ppt + sce only (runs.jsonl records without
# segment_copied_bytes_total): it missed skb_segment's payload copy on
# the ESP GSO rows (~1,400 B per ESP packet) and the few header bytes
# of skr and gnc.
set -eu
T=/sys/kernel/tracing
K=$T/events/kprobes
ST=/tmp/acct

probe_names="eoh eoh6 cow pfrag pfrag6 put pet ppt sce seg segc skr skl gnc cowa cowp kmr wge"

snap() { # counters from /proc and sysfs, KEY=VALUE
	awk '/^Tcp:/{if(!h){split($0,k);h=1;next} for(i=2;i<=NF;i++) if(k[i]=="OutSegs") print "tcp_outsegs=" $i; h=0}' /proc/net/snmp
	awk '/^Udp:/{if(!u){split($0,k);u=1;next} for(i=2;i<=NF;i++) if(k[i]=="OutDatagrams") print "udp_outdatagrams=" $i; u=0}' /proc/net/snmp
	awk '/^Ip:/{if(!p){split($0,k);p=1;next} for(i=2;i<=NF;i++) if(k[i]=="FragCreates") print "ip_fragcreates=" $i; p=0}' /proc/net/snmp
	awk '$1=="Ip6FragCreates"{print "ip6_fragcreates=" $2} $1=="Udp6OutDatagrams"{print "udp6_outdatagrams=" $2}' /proc/net/snmp6
	echo "dev_tx_packets=$(cat /sys/class/net/eth0/statistics/tx_packets)"
	echo "dev_tx_bytes=$(cat /sys/class/net/eth0/statistics/tx_bytes)"
	/usr/sbin/ip -s xfrm state | awk '/^src/{dir=""} /^[ \t]+[0-9]+\(bytes\), [0-9]+\(packets\)/{gsub(/\(packets\)/,"",$2); n+=$2} END{print "xfrm_sa_packets=" n+0}'
	awk '{s+=$2} END{print "xfrm_stat_errors=" s+0}' /proc/net/xfrm_stat
}

hist_hits() { # total hits of an event's hist trigger
	awk '/^ *Hits:/{print $2; f=1} END{if(!f) print 0}' "$K/$1/hist"
}
hist_sum() { # sum of a value field over all hist entries
	awk -v f="$2:" '{for(i=1;i<NF;i++) if($i==f) s+=$(i+1)} END{print s+0}' "$K/$1/hist"
}
# hist_by_fn EVENT PREFIX [SHINFO]: "PREFIX.FN=HITS" per function of an
# event keyed by ra.sym (summed over its call sites); with SHINFO (the
# event also keyed by size) "head_bytes.FN=BYTES" too, each entry's
# size as the kmalloc bucket of SKB_HEAD_ALIGN(size).
hist_by_fn() {
	awk -v p="$2" -v sh="${3:-0}" '
	function bucket(n,  b) {
		if (n <= 96 && n > 64) return 96
		if (n <= 192 && n > 128) return 192
		for (b = 8; b < n; b *= 2) ;
		return b
	}
	/^\{ ra:/ {
		fn = $0; sub(/^[^]]*\] */, "", fn); sub(/[ ,}].*/, "", fn)
		h = $0; sub(/.*hitcount: */, "", h); sub(/ .*/, "", h)
		n[fn] += h
		if (sh) {
			z = $0; sub(/.*size: */, "", z); sub(/[^0-9].*/, "", z)
			a = int((z + 63) / 64) * 64 + sh
			by[fn] += h * bucket(a)
		}
	}
	END {
		for (f in n) {
			print p "." f "=" n[f]
			if (sh) print "head_bytes." f "=" by[f]
		}
	}' "$K/$1/hist"
}

cleanup() {
	for e in $probe_names; do
		[ -d "$K/$e" ] || continue
		echo 0 >"$K/$e/enable"
		t=$(grep -v '^#' "$K/$e/trigger" | head -n 1 | sed 's/ \[.*//')
		[ -z "$t" ] || echo "!$t" >"$K/$e/trigger"
		echo "-:kprobes/$e" >>"$T/kprobe_events"
	done
}

case "${1:-}" in
start)
	[ -w "$T/kprobe_events" ] || { echo "no kprobe_events in tracefs"; exit 4; }
	# shellcheck disable=SC1090
	. "$2"
	cleanup
	{
		echo "p:kprobes/eoh esp_output_head skb=%si:x64"
		echo "p:kprobes/cow skb_cow_data tailbits=%si:s32 tl=+$SKB_TAIL(%di):u32 dl=+$SKB_DATA_LEN(%di):u32"
		echo "p:kprobes/pfrag esp_output_tail inplace=+$ESP_INFO_INPLACE(%dx):u8"
		echo "p:kprobes/put pskb_put len=%dx:s32"
		echo "p:kprobes/pet pskb_expand_head copied=+$SKB_TAIL(%di):u32"
		echo "p:kprobes/ppt __pskb_pull_tail delta=%si:s32"
		echo "p:kprobes/sce skb_copy_expand hr=%si:s32 len=+$SKB_LEN(%di):u32"
		echo "p:kprobes/seg skb_segment"
		echo "p:kprobes/segc skb_segment features=%si:x64 len=+$SKB_LEN(%di):u32"
		# (7.x: the geniv templates and authenc copy with memcpy_sglist(dst,
		# src, nbytes) where 6.1 and 6.12 ran the null skcipher)
		if grep -qw null_skcipher_crypt /proc/kallsyms; then
			echo "p:kprobes/gnc null_skcipher_crypt len=+0(%di):u32"
		else
			echo "p:kprobes/gnc memcpy_sglist len=%dx:u32"
		fi
	} >>"$T/kprobe_events"
	{
		echo "p:kprobes/cowa skb_cow_data ra=+0(%sp):x64"
		echo "p:kprobes/cowp skb_cow_data ra=+0(%sp):x64 cl=+$SKB_CLONED_BYTE(%di):u8 tl=+$SKB_TAIL(%di):u32 dl=+$SKB_DATA_LEN(%di):u32"
		echo "p:kprobes/kmr kmalloc_reserve ra=+0(%sp):x64 size=+0(%di):u32"
	} >>"$T/kprobe_events"
	if grep -qw encrypt_packet /proc/kallsyms; then
		echo "p:kprobes/wge encrypt_packet" >>"$T/kprobe_events"
		echo "hist:keys=common_pid:vals=hitcount" >"$K/wge/trigger"
	fi
	echo "hist:keys=ra.sym:vals=hitcount" >"$K/cowa/trigger"
	echo "hist:keys=ra.sym:vals=hitcount,tl,dl if cl & 1 || dl > 0" >"$K/cowp/trigger"
	echo "hist:keys=ra.sym,size:vals=hitcount" >"$K/kmr/trigger"
	# IPv6 ESP is built in too; its output functions are separate symbols.
	echo "p:kprobes/eoh6 esp6_output_head skb=%si:x64" >>"$T/kprobe_events"
	echo "p:kprobes/pfrag6 esp6_output_tail inplace=+$ESP_INFO_INPLACE(%dx):u8" >>"$T/kprobe_events"
	if grep -qw skb_head_replace /proc/kallsyms; then
		echo "p:kprobes/skr skb_head_replace nh=+$SKB_NETWORK_HEADER(%di):u16 th=+$SKB_TRANSPORT_HEADER(%di):u16" >>"$T/kprobe_events"
		echo "hist:keys=common_pid:vals=hitcount,nh,th" >"$K/skr/trigger"
		echo 1 >"$K/skr/enable"
	fi
	if grep -qw skb_linearize_private /proc/kallsyms; then
		echo "p:kprobes/skl skb_linearize_private hr=%si:u32 len=+$SKB_LEN(%di):u32" >>"$T/kprobe_events"
		echo "hist:keys=common_pid:vals=hitcount,hr,len" >"$K/skl/trigger"
		echo 1 >"$K/skl/enable"
	fi
	for e in eoh eoh6 put seg; do echo "hist:keys=common_pid:vals=hitcount" >"$K/$e/trigger"; done
	echo "hist:keys=common_pid:vals=hitcount,tl,dl if tailbits > 0" >"$K/cow/trigger"
	echo "hist:keys=common_pid:vals=hitcount if inplace == 0" >"$K/pfrag/trigger"
	echo "hist:keys=common_pid:vals=hitcount if inplace == 0" >"$K/pfrag6/trigger"
	echo "hist:keys=common_pid:vals=hitcount,copied" >"$K/pet/trigger"
	echo "hist:keys=common_pid:vals=hitcount,delta" >"$K/ppt/trigger"
	echo "hist:keys=common_pid:vals=hitcount,hr,len" >"$K/sce/trigger"
	echo "hist:keys=common_pid:vals=hitcount,len if !(features & 1)" >"$K/segc/trigger"
	echo "hist:keys=common_pid:vals=hitcount,len" >"$K/gnc/trigger"
	for e in $probe_names; do
		if [ -d "$K/$e" ]; then echo 1 >"$K/$e/enable"; fi
	done
	mkdir -p "$ST"
	echo "$SKB_SHINFO_ALIGNED" >"$ST/shinfo"
	snap >"$ST/before"
	;;
stop)
	snap >"$ST/after"
	for e in $probe_names; do
		if [ -d "$K/$e" ]; then echo 0 >"$K/$e/enable"; fi
	done
	eoh=$(($(hist_hits eoh) + $(hist_hits eoh6)))
	cow=$(hist_hits cow)
	pfrag=$(($(hist_hits pfrag) + $(hist_hits pfrag6)))
	put=$(hist_hits put)
	skr_calls=0 skr_bytes=0 oop=0 lin=0 skl_hr=0
	if [ -d "$K/skr" ]; then
		echo 0 >"$K/skr/enable"
		skr_calls=$(hist_hits skr)
	fi
	if [ -d "$K/skl" ]; then
		# v3: copied, then in place
		lin=$skr_calls
		skl_hr=$(hist_sum skl hr)
		skr_bytes=$((skl_hr + $(hist_sum skl len)))
	elif [ "$skr_calls" -gt 0 ]; then
		# v2: out of place, headers copied
		oop=$skr_calls
		skr_bytes=$(($(hist_sum skr th) - $(hist_sum skr nh) + 8 * skr_calls))
	fi
	echo "esp_packets=$eoh"
	echo "cow=$cow"
	echo "pagefrag=$((pfrag - oop))"
	echo "privhead=$skr_calls"
	echo "privhead_linear=$lin"
	echo "privhead_headroom_bytes=$skl_hr"
	echo "pskb_put=$put"
	echo "inplace=$((put - cow - lin))"
	echo "expand_head_calls=$(hist_hits pet)"
	echo "pull_tail_calls=$(hist_hits ppt)"
	echo "copy_expand_calls=$(hist_hits sce)"
	echo "copied_bytes=$(($(hist_sum cow tl) + $(hist_sum cow dl) + skr_bytes))"
	segc_bytes=$(hist_sum segc len)
	gnc_bytes=$(hist_sum gnc len)
	# every copy counted: the system-wide copy helpers, skb_segment's
	# payload copy, ESP's copy into a private head, the IV generator's
	# src -> dst copy
	# (skb_cow_data's own copy on v5: cowp's bytes when kmr saw it
	# allocate heads; its other paths copy through pet and ppt)
	cown=0
	if hist_by_fn kmr x 0 | grep -q '^x\.skb_cow_data='; then
		cown=$(($(hist_sum cowp tl) + $(hist_sum cowp dl)))
	fi
	echo "all_copied_bytes=$(($(hist_sum pet copied) + $(hist_sum ppt delta) + $(hist_sum sce hr) + $(hist_sum sce len) + segc_bytes + skr_bytes + gnc_bytes + cown))"
	echo "skb_segment_calls=$(hist_hits seg)"
	echo "segment_nosg_calls=$(hist_hits segc)"
	echo "segment_copied_bytes=$segc_bytes"
	echo "geniv_copy_calls=$(hist_hits gnc)"
	echo "geniv_copied_bytes=$gnc_bytes"
	wge=0
	[ ! -d "$K/wge" ] || wge=$(hist_hits wge)
	echo "wg_packets=$wge"
	hist_by_fn cowa cow_calls
	hist_by_fn cowp cow_copies
	hist_by_fn kmr head_allocs "$(cat "$ST/shinfo")"
	# the bytes those copies take: the head up to its tail (headroom and
	# linear data) and the paged data, what skb_cow_data() copies itself
	# on v5 (its own kmalloc_reserve() calls above) and what
	# pskb_expand_head() and __pskb_pull_tail() copy for it before
	echo "cow_copied_bytes=$(($(hist_sum cowp tl) + $(hist_sum cowp dl)))"
	# counter deltas over the interval
	awk -F= 'NR==FNR{b[$1]=$2; next} {print $1 "=" $2 - b[$1]}' "$ST/before" "$ST/after"
	cleanup
	;;
*)
	echo "usage: acct.sh start OFFSETS_FILE | stop" >&2
	exit 2
	;;
esac
