#!/bin/bash
# Build one guest kernel variant from the cached tree, with ccache and a
# per-variant O= directory, and install it under
# $RIG_KERNELS/<variant>-<key>/ (bzImage, modules, config).
# The key hashes tarball + config fragments + series (+ compiler): an
# unchanged key is a cache hit and builds nothing.  Options: usage().
set -euo pipefail
# shellcheck source=qemu-net/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=qemu-net/tree.sh
. "$RIG_TOP/qemu-net/tree.sh"

usage() {
	cat <<-'EOF'
		Usage: qemu-net/build-kernel.sh [--dry-run|--prepare|--config DIR|--each-patch] VARIANT
		Build one guest kernel of the tree RIG_TREE (cached: an unchanged
		tarball, config and series build nothing) and print its directory.
		Every kernel's config is virtme-ng's way: tinyconfig +
		kvm_guest.config + configs/minimal.config + configs/guest.config +
		configs/tree-TREE.config [+ series.config] [+ configs/debug.config].
		  VARIANT      baseline (tag base, + RIG_BASELINE_PATCHES if set),
		               patched (base + the series RIG_PATCHES) or debug
		               (patched + configs/debug.config)
		  --dry-run    print the cache key and the make commands, build nothing
		  --prepare    apply the variant's series to the cached tree (git am,
		               a patch that does not apply fails here), build nothing
		  --config DIR write the variant's .config into DIR (an O= folder,
		               made if missing), build nothing
		  --each-patch after the kernel (built or cached), build each patch
		               of its series on its own: for every commit from the
		               tree's base, the objects of the C files it touches
		  -h, --help   this text
		A series directory's series.config, if any, is merged into the
		config (the rig's own series: configs/series.config).
		Settings: RIG_CACHE, RIG_TREE, RIG_TARBALL, RIG_PATCHES,
		RIG_BASELINE_PATCHES, RIG_JOBS (qemu-net/defaults.sh).
		Exit: 0 ok, 2 bad usage, 3 package missing, 5 a patch does not apply,
		6 the build failed.
		Examples:
		  qemu-net/build-kernel.sh --dry-run patched
		  qemu-net/build-kernel.sh --config /tmp/cfg patched
		  qemu-net/build-kernel.sh --each-patch patched
		  RIG_BASELINE_PATCHES=patches/stable/6.1/autoload-only RIG_TREE=6.1 qemu-net/build-kernel.sh --dry-run baseline
	EOF
}

dry=0 prep=0 variant='' cfgdir='' each=0
while (($#)); do
	case "$1" in
	--dry-run) dry=1 ;;
	--prepare) prep=1 ;;
	--config) opt_value "$@"; cfgdir=$2; shift ;;
	--each-patch) each=1 ;;
	-h | --help) usage; exit 0 ;;
	-*) usage_error "unknown option '$1'" ;;
	*) [[ -z "$variant" ]] || usage_error "one VARIANT only: '$1'"; variant=$1 ;;
	esac
	shift
done
# ref: the tree's branch the variant builds; sdir: its series (none for
# the pristine baseline); series.config (or the series' own) holds the
# options the series adds (absent in base).
case "$variant" in
baseline) ref=base sdir=$RIG_BASELINE_PATCHES ;;
patched | debug) ref=patched sdir=$RIG_PATCHES ;;
'') usage_error "no VARIANT given" ;;
*) usage_error "VARIANT must be baseline, patched or debug, not '$variant'" ;;
esac
((each == 0 || ${#cfgdir} == 0)) || usage_error "--each-patch and --config do not go together"
[[ "$each" == 0 || "$variant" == patched ]] || usage_error "--each-patch builds the patched kernel's series"
rig_settings_check --no-boot
base=tinyconfig
fragpaths=("$RIG_TOP/configs/minimal.config" "$RIG_TOP/configs/guest.config")
# (options whose name or type differs by tree)
[[ ! -f "$RIG_TOP/configs/tree-$RIG_TREE.config" ]] ||
	fragpaths+=("$RIG_TOP/configs/tree-$RIG_TREE.config")
skey=none
if [[ -n "$sdir" ]]; then
	[[ -d "$sdir" ]] || die "$E_PATCH" "series directory $sdir not found"
	sdir=$(realpath "$sdir")
	[[ "$ref" == patched ]] || ref=baseline
	skey=$(series_key "$sdir")
	sconf=$(series_config "$sdir")
	[[ -z "$sconf" ]] || fragpaths+=("$sconf")
fi
[[ "$variant" != debug ]] || fragpaths+=("$RIG_TOP/configs/debug.config")
frags=("${fragpaths[@]##*/}")

tkey=$(tarball_key)
key=$({
	echo "build-v2 $variant $tkey $skey"
	cat "${fragpaths[@]}"
	gcc --version | head -n 1
} | sha)
out=$RIG_KERNELS/$variant-$key
# baseline and patched share one O= dir: they differ in the files the
# series touches (and series.config symbols), so switching between them
# rebuilds only those.  debug (KASAN etc.) differs everywhere: own dir.
bdir=$RIG_CACHE/build/$RIG_TREE/main
[[ "$variant" == debug ]] && bdir=$RIG_CACHE/build/$RIG_TREE/debug

mk=(make -j"$RIG_JOBS" O="$bdir" CC="ccache gcc" HOSTCC="ccache gcc"
	KBUILD_BUILD_TIMESTAMP="2009-02-10" KBUILD_BUILD_USER=rig
	KBUILD_BUILD_HOST=skb-tailroom)

if ((dry)); then
	printf 'variant=%s ref=%s key=%s\nseries=%s\nout=%s\n' "$variant" "$ref" "$key" "${sdir:-none}" "$out"
	printf '%q ' "${mk[@]}" "$base"; echo
	printf '%q ' scripts/kconfig/merge_config.sh -m -O "$bdir" "$bdir/.config" \
		kernel/configs/kvm_guest.config "${fragpaths[@]}"; echo
	printf '%q ' "${mk[@]}" olddefconfig; echo
	printf '%q ' "${mk[@]}" bzImage modules; echo
	exit 0
fi

# cache_hit: the kernel is installed already: link and print it, exit
# (--each-patch: go on to the patches, building no kernel).
have=0
cache_hit() {
	[[ -f "$out/bzImage" && -z "$cfgdir" ]] || return 0
	((prep)) && exit 0
	((have)) || log "kernel $variant: cache hit ($out)"
	ln -sfn "$(basename "$out")" "$RIG_KERNELS/$variant"
	have=1
	((each)) && return 0
	printf '%s\n' "$out"
	exit 0
}
# each_patch: every commit of the variant's branch from base, checked
# out in turn, builds the objects of the C files it touches (in the
# variant's O= folder and config, -Werror); then the branch again.
each_patch() {
	local c n=0 subj objs
	while read -r c; do
		n=$((n + 1))
		subj=$(git -C "$src" log -1 --format=%s "$c")
		mapfile -t objs < <(git -C "$src" diff --name-only --diff-filter=AM "$c~1" "$c" -- '*.c' |
			grep -v '^tools/' | sed 's/\.c$/.o/')
		if ((${#objs[@]} == 0)); then
			log "patch $n ($subj): no C file to build"
			continue
		fi
		git -C "$src" checkout -q "$c"
		step "$logs/each-patch-$n.log" "patch $n ($subj) builds on its own: ${objs[*]}" \
			"${mk[@]}" -C "$src" KCFLAGS=-Werror "${objs[@]}" || {
			git -C "$src" checkout -q "$ref"
			die "$E_BUILD" "patch $n ($subj) does not build on its own" "$logs/each-patch-$n.log"
		}
	done < <(git -C "$src" rev-list --reverse "base..$ref")
	git -C "$src" checkout -q "$ref"
	((n > 0)) || die "$E_BUILD" "no patches between base and $ref"
	log "each of the $n patches of $ref builds on its own"
}
cache_hit

command -v ccache >/dev/null || die "$E_PKG" "ccache missing: run qemu-net/install-deps.sh"
# Depend mode: a miss runs the compiler once and takes the hash from its
# own -MD output, where the default mode runs the preprocessor first:
# +43 % on a cold build, +2 % in depend mode (the ccache-cold study,
# docs/results/ccache-cold/).  A cold make check misses on every object.
export CCACHE_DIR=$RIG_CACHE/ccache CCACHE_MAXSIZE=8G CCACHE_DEPEND=1
src=$(tree_ensure)
# One tree serves every variant, so builds of it are serialised.
exec 9>"$RIG_CACHE/src/.lock-$RIG_TREE"
flock 9
# (again: whoever held the lock may have built this very kernel, as
# make check's background prebuilds do)
cache_hit
tree_checkout "$src" "$ref" "$sdir"
((prep)) && exit 0
logs=$RIG_CACHE/logs/$RIG_TREE
mkdir -p "$logs"
if [[ -n "$cfgdir" ]]; then
	mkdir -p "$cfgdir"
	bdir=$(realpath "$cfgdir")
	mk=(make -j"$RIG_JOBS" O="$bdir")
fi
mkdir -p "$bdir"

configure() {
	cd "$src" || return
	# (step runs this with errexit on; the explicit returns stay for
	# whoever calls it from a condition)
	"${mk[@]}" "$base" || return
	scripts/kconfig/merge_config.sh -m -O "$bdir" "$bdir/.config" \
		kernel/configs/kvm_guest.config "${fragpaths[@]}" || return
	"${mk[@]}" olddefconfig || return
	# kunit.py validate_config: every requested option must survive.
	local bad=0 line sym text
	text=$(cat "${fragpaths[@]}") || return
	while read -r line; do
		if [[ "$line" =~ ^(CONFIG_[A-Za-z0-9_]+)=(.*)$ ]]; then
			grep -qxF "$line" "$bdir/.config" || {
				echo "config: $line requested, but .config has: $(grep -E "^(# )?${BASH_REMATCH[1]}[= ]" "$bdir/.config" || echo nothing)"
				bad=1
			}
		elif [[ "$line" =~ ^#\ (CONFIG_[A-Za-z0-9_]+)\ is\ not\ set$ ]]; then
			sym=${BASH_REMATCH[1]}
			if grep -qE "^$sym=" "$bdir/.config"; then
				echo "config: $sym requested off, but .config has it on"
				bad=1
			fi
		fi
	done <<<"$text"
	return "$bad"
}
step "$logs/config-$variant.log" "configure $variant kernel ($base + kvm_guest + ${frags[*]})" configure ||
	die "$E_BUILD" "kernel config for $variant is not what configs/ asks for" "$logs/config-$variant.log"
if [[ -n "$cfgdir" ]]; then
	printf '%s\n' "$bdir/.config"
	exit 0
fi
if ((have)); then
	each_patch
	printf '%s\n' "$out"
	exit 0
fi

step "$logs/build-$variant.log" "build $variant kernel (make -j$RIG_JOBS bzImage modules)" \
	"${mk[@]}" -C "$src" bzImage modules ||
	die "$E_BUILD" "kernel build failed for $variant" "$logs/build-$variant.log"

tmp=$out.tmp
rm -rf "$tmp"
mkdir -p "$tmp"
step "$logs/install-$variant.log" "install $variant modules" \
	"${mk[@]}" -C "$src" modules_install INSTALL_MOD_PATH="$tmp/modroot" INSTALL_MOD_STRIP=1 ||
	die "$E_BUILD" "modules_install failed for $variant" "$logs/install-$variant.log"
cp "$bdir/arch/x86/boot/bzImage" "$bdir/.config" "$bdir/System.map" "$tmp/"
cp "$logs/build-$variant.log" "$tmp/build.log"
{
	echo "variant=$variant"
	echo "key=$key"
	echo "ref=$ref $(git -C "$src" rev-parse HEAD)"
	echo "series=${sdir:-none}"
	echo "build_dir=$bdir"
	echo "src=$src"
	echo "release=$(cat "$bdir/include/config/kernel.release")"
} >"$tmp/info"
rm -rf "$out"
mv "$tmp" "$out"
ln -sfn "$(basename "$out")" "$RIG_KERNELS/$variant"
((each == 0)) || each_patch
printf '%s\n' "$out"
