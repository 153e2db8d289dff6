#!/bin/bash
# Apply the series (patches/series, or $RIG_PATCHES/series) to a fresh
# throw-away worktree of the cached tree at tag base, and leave it there.
# Usage: apply-series.sh WORKTREE_DIR    (the directory must not exist)
# Exit 5 naming the patch that does not apply, with git's reject.
set -euo pipefail
# shellcheck source=qemu-net/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=qemu-net/tree.sh
. "$RIG_TOP/qemu-net/tree.sh"

wt=${1:?usage: apply-series.sh WORKTREE_DIR}
[[ -e "$wt" ]] && die "$E_USAGE" "$wt exists"
src=$(tree_ensure)
git -C "$src" worktree prune
git -C "$src" worktree add -q --detach "$wt" base
series_apply "$wt"
