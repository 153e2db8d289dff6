# shellcheck shell=bash
# Group "build": both guest kernels (cache hits are fast).

t_build() {
	local t=$SECONDS dir
	dir=$("$RIG_TOP/qemu-net/build-kernel.sh" "$1") || { reason "build-kernel.sh $1 failed (see log)"; return 1; }
	printf 'kernel %s: %s (%ds)\n' "$1" "$dir" "$((SECONDS - t))" >&2
}

group_build() {
	check build-baseline t_build baseline
	check build-patched t_build patched
}
