# shellcheck shell=bash
# The rig's QEMU plugins in the guests (net-tests/tools): skbt-insn
# counts each guest's instructions and skbt-cache its simulated L1D/L2
# misses, both written at every skbt-mark.  guest_qemu_args is the hook
# qemu-net/guests.sh calls for each guest's extra QEMU arguments.

[[ -z "${RIG_PLUGINS_SH:-}" ]] || return 0
RIG_PLUGINS_SH=1

# insn_plugin_wanted: RIG_INSN=1 or cache, or auto with -icount and TCG.
# With several vCPUs (RIG_SMP) the plugin counts their sum, exact since
# one host thread runs them in turn (guests.sh: thread=single with a
# -plugin; -icount implies it).
insn_plugin_wanted() {
	case "$RIG_INSN" in
	1 | cache) [[ "$RIG_ACCEL" == tcg ]] ||
		die "$E_USAGE" "RIG_INSN=$RIG_INSN needs TCG (the plugins are TCG's)" ;;
	auto) [[ -n "$RIG_ICOUNT" && "$RIG_ACCEL" == tcg ]] ;;
	*) return 1 ;;
	esac
}

# guest_qemu_args NAME DIR: -plugin lines for guest NAME (outputs in its
# run folder DIR), when RIG_INSN wants them; the plugins and the guest
# tools they watch are built first.  GUEST_CACHE_PCS=1 (a study's):
# skbt-cache's misses by instruction address too.
guest_qemu_args() {
	local dir=$2 single='' t=$RIG_TOP/net-tests/tools
	insn_plugin_wanted || return 0
	((RIG_DRY_RUN)) || make -s -C "$t" skbt-insn.so skbt-cache.so skbt-mark skbt-walk >&2 ||
		die "$E_BUILD" "net-tests/tools: the QEMU plugins do not build"
	((RIG_SMP == 1)) || single=,single=on
	printf '%s\n' -plugin "file=$t/skbt-insn.so,out=$dir/insn.log$single"
	[[ "$RIG_INSN" == cache ]] || return 0
	local pcs=''
	[[ -z "${GUEST_CACHE_PCS:-}" ]] || pcs=",pcs=$dir/cache-pcs.log"
	printf '%s\n' -plugin "file=$t/skbt-cache.so,out=$dir/cache.log$single$pcs"
}
