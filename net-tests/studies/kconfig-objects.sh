#!/bin/bash
# How many objects does each candidate guest config build, and which core
# options does it change?  Without compiling: `make -n -k vmlinux modules`
# prints every compile command of a configured O= folder, and the
# distinct "-o FILE.o" of those are the objects a cold build makes.
# Candidates (the issue that asked: build only what the guests run):
#   untrimmed  x86_64_defconfig + kvm_guest + guest.config + series.config
#              (the config every figure before the trim was measured on)
#   trimmed    the same + configs/trim.config (the rig's choice)
#   allno      allnoconfig + kvm_guest + guest.config + series.config
#   debian     Debian's amd64 config (linux-config-RIG_TREE), olddefconfig
#   cloud      Debian's cloud-amd64 config, olddefconfig
# Each against "untrimmed" with net-tests/kconfigdiff.py: core options that
# differ (kernel/, mm/, net/, ... with a prompt) are a changed measurement.
# Options: usage().
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=qemu-net/lib.sh
. "$top/qemu-net/lib.sh"
# shellcheck source=qemu-net/tree.sh
. "$top/qemu-net/tree.sh"

usage() {
	cat <<-'EOF'
		Usage: net-tests/studies/kconfig-objects.sh OUT_DIR [SRC]
		Objects a cold build of each candidate guest config makes (make -n,
		nothing compiled) and the core options each changes.
		  OUT_DIR  counts.txt, one kconfigdiff-NAME.txt per candidate, the
		           configs (NAME.config)
		  SRC      a kernel tree (default: the rig's cached tree of RIG_TREE)
		Exit: 0 done, 2 bad usage, 1 a step failed.
	EOF
}
case "${1:-}" in
-h | --help) usage; exit 0 ;;
'' | -*) usage >&2; exit 2 ;;
esac
out=$(realpath -m "$1")
src=${2:-}
[[ -n "$src" ]] || src=$(tree_ensure)
[[ -f "$src/Makefile" ]] || { echo "no kernel tree at '$src'" >&2; exit 2; }
mkdir -p "$out"
work=$(mktemp -d)
defer rm -rf "$work"
frags=("$src/kernel/configs/kvm_guest.config" "$top/configs/guest.config" "$top/configs/series.config")

configure() {
	local name=$1 o=$work/$1
	mkdir -p "$o/tools/objtool"
	case "$name" in
	untrimmed | trimmed)
		make -s -C "$src" O="$o" x86_64_defconfig >/dev/null
		local f=("${frags[@]}")
		[[ "$name" == untrimmed ]] || f=("${frags[0]}" "$top/configs/trim.config" "${frags[@]:1}")
		(cd "$src" && scripts/kconfig/merge_config.sh -m -O "$o" "$o/.config" "${f[@]}") >/dev/null 2>&1 ;;
	allno)
		(cd "$src" && scripts/kconfig/merge_config.sh -n -m -O "$o" /dev/null "${frags[@]}") >/dev/null 2>&1 ;;
	debian) xzcat "/usr/src/linux-config-$RIG_TREE/config.amd64_none_amd64.xz" >"$o/.config" ;;
	cloud) xzcat "/usr/src/linux-config-$RIG_TREE/config.amd64_none_cloud-amd64.xz" >"$o/.config" ;;
	esac
	make -s -C "$src" O="$o" olddefconfig >/dev/null 2>&1
	cp "$o/.config" "$out/$name.config"
}

objects() {
	make -n -k -C "$src" O="$work/$1" vmlinux modules 2>/dev/null |
		grep -oE ' -o [^ ]+\.o ' | sort -u | wc -l
}

names=(untrimmed trimmed allno)
[[ ! -f /usr/src/linux-config-$RIG_TREE/config.amd64_none_amd64.xz ]] || names+=(debian cloud)
{
	printf '%-10s %8s %6s %6s %6s %6s\n' config objects '=y' '=m' hidden core
	for n in "${names[@]}"; do
		configure "$n"
		rc=0
		python3 "$top/net-tests/kconfigdiff.py" "$src" "$out/untrimmed.config" "$out/$n.config" \
			>"$out/kconfigdiff-$n.txt" || rc=$?
		((rc <= 1)) || exit 1
		printf '%-10s %8s %6s %6s %6s %6s\n' "$n" "$(objects "$n")" \
			"$(grep -c '=y$' "$out/$n.config")" "$(grep -c '=m$' "$out/$n.config")" \
			"$(sed -n 's/^hidden: //p' "$out/kconfigdiff-$n.txt")" \
			"$(sed -n 's/^core: //p' "$out/kconfigdiff-$n.txt")"
	done
} | tee "$out/counts.txt"
