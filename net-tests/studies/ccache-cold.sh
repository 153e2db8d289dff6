#!/bin/bash
# What does ccache cost on a cold build (CI: empty cache, every compile a
# miss)?  The same folders of the same configured tree compiled three
# ways, each in a fresh O= folder after "make prepare", wall-clocked:
#   gcc        no ccache
#   ccache     CC="ccache gcc", an empty cache (the rig's builds before)
#   depend     the same with CCACHE_DEPEND=1 (ccache's depend mode: no
#              second preprocessor run on a miss, the hash taken from the
#              compiler's own -MD output)
# then "ccache" again on the warm cache (a rebuild's best case).
# Options: usage().
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=qemu-net/lib.sh
. "$top/qemu-net/lib.sh"
# shellcheck source=qemu-net/tree.sh
. "$top/qemu-net/tree.sh"

usage() {
	cat <<-'EOF'
		Usage: net-tests/studies/ccache-cold.sh OUT_DIR CONFIG [SRC [DIR...]]
		Wall time of compiling DIR... cold without ccache, with ccache and
		with ccache's depend mode, then warm.
		  OUT_DIR  times.txt and the build logs
		  CONFIG   a kernel .config of SRC (e.g. an installed rig kernel's)
		  SRC      the kernel tree (default: the rig's cached tree of RIG_TREE)
		  DIR      folders to build (default: net/ipv4 net/core net/xfrm)
		Exit: 0 done, 2 bad usage, 1 a build failed.
	EOF
}
case "${1:-}" in
-h | --help) usage; exit 0 ;;
'' | -*) usage >&2; exit 2 ;;
esac
(($# >= 2)) || { usage >&2; exit 2; }
out=$(realpath -m "$1") cfg=$(realpath "$2")
src=${3:-}
shift $(($# >= 3 ? 3 : 2))
dirs=("$@")
((${#dirs[@]})) || dirs=(net/ipv4/ net/core/ net/xfrm/)
[[ -n "$src" ]] || src=$(tree_ensure)
[[ -f "$src/Makefile" ]] || { echo "no kernel tree at '$src'" >&2; exit 2; }
mkdir -p "$out"
work=$(mktemp -d)
defer rm -rf "$work"
jobs=$(nproc)

run() {
	local name=$1 o=$work/$1 t0 t1
	shift
	mkdir -p "$o"
	cp "$cfg" "$o/.config"
	make -s -C "$src" O="$o" olddefconfig >/dev/null
	make -s -j"$jobs" -C "$src" O="$o" "$@" prepare >"$out/$name-prepare.log" 2>&1
	t0=$(date +%s.%N)
	make -j"$jobs" -C "$src" O="$o" "$@" "${dirs[@]}" >"$out/$name.log" 2>&1
	t1=$(date +%s.%N)
	printf '%-14s %8.1f s  %d objects\n' "$name" "$(echo "$t1 - $t0" | bc)" \
		"$(grep -cE '^  (CC|AS)' "$out/$name.log")"
}

{
	echo "dirs: ${dirs[*]}; config: $cfg; -j$jobs; $(ccache --version | head -n 1)"
	run gcc CC=gcc
	CCACHE_DIR=$work/cc1 run ccache CC="ccache gcc"
	CCACHE_DIR=$work/cc2 CCACHE_DEPEND=1 run depend CC="ccache gcc"
	CCACHE_DIR=$work/cc1 run ccache-warm CC="ccache gcc"
} | tee "$out/times.txt"
