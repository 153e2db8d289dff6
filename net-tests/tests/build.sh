# shellcheck shell=bash
# Group "build": both guest kernels (cache hits are fast), each patch of
# the series building on its own, the configs minimal as asked, the
# headroom a Debian host's.
#
# Seen to fail:
#  - headroom-as-debian-*: its first cold run (2026-12-05) wanted
#    LL_MAX_HDR=128 and read 96 from both kernels: the expectation (and
#    guest.config's comment) was wrong, HYPERV_NET=m does not count.
[[ -z "${RIG_T_BUILD_SH:-}" ]] || return 0
RIG_T_BUILD_SH=1
# shellcheck source=net-tests/lib/tap.sh
. "$RIG_TOP/net-tests/lib/tap.sh"

t_build() {
	local t=$SECONDS dir
	dir=$("$RIG_TOP/qemu-net/build-kernel.sh" "$1") || { reason "build-kernel.sh $1 failed (see log)"; return 1; }
	printf 'kernel %s: %s (%ds)\n' "$1" "$dir" "$((SECONDS - t))" >&2
}

# t_each_patch: every patch of the series builds on its own (the
# objects of the C files each commit touches, -Werror, in the patched
# kernel's config: build-kernel.sh --each-patch).
t_each_patch() {
	"$RIG_TOP/qemu-net/build-kernel.sh" --each-patch patched >/dev/null ||
		{ reason "build-kernel.sh --each-patch patched failed (see log)"; return 1; }
}

# The skb headroom TCP reserves is a Debian amd64 host's: LL_MAX_HEADER
# 96 (WLAN; HYPERV_NET=m does not count: netdevice.h tests
# defined(CONFIG_HYPERV_NET), which a module leaves undefined, on Debian
# too), MAX_HEADER 144 (the tunnel drivers add 48), so MAX_TCP_HEADER
# L1_CACHE_ALIGN(128 + 144) = 320,
# read from the built kernel's headers (net-tests/offsets), so that a
# config change that moves it (trim.config, a new tree) is seen.
t_headroom() {
	local env
	env=$("$RIG_TOP/net-tests/offsets/gen-offsets.sh" "$RIG_KERNELS/$1") ||
		{ reason "gen-offsets.sh failed for $1 (see log)"; return 1; }
	[[ $'\n'"$env"$'\n' == *$'\nLL_MAX_HDR=96\n'* && $'\n'"$env"$'\n' == *$'\nMAX_TCP_HDR=320\n'* ]] ||
		{ reason "$1: $(grep -E '^(LL_MAX_HDR|MAX_TCP_HDR)=' <<<"$env" | tr '\n' ' ')(want LL_MAX_HDR=96 MAX_TCP_HDR=320, a Debian host's)"; return 1; }
}

# The kernels are built virtme-ng's way (configs/minimal.config on
# tinyconfig): every option minimal.config asks for is in the installed
# .config, and what only x86_64_defconfig brings (ext4, cgroups, audit)
# is not.
t_config_minimal() {
	local cfg=$RIG_KERNELS/$1/.config line miss=() extra=()
	while read -r line; do
		grep -qxF "$line" "$cfg" || miss+=("$line")
	done < <(grep -E '^CONFIG_' "$RIG_TOP/configs/minimal.config")
	for line in CONFIG_EXT4_FS=y CONFIG_CGROUPS=y CONFIG_AUDIT=y; do
		! grep -qxF "$line" "$cfg" || extra+=("$line")
	done
	((${#miss[@]} + ${#extra[@]} == 0)) ||
		{ reason "$1: missing ${miss[*]:-none}; not minimal: ${extra[*]:-none}"; return 1; }
}

group_build() {
	check build-baseline t_build baseline
	check build-patched t_build patched
	check build-each-patch t_each_patch
	check config-minimal-baseline t_config_minimal baseline
	check config-minimal-patched t_config_minimal patched
	check headroom-as-debian-baseline t_headroom baseline
	check headroom-as-debian-patched t_headroom patched
}
