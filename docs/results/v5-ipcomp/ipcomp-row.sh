# shellcheck shell=bash
# The func group's ipcomp row by hand, for qemu-net/pair.sh --ike
# (README.md beside this file): SA up with the offload modules loaded,
# byte-exact TCP and UDP, b's IPComp packet count, b's xfrm_stat.
# shellcheck source=net-tests/lib/tap.sh
. "$RIG_TOP/net-tests/lib/tap.sh"
# shellcheck source=net-tests/lib/payload.sh
. "$RIG_TOP/net-tests/lib/payload.sh"
# shellcheck source=net-tests/lib/func.sh
. "$RIG_TOP/net-tests/lib/func.sh"
# shellcheck source=net-tests/tests/func.sh
. "$RIG_TOP/net-tests/tests/func.sh"
payload_build
ipsec_offload on
func_row_up ipcomp v4
rc=0
func_traffic v4 - || rc=$?
echo "func_traffic rc=$rc"
func_ipcomp_check v4 || true
guest_exec b "awk '\$2 != 0' /proc/net/xfrm_stat"
exit 0
