# shellcheck shell=bash
# Group "series": the patch series against Debian's tree: the rig's
# stack (patches/series) applies and is checkpatch-clean, and each
# posting in it (patches/ipsec, patches/ipsec-next: a cover letter and
# a series of their own) applies alone to the pristine tree.
#
# Deliberate breakages seen to fail:
#  - checkpatch.pl exiting 2 with no output, read with the old "|| true":
#    passed; static-series-checkpatch-verdict (a fake checkpatch.pl in a
#    fake worktree) failed "broken=0".  The group itself was not run here
#    (the cached kernel tree was in use by a build).
[[ -z "${RIG_T_SERIES_SH:-}" ]] || return 0
RIG_T_SERIES_SH=1
# shellcheck source=net-tests/lib/tap.sh
. "$RIG_TOP/net-tests/lib/tap.sh"
# shellcheck source=qemu-net/tree.sh
. "$RIG_TOP/qemu-net/tree.sh"

# t_series_applies WT: the series applies with git am to a fresh worktree
# WT of the cached tree at tag base.
t_series_applies() {
	[[ -s "$RIG_PATCHES/series" ]] || { reason "patches/series is empty"; return 4; }
	"$RIG_TOP/qemu-net/apply-series.sh" "$1" >&2 || {
		reason "git am failed (see log)"
		return 1
	}
}

# t_series_checkpatch WT: checkpatch.pl --strict from WT, on every patch.
# UNKNOWN_COMMIT_ID is ignored: the tree is Debian's tarball imported into
# git with no upstream history, so checkpatch cannot resolve the commit
# ids that Fixes: tags and messages quote and warns on each of them (seen
# on v4's three).  docs/patches.md says where each id was checked.
t_series_checkpatch() {
	local wt=$1 list f bad=0 out rc
	# (not "done < <(series_files)": its failure would end the list early)
	list=$(series_files)
	[[ -n "$list" ]] || { reason "no patches in the series"; return 4; }
	while read -r f; do
		# Debian's python3 first: its SPDX check needs python3-ply.
		rc=0
		out=$(cd "$wt" && PATH=/usr/bin:$PATH scripts/checkpatch.pl --strict --no-tree -q --ignore UNKNOWN_COMMIT_ID "$f" 2>&1) || rc=$?
		if ((rc != 0)) || [[ -n "$out" ]]; then
			printf '%s (checkpatch.pl exit %d):\n%s\n' "$(basename "$f")" "$rc" "${out:-(no output)}" >&2
			bad=$((bad + 1))
		fi
	done <<<"$list"
	((bad == 0)) || { reason "$bad patches with checkpatch --strict findings"; return 1; }
}

# t_posting_applies DIR WT: one posting of the stack (a series directory
# with a cover letter) applies alone to a fresh worktree WT at tag base,
# as it would to the maintainer's tree.
t_posting_applies() {
	RIG_PATCHES=$1 "$RIG_TOP/qemu-net/apply-series.sh" "$2" >&2 || {
		reason "git am of $(basename "$1")/series alone failed (see log)"
		return 1
	}
}

group_series() {
	local wt=$CHECK_DIR/series-wt
	# In the group's scope, before the worktree exists: removed when the
	# group ends, also if git am fails half-way.
	defer worktree_remove "$wt"
	if check_ok series-applies t_series_applies "$wt"; then
		check series-checkpatch-strict t_series_checkpatch "$wt"
	else
		result series-checkpatch-strict 4 "series did not apply"
	fi
	local d name
	for d in "$RIG_PATCHES"/*/; do
		[[ -f "$d/0000-cover-letter.patch" && -f "$d/series" ]] || continue
		name=$(basename "$d")
		defer worktree_remove "$CHECK_DIR/series-wt-$name"
		check "series-$name-applies-alone" t_posting_applies "${d%/}" "$CHECK_DIR/series-wt-$name"
	done
}
