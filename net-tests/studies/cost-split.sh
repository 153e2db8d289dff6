# shellcheck shell=bash
# Where the cost of ESP output goes: per-call time of esp_output() and of
# the functions it calls, probed one function at a time (guest/cost.sh,
# kprobe + kretprobe), each over the same fixed TCP transfer of one row.
# Under QEMU -icount shift=0 the times are guest instruction counts.
# Also prints the guest CPU's string-copy flags: the kernel picks its
# memcpy() by them (6.1: rep movsb with ERMS; 6.12: rep movsb only with
# FSRM, else an unrolled 8-byte loop), and TCG under -icount counts
# every iteration of a rep-prefixed instruction as one instruction.
# A body for qemu-net/pair.sh (run it on each kernel):
#   RIG_ICOUNT=shift=0,sleep=on qemu-net/pair.sh --lib net-tests/lib/ipsec.sh --tree 6.12 baseline net-tests/studies/cost-split.sh
# Output on stdout, one line per function:
#   cost-split VARIANT FUNC calls=N median=I p10=I p90=I   (or "not probed")
# shellcheck source=net-tests/lib/acct.sh
. "$RIG_TOP/net-tests/lib/acct.sh"
ipsec_start

study_row='tcp-v4-transport-gcm-off'
# shellcheck disable=SC2154 # pair.sh's VARIANT
study_variant=$RIG_TREE/$variant
echo "cost-split $study_variant cpu-flags: $(guest_exec a "grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -xE 'erms|fsrm|rep_good' | tr '\n' ' '")"
ipsec_row_up "$study_row"
for fn in xfrm_output skb_checksum_help esp_output esp_output_head esp_output_tail skb_cow_data pskb_expand_head \
	__pskb_pull_tail skb_to_sgvec crypto_aead_encrypt skb_head_alloc skb_head_replace \
	skb_linearize_private skb_copy_bits; do
	if ! guest_exec a "grep -qx '$fn' /sys/kernel/tracing/available_filter_functions"; then
		echo "cost-split $study_variant $fn not probed (not a traceable function here)"
		continue
	fi
	f=$(mktemp)
	acct_pass cost "$G/cost.sh start $fn -" "$G/cost.sh stop" "$study_row" "$f"
	echo "cost-split $study_variant $fn $(awk -F= '{sub(/^cost_/, "", $1); sub(/_ns$/, "", $1); printf "%s=%s ", $1, $2}' "$f")"
	rm -f "$f"
done
