# shellcheck shell=bash
# Group "series": the patch series against Debian's tree: the rig's
# stack (patches/series; on 6.1 and 6.12 patches/stable/TREE/series)
# applies and is checkpatch-clean (each patch building on its own is the
# build group's build-each-patch), each posting in
# it (a folder with a cover letter and a series of its own) applies
# alone to the pristine tree, and on the primary tree make postings
# writes them from a given identity.
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

# t_postings: make postings with a throwaway identity writes every
# posting From and Signed-off-by that identity, with the placeholder
# gone, a base line, a To: from get_maintainer.pl and checkpatch clean;
# with no identity it refuses (exit 2) saying how to set one.
t_postings() {
	local d=$CHECK_DIR/postings rc=0 f bad=() n=0
	mkdir -p "$d"
	printf '[user]\n\tname = Rig Test\n\temail = rig-test@example.org\n' >"$d/gitconfig"
	GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 "$RIG_TOP/net-tests/postings.sh" --out "$d/none" \
		>"$d/none.log" 2>&1 || rc=$?
	if ((rc != E_USAGE)) || ! grep -q 'no git identity' "$d/none.log"; then
		reason "without an identity: exit $rc, not $E_USAGE with 'no git identity'"
		return 1
	fi
	GIT_CONFIG_GLOBAL=$d/gitconfig GIT_CONFIG_NOSYSTEM=1 "$RIG_TOP/net-tests/postings.sh" --out "$d/out" >&2 ||
		{ reason "postings.sh failed (see log)"; return 1; }
	for f in "$d"/out/*/0*.patch; do
		n=$((n + 1))
		grep -qx 'From: Rig Test <rig-test@example.org>' "$f" || bad+=("$(basename "$f"): From")
		grep -q '^To: .*@' "$f" || bad+=("$(basename "$f"): To")
		! grep -q 'dev@skb-tailroom.invalid' "$f" || bad+=("$(basename "$f"): placeholder left")
		case "$f" in
		*/0000-cover-letter.patch) grep -q '^Base: Linux 7\.2\.13 ' "$f" || bad+=("$(basename "$f"): Base") ;;
		*) grep -qx 'Signed-off-by: Rig Test <rig-test@example.org>' "$f" || bad+=("$(basename "$f"): Signed-off-by") ;;
		esac
	done
	for f in "$d"/out/*.checkpatch.log; do
		grep -q '^checkpatch --strict: clean' "$f" || bad+=("$(basename "$f")")
	done
	((n >= 3 && ${#bad[@]} == 0)) || { reason "$n patches written; wrong: ${bad[*]:-none}"; return 1; }
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
	[[ "$RIG_TREE" != "${RIG_TREES%% *}" ]] || check postings-from-identity t_postings
}
