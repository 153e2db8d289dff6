# shellcheck shell=bash
# Group "tree": the functional groups (series, build, pair, kernel,
# integrity) on the second tree, Debian's linux-source-6.12, run as a
# nested run of this runner with --tree; each of its results is recorded
# here as "6.12/NAME" (its own log folder: tree-6.12/ under this run's).
# On by default since the trimmed guest config (two more kernel builds:
# cold on this 2-core machine 42 min with the tests, docs/history.md);
# RIG_CHECK_TREE=0 make check leaves it out, -t tree runs it alone
# (to run every group on 6.12 instead: make check CHECK_ARGS="--tree 6.12")
#
# Deliberate breakages seen to fail:
#  - tree_nested_records returning 0 with no records file and with an
#    empty one (a nested run that died early would have passed):
#    static-tree-nested-records failed "none=0/ empty=0/".
[[ -z "${RIG_T_TREE_SH:-}" ]] || return 0
RIG_T_TREE_SH=1
# shellcheck source=net-tests/lib/tap.sh
. "$RIG_TOP/net-tests/lib/tap.sh"

# (the tree the group runs on: tree_other, qemu-net/lib.sh)
# tree_nested_records DIR TREE: copy the nested run's records (its one
# check-*/records.tsv under DIR) into ours, names prefixed "TREE/";
# fails when there are none.
tree_nested_records() {
	local dir=$1 tree=$2 recs n=0 st name why
	recs=("$dir"/check-*/records.tsv)
	[[ ${#recs[@]} == 1 && -f "${recs[0]}" ]] || return 1
	while IFS=$'\t' read -r st name why; do
		printf '%s\t%s/%s\t%s\n' "$st" "$tree" "$name" "$why" >>"$TAP_RECORDS"
		n=$((n + 1))
	done <"${recs[0]}"
	((n > 0))
}

group_tree() {
	local other dir rc=0
	if [[ "$RIG_CHECK_TREE" != 1 && "$CHECK_EXPLICIT" != *" tree "* ]]; then
		result tree-other 4 "left out: RIG_CHECK_TREE=0 (two more kernel builds)"
		return
	fi
	other=$(tree_other) || { result tree-other 1 "no other tree than $RIG_TREE in: $RIG_TREES"; return; }
	dir=$CHECK_DIR/tree-$other
	mkdir -p "$dir"
	echo "nested run on tree $other: $dir" >&2
	# (the nested run's budget: what is left of this run's)
	RIG_RESULTS=$dir "$RIG_TOP/net-tests/run-tests.sh" --tree "$other" \
		--budget "$((CHECK_DEADLINE - $(date +%s)))" \
		-t series -t build -t pair -t kernel -t integrity >"$dir/tap.out" || rc=$?
	tree_nested_records "$dir" "$other" ||
		result "tree-$other" 1 "nested run exited $rc without results (see $dir)"
}
