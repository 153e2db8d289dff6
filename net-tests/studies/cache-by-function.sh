# shellcheck shell=bash
# Where the sender's simulated data-cache misses go, by kernel function:
# the service-demand pass of one row (row= below) with the skbt-cache
# plugin counting by
# instruction address (GUEST_CACHE_PCS), symbolised with guest a's
# /proc/kallsyms by cache-by-function.py.  A body for qemu-net/pair.sh,
# run on each kernel under -icount as the bench's instruction phase:
#   GUEST_CACHE_PCS=1 RIG_INSN=cache RIG_ICOUNT=shift=0,sleep=on \
#     qemu-net/pair.sh --lib net-tests/lib/ipsec.sh baseline net-tests/studies/cache-by-function.sh
# (then patched), and compare:
#   net-tests/studies/cache-by-function.py OUT-baseline OUT-patched
# Output: results/cache-by-function-VARIANT: the
# demand record, kallsyms and the plugin's dump of the transfer.
# shellcheck source=net-tests/lib/acct.sh
. "$RIG_TOP/net-tests/lib/acct.sh"
# shellcheck source=net-tests/lib/func.sh
. "$RIG_TOP/net-tests/lib/func.sh"
ipsec_start

# shellcheck disable=SC2154 # pair.sh's variant and kernel directory
out=$RIG_RESULTS/cache-by-function-$variant
row='tcp-v4-transport-gcm-off'
[[ -n "${GUEST_CACHE_PCS:-}" && "$RIG_INSN" == cache ]] ||
	die "$E_USAGE" "cache-by-function: run with GUEST_CACHE_PCS=1 RIG_INSN=cache"
mkdir -p "$out"
acct_prepare "$kdir"
row_up "$row" >&2
n=$(grep -c '^mark' "$GUEST_RUN/a/cache-pcs.log" || true)
demand_row "$row" "$out/demand.txt"
row_down "$row"
guest_exec a "cat /proc/kallsyms" >"$out/kallsyms"
# the dump at the transfer's second mark: the accesses between the two
awk -v m="mark $((n + 2))" '$0 == m { f = 1; next } /^mark / { f = 0 } f' \
	"$GUEST_RUN/a/cache-pcs.log" >"$out/pcs.txt"
[[ -s "$out/pcs.txt" ]] || die "$E_FAIL" "cache-by-function: no dump after mark $((n + 2)) in $GUEST_RUN/a/cache-pcs.log"
echo "cache-by-function $variant $row: $(grep -E '^(bytes_sent|snd_l1d_misses|snd_l2_misses)=' "$out/demand.txt" | tr '\n' ' ') -> $out"
