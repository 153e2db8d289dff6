# shellcheck shell=bash
# The kernel tree in the cache: Debian's linux-source-$RIG_TREE tarball, made a
# git tree (tag "base"), with branch "patched" = base + patches/series.
# Sourced after lib.sh.

tarball_key() {
	# The default tarball of a tree is a Debian package: install it on
	# first use (make deps installs the 6.1 one only).
	if [[ ! -f "$RIG_TARBALL" && -z "$RIG_TARBALL_GIVEN" ]]; then
		"$RIG_TOP/qemu-net/install-deps.sh" "linux-source-$RIG_TREE" >&2 ||
			die "$E_PKG" "cannot install linux-source-$RIG_TREE (see above)"
	fi
	[[ -f "$RIG_TARBALL" ]] ||
		die "$E_PKG" "$RIG_TARBALL not found (tree $RIG_TREE: is linux-source-$RIG_TREE installed? run qemu-net/install-deps.sh linux-source-$RIG_TREE)"
	sha <"$RIG_TARBALL"
}

# Series, in order, as file paths.
series_files() {
	local p
	[[ -f "$RIG_PATCHES/series" ]] || return 0
	while read -r p; do
		case "$p" in "" | \#*) continue ;; esac
		[[ -f "$RIG_PATCHES/$p" ]] ||
			die "$E_PATCH" "$RIG_PATCHES/series names $p, which does not exist"
		printf '%s\n' "$RIG_PATCHES/$p"
	done <"$RIG_PATCHES/series"
}

# Only the diffs count: a commit-message edit must not rebuild the kernel.
# (The list is read first: series_files dying inside "< <(...)" would only
# end the list early, and a partial series would pass for the whole.)
series_key() {
	local f list
	list=$(series_files) || die "$E_PATCH" "cannot read the series (see above)"
	{
		echo series-v2
		while read -r f; do
			[[ -z "$f" ]] || sed -n '/^diff --git /,$p' "$f"
		done <<<"$list"
	} | sha
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

# series_apply DIR: git am the series onto DIR's HEAD, one patch at a
# time; on failure name the patch and show git's reject (exit E_PATCH).
series_apply() {
	local dir=$1 logf=$RIG_CACHE/logs/git-am-$RIG_TREE.log f n=0 list
	list=$(series_files) || die "$E_PATCH" "cannot read the series (see above)"
	mkdir -p "$(dirname "$logf")"
	: >"$logf"
	while read -r f; do
		[[ -n "$f" ]] || continue
		n=$((n + 1))
		echo "== git am $(basename "$f")" >>"$logf"
		if ! git -C "$dir" am -q "$f" >>"$logf" 2>&1; then
			git -C "$dir" am --abort >/dev/null 2>&1 || true
			die "$E_PATCH" "patch $n ($(basename "$f")) does not apply to $(git -C "$dir" log -1 --format=%s HEAD)" "$logf"
		fi
	done <<<"$list"
	log "series applied: $n patches"
}

# tree_checkout DIR REF: REF is "base" or "patched" (base + series,
# re-applied with git am when the series changed).  Only files that
# differ are rewritten, so O= builds stay incremental.
tree_checkout() {
	local dir=$1 ref=$2 key cur
	if [[ "$ref" == base ]]; then
		git -C "$dir" checkout -q -f base
		return
	fi
	key=$(series_key)
	cur=$(git -C "$dir" config --get rig.serieskey || true)
	if [[ "$cur" == "$key" ]] && git -C "$dir" rev-parse -q --verify patched >/dev/null; then
		git -C "$dir" checkout -q -f patched
		return
	fi
	git -C "$dir" am --abort >/dev/null 2>&1 || true
	git -C "$dir" config --unset rig.serieskey || true
	git -C "$dir" checkout -q -f -B patched base
	series_apply "$dir"
	git -C "$dir" config rig.serieskey "$key"
}

# worktree_remove DIR: unregister and delete a worktree of the cached tree
# (apply-series.sh makes them); nothing if DIR is not a worktree.
worktree_remove() {
	local common
	[[ -e "$1/.git" ]] || return 0
	common=$(git -C "$1" rev-parse --path-format=absolute --git-common-dir) || return
	git --git-dir="$common" worktree remove --force "$1"
}
