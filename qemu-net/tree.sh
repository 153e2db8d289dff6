# shellcheck shell=bash
# The kernel tree in the cache: Debian's linux-source-$RIG_TREE tarball, made a
# git tree (tag "base"), with branch "patched" = base + the series
# (patches/series), and "baseline" = base + RIG_BASELINE_PATCHES if set.
# Sourced after lib.sh.

tarball_key() {
	# The default tarball of a tree is a Debian package: fetched into the
	# cache (a pinned tree from Debian's unstable suite) or installed
	# (make deps installs the 6.1 one only) on first use.
	if [[ ! -f "$RIG_TARBALL" && -z "$RIG_TARBALL_GIVEN" ]]; then
		if tree_pin "$RIG_TREE" >/dev/null; then
			"$RIG_TOP/qemu-net/fetch-source.sh" "$RIG_TREE" >/dev/null ||
				die "$E_PKG" "cannot fetch linux-source-$RIG_TREE (see above)"
		else
			"$RIG_TOP/qemu-net/install-deps.sh" "linux-source-$RIG_TREE" >&2 ||
				die "$E_PKG" "cannot install linux-source-$RIG_TREE (see above)"
		fi
	fi
	[[ -f "$RIG_TARBALL" ]] ||
		die "$E_PKG" "$RIG_TARBALL not found (tree $RIG_TREE: run qemu-net/fetch-source.sh $RIG_TREE or qemu-net/install-deps.sh linux-source-$RIG_TREE)"
	sha <"$RIG_TARBALL"
}

# A series is a directory with a "series" file naming its patches in
# order (quilt's layout); RIG_PATCHES (--series) is the patched side's,
# RIG_BASELINE_PATCHES (--baseline-series) the baseline's (empty: the
# pristine tree).  The functions below take the directory, default
# RIG_PATCHES.

# series_files [DIR]: the series, in order, as file paths.
series_files() {
	local d=${1:-$RIG_PATCHES} p
	[[ -d "$d" ]] || die "$E_PATCH" "series directory $d not found"
	d=$(realpath "$d")
	[[ -f "$d/series" ]] ||
		die "$E_PATCH" "$d has no series file (a series directory lists its patches, in order, in DIR/series)"
	while read -r p; do
		case "$p" in "" | \#*) continue ;; esac
		[[ -f "$d/$p" ]] ||
			die "$E_PATCH" "$d/series names $p, which does not exist"
		printf '%s\n' "$d/$p"
	done <"$d/series"
}

# series_key [DIR]: the series' cache key.  Only the diffs count: a
# commit-message edit must not rebuild the kernel.  (The list is read
# first: series_files dying inside "< <(...)" would only end the list
# early, and a partial series would pass for the whole.)
series_key() {
	local f list
	list=$(series_files "$@") || die "$E_PATCH" "cannot read the series (see above)"
	{
		echo series-v2
		while read -r f; do
			[[ -z "$f" ]] || sed -n '/^diff --git /,$p' "$f"
		done <<<"$list"
	} | sha
}

# series_config [DIR]: the config fragment a series needs on top of
# configs/guest.config: DIR/series.config if it has one, else
# configs/series.config for the rig's own series (patches/ or
# patches/stable/TREE, not a subset of it elsewhere), else none.
series_config() {
	local d=${1:-$RIG_PATCHES} t
	if [[ -f "$d/series.config" ]]; then
		printf '%s\n' "$d/series.config"
		return
	fi
	d=$(realpath -m "$d")
	for t in $RIG_TREES; do
		if [[ "$d" == "$RIG_TOP/patches" || "$d" == "$RIG_TOP/patches/stable/$t" ]]; then
			printf '%s\n' "$RIG_TOP/configs/series.config"
			return
		fi
	done
}

# tree_ensure: print the tree's path, extracting it on first use.
tree_ensure() {
	local key dir tmp
	key=$(tarball_key)
	dir=$RIG_CACHE/src/linux-$key
	if [[ ! -f "$dir/.rig-ready" ]]; then
		rm -rf "$dir" "$dir.tmp"
		tmp=$dir.tmp
		mkdir -p "$tmp"
		step "$RIG_CACHE/logs/extract-$RIG_TREE.log" \
			"extract $(basename "$RIG_TARBALL") and make a git tree" \
			tree_extract "$tmp" >&2 ||
			die "$E_BUILD" "could not extract $RIG_TARBALL" "$RIG_CACHE/logs/extract-$RIG_TREE.log"
		mv "$tmp/linux" "$dir"
		rm -rf "$tmp"
		touch "$dir/.rig-ready"
	fi
	printf '%s\n' "$dir"
}

tree_extract() {
	local tmp=$1
	tar -xJf "$RIG_TARBALL" -C "$tmp"
	mv "$tmp"/linux-source-* "$tmp/linux"
	cd "$tmp/linux" || return
	git init -q
	git config user.name "skb-tailroom rig"
	git config user.email "rig@skb-tailroom.invalid"
	git config gc.auto 0
	# Debian's top-level .gitignore ignores everything.
	git add -f -A .
	git commit -q -m "Debian $(basename "$RIG_TARBALL") $(make -s kernelversion)"
	git tag base
	echo "/.rig-ready" >>.git/info/exclude
}

# series_apply TREE [DIR]: git am the series DIR onto TREE's HEAD, one
# patch at a time; on failure name the patch and show git's reject (exit
# E_PATCH).
series_apply() {
	local dir=$1 sdir=${2:-$RIG_PATCHES} logf=$RIG_CACHE/logs/git-am-$RIG_TREE.log f n=0 list
	list=$(series_files "$sdir") || die "$E_PATCH" "cannot read the series (see above)"
	mkdir -p "$(dirname "$logf")"
	: >"$logf"
	while read -r f; do
		[[ -n "$f" ]] || continue
		n=$((n + 1))
		echo "== git am $f" >>"$logf"
		if ! git -C "$dir" am -q "$f" >>"$logf" 2>&1; then
			git -C "$dir" am --abort >/dev/null 2>&1 || true
			die "$E_PATCH" "patch $n ($(basename "$f")) of $(dirname "$f") does not apply to $(git -C "$dir" log -1 --format=%s HEAD)" "$logf"
		fi
	done <<<"$list"
	log "series applied: $n patches from $sdir"
}

# tree_checkout TREE REF [DIR]: REF is "base", or a branch (patched,
# baseline) made of base + the series DIR (default RIG_PATCHES),
# re-applied with git am when that series changed (its key is kept in
# the tree's git config).  Only files that differ are rewritten, so O=
# builds stay incremental.
tree_checkout() {
	local dir=$1 ref=$2 sdir=${3:-$RIG_PATCHES} key cur ckey
	if [[ "$ref" == base ]]; then
		git -C "$dir" checkout -q -f base
		return
	fi
	ckey=rig.serieskey
	[[ "$ref" == patched ]] || ckey=rig.serieskey-$ref
	key=$(series_key "$sdir")
	cur=$(git -C "$dir" config --get "$ckey" || true)
	if [[ "$cur" == "$key" ]] && git -C "$dir" rev-parse -q --verify "$ref" >/dev/null; then
		git -C "$dir" checkout -q -f "$ref"
		return
	fi
	git -C "$dir" am --abort >/dev/null 2>&1 || true
	git -C "$dir" config --unset "$ckey" || true
	git -C "$dir" checkout -q -f -B "$ref" base
	series_apply "$dir" "$sdir"
	git -C "$dir" config "$ckey" "$key"
}

# worktree_remove DIR: unregister and delete a worktree of the cached tree
# (apply-series.sh makes them); nothing if DIR is not a worktree.
worktree_remove() {
	local common
	[[ -e "$1/.git" ]] || return 0
	common=$(git -C "$1" rev-parse --path-format=absolute --git-common-dir) || return
	git --git-dir="$common" worktree remove --force "$1"
}
