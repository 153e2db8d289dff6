# shellcheck shell=bash
# Group "series": the patch series against Debian's tree.
# shellcheck source=qemu-net/tree.sh
. "$RIG_TOP/qemu-net/tree.sh"

SERIES_WT=

t_series_applies() {
	[[ -s "$RIG_PATCHES/series" ]] || { reason "patches/series is empty"; return 4; }
	SERIES_WT=$CHECK_DIR/series-wt
	"$RIG_TOP/qemu-net/apply-series.sh" "$SERIES_WT" >&2 || {
		reason "git am failed (see log)"
		return 1
	}
	defer "git -C '$(tree_ensure)' worktree remove --force '$SERIES_WT'"
}

t_series_checkpatch() {
	[[ -n "$SERIES_WT" ]] || { reason "series did not apply"; return 4; }
	local f bad=0 out
	while read -r f; do
		# Debian's python3 first: its SPDX check needs python3-ply.
		out=$(cd "$SERIES_WT" && PATH=/usr/bin:$PATH scripts/checkpatch.pl --strict --no-tree -q "$f" 2>&1) || true
		if [[ -n "$out" ]]; then
			printf '%s:\n%s\n' "$(basename "$f")" "$out" >&2
			bad=$((bad + 1))
		fi
	done < <(series_files)
	((bad == 0)) || { reason "$bad patches with checkpatch --strict findings"; return 1; }
}

group_series() {
	check series-applies t_series_applies
	check series-checkpatch-strict t_series_checkpatch
}
