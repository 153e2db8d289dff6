# shellcheck shell=bash
# Group "build": both guest kernels (cache hits are fast).
[[ -z "${RIG_T_BUILD_SH:-}" ]] || return 0
RIG_T_BUILD_SH=1
# shellcheck source=net-tests/lib/tap.sh
. "$RIG_TOP/net-tests/lib/tap.sh"

t_build() {
	local t=$SECONDS dir
	dir=$("$RIG_TOP/qemu-net/build-kernel.sh" "$1") || { reason "build-kernel.sh $1 failed (see log)"; return 1; }
	printf 'kernel %s: %s (%ds)\n' "$1" "$dir" "$((SECONDS - t))" >&2
}

group_build() {
	check build-baseline t_build baseline
	check build-patched t_build patched
}
