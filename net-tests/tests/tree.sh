# shellcheck shell=bash
# Group "tree": the stable backports on Debian's own trees, each a
# nested run of this runner with --tree, whose results are recorded here
# as "TREE/NAME" (its own log folder: tree-TREE/ under this run's).
# make check: 6.1, groups series, build and kernel (the backports apply,
# build, and pass the kselftest, KUnit and the zeroing test).  make
# check-full (RIG_CHECK_FULL=1): 6.1 and 6.12, with pair and integrity
# too.  The trees: CHECK_TREES, set by run-tests.sh.
#
# Deliberate breakages seen to fail:
#  - tree_nested_records returning 0 with no records file and with an
#    empty one (a nested run that died early would have passed):
#    static-tree-nested-records failed "none=0/ empty=0/".
[[ -z "${RIG_T_TREE_SH:-}" ]] || return 0
RIG_T_TREE_SH=1
# shellcheck source=net-tests/lib/tap.sh
. "$RIG_TOP/net-tests/lib/tap.sh"

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
	local other dir rc groups=(-t series -t build -t kernel)
	((RIG_CHECK_FULL)) && groups+=(-t pair -t integrity)
	[[ -n "${CHECK_TREES// /}" ]] || { result tree-other 1 "no other tree than $RIG_TREE in: $RIG_TREES"; return; }
	for other in $CHECK_TREES; do
		dir=$CHECK_DIR/tree-$other
		mkdir -p "$dir"
		echo "nested run on tree $other: $dir" >&2
		# (the nested run's budget: what is left of this run's)
		rc=0
		RIG_RESULTS=$dir "$RIG_TOP/net-tests/run-tests.sh" --tree "$other" \
			--budget "$((CHECK_DEADLINE - $(date +%s)))" "${groups[@]}" >"$dir/tap.out" || rc=$?
		tree_nested_records "$dir" "$other" ||
			result "tree-$other" 1 "nested run exited $rc without results (see $dir)"
	done
}
