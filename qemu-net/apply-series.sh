#!/bin/bash
# Apply the series (patches/series, or $RIG_PATCHES/series) to a fresh
# throw-away worktree of the cached tree at tag base, and leave it there.
# Options: usage().
set -euo pipefail
# shellcheck source=qemu-net/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=qemu-net/tree.sh
. "$RIG_TOP/qemu-net/tree.sh"

usage() {
	cat <<-'EOF'
		Usage: qemu-net/apply-series.sh WORKTREE_DIR
		Apply the series (RIG_PATCHES/series; default patches/series) with
		git am to a new worktree WORKTREE_DIR (must not exist) of the cached
		kernel tree at tag base, and leave it there.
		  -h, --help   this text
		Exit: 0 applied, 2 bad usage, 5 a patch does not apply (named, with
		git's reject).
	EOF
}

operands WORKTREE_DIR 1 1 "$@"
wt=${RIG_OPERANDS[0]}
[[ -e "$wt" ]] && usage_error "$wt exists"
src=$(tree_ensure)
git -C "$src" worktree prune
git -C "$src" worktree add -q --detach "$wt" base
series_apply "$wt"
