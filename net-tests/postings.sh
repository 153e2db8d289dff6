#!/bin/bash
# make postings: each posting of patches/ (a folder with a cover letter
# and a series file) made ready to send from the user's own identity:
# applied with git am to the cached 7.2.13 tree, authored and signed off
# by `git config user.name` / `user.email`, formatted again with git
# format-patch (cover letter, To/Cc from the tree's get_maintainer.pl,
# the base named), and checked with the tree's checkpatch.pl --strict.
# Nothing is sent: it prints the command that would.  Options: usage().
set -euo pipefail
# shellcheck source=qemu-net/lib.sh
. "$(dirname "$0")/../qemu-net/lib.sh"
# shellcheck source=qemu-net/tree.sh
. "$RIG_TOP/qemu-net/tree.sh"

# The committed patches' placeholder identity, replaced by the user's.
PLACEHOLDER="skb-tailroom developers <dev@skb-tailroom.invalid>"
# Where each posting goes upstream: folder|tree|branch.
UPSTREAM="
ipsec|git://git.kernel.org/pub/scm/linux/kernel/git/klassert/ipsec.git|master
ipsec-next|git://git.kernel.org/pub/scm/linux/kernel/git/klassert/ipsec-next.git|master
tailroom|git://git.kernel.org/pub/scm/linux/kernel/git/netdev/net-next.git|main
"

usage() {
	cat <<-'EOF'
		Usage: net-tests/postings.sh [--out DIR] [POSTING...]
		Write each posting (default: every folder of patches/ with a cover
		letter: ipsec, ipsec-next, tailroom) into DIR/POSTING/, ready for
		git send-email, from your git identity (git config user.name and
		user.email; refused when unset).  Sends nothing; prints the command
		that would.  The base is Debian's linux-source-7.2 (7.2.13); each
		cover letter says how to rebase onto the upstream tree.
		  --out DIR    output folder (default: results/postings-<time>); a
		               POSTING folder already in it is replaced
		  -h, --help   this text
		Exit: 0 ok, 1 checkpatch found something, 2 bad usage or no git
		identity, 3 package missing, 5 a patch does not apply.
		Example:
		  make postings POSTINGS_OUT=/tmp/out
	EOF
}

out='' names=()
while (($#)); do
	case "$1" in
	--out) opt_value "$@"; out=$2; shift ;;
	-h | --help) usage; exit 0 ;;
	-*) usage_error "unknown option '$1'" ;;
	*) names+=("$1") ;;
	esac
	shift
done
# (the postings are the primary tree's)
rig_tree_set "${RIG_TREES%% *}"
RIG_PATCHES=$RIG_TOP/patches
if ((${#names[@]} == 0)); then
	for d in "$RIG_PATCHES"/*/; do
		[[ -f "$d/0000-cover-letter.patch" ]] && names+=("$(basename "$d")")
	done
fi
for n in "${names[@]}"; do
	[[ -f "$RIG_PATCHES/$n/0000-cover-letter.patch" && -f "$RIG_PATCHES/$n/series" ]] ||
		usage_error "no posting '$n' (a folder of patches/ with 0000-cover-letter.patch and series)"
	grep -q "^$n|" <<<"$UPSTREAM" || usage_error "posting '$n' has no upstream tree in UPSTREAM"
done
name=$(git -C "$RIG_TOP" config user.name || true)
email=$(git -C "$RIG_TOP" config user.email || true)
[[ -n "$name" && -n "$email" ]] ||
	die "$E_USAGE" "no git identity: the patches are sent From and Signed-off-by you; set it with  git config --global user.name 'Your Name'; git config --global user.email you@example.org"
me="$name <$email>"
[[ "$me" != "$PLACEHOLDER" ]] || die "$E_USAGE" "git identity is the placeholder '$me'; set your own (git config user.name/user.email)"
out=${out:-$RIG_RESULTS/postings-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out"
out=$(realpath "$out")

src=$(tree_ensure)
release=$(make -s -C "$src" kernelversion)
deb="linux-source-${RIG_TREE} $(tree_pin "$RIG_TREE")"
wt=$(mktemp -d -t rig-postings.XXXXXX)
rmdir "$wt"
defer worktree_remove "$wt"
git -C "$src" worktree prune
git -C "$src" worktree add -q --detach "$wt" base
git -C "$wt" config user.name "$name"
git -C "$wt" config user.email "$email"

# as_user FILE: the patch with the placeholder identity replaced.
as_user() { sed "s|$PLACEHOLDER|$me|g" "$1"; }

bad=0
for n in "${names[@]}"; do
	IFS='|' read -r _ utree ubranch < <(grep "^$n|" <<<"$UPSTREAM")
	cover=$RIG_PATCHES/$n/0000-cover-letter.patch
	subj=$(sed -n 's/^Subject: \[\([^]]*\) 0\/[0-9]*\] \(.*\)/\1|\2/p' "$cover")
	[[ -n "$subj" ]] || die "$E_PATCH" "$cover has no 'Subject: [PREFIX 0/N] ...' line"
	prefix=${subj%%|*}
	git -C "$wt" checkout -q --detach base
	logf=$out/$n.git-am.log
	: >"$logf"
	while read -r f; do
		as_user "$f" | git -C "$wt" am -q --ignore-date >>"$logf" 2>&1 || {
			git -C "$wt" am --abort >/dev/null 2>&1 || true
			die "$E_PATCH" "posting $n: $(basename "$f") does not apply to $deb" "$logf"
		}
	done < <(series_files "$RIG_PATCHES/$n")
	n_patches=$(git -C "$wt" rev-list --count base..HEAD)
	# To: the maintainers of what the posting touches; Cc: its lists and
	# reviewers (the tree's own MAINTAINERS, no git history to mine).
	git -C "$wt" diff base HEAD >"$out/$n.diff"
	gm=(perl "$wt/scripts/get_maintainer.pl" --nogit --nogit-fallback --norolestats)
	mapfile -t to < <(cd "$wt" && "${gm[@]}" --m --nol --nor "$out/$n.diff")
	mapfile -t cc < <(cd "$wt" && "${gm[@]}" --nom --l --r "$out/$n.diff")
	rm -f "$out/$n.diff"
	((${#to[@]})) || die "$E_FAIL" "posting $n: get_maintainer.pl named no maintainer"
	args=()
	for a in "${to[@]}"; do args+=(--to "$a"); done
	for a in "${cc[@]}"; do args+=(--cc "$a"); done
	rm -rf "${out:?}/$n"
	git -C "$wt" format-patch -q --cover-letter --thread=shallow --subject-prefix="$prefix" \
		"${args[@]}" -o "$out/$n" base..HEAD
	# The cover letter: the committed one's subject and text, then the base.
	python3 - "$out/$n/0000-cover-letter.patch" "$cover" "$deb" "$release" "$utree" "$ubranch" <<-'PY'
		import re, sys
		new, old, deb, release, utree, ubranch = sys.argv[1:]
		o = open(old).read()
		subject = re.search(r'^Subject: \[[^]]*\] (.*(?:\n [^\n]*)*)', o, re.M).group(1).replace('\n ', ' ')
		body = o.split('\n\n', 1)[1]
		body = body[:body.index('\nskb-tailroom developers (')].rstrip('\n') + '\n'
		base = (f"\nBase: Linux {release} as Debian ships it ({deb}, from\n"
		        f"Debian's unstable suite; no upstream commit id, the tarball has no\n"
		        f"git history).  To apply to {utree.rsplit('/', 1)[1]} ({ubranch}):\n\n"
		        f"  git remote add up {utree}\n"
		        f"  git fetch up {ubranch} && git checkout -b review up/{ubranch}\n"
		        f"  git am -3 000[1-9]-*.patch\n")
		n = open(new).read()
		n = n.replace('*** SUBJECT HERE ***', subject).replace('*** BLURB HERE ***\n', body + base)
		open(new, 'w').write(n)
	PY
	# checkpatch --strict on what would be sent (the tree's own script;
	# no commit ids to resolve in a tree without history)
	cp=0
	: >"$out/$n.checkpatch.log"
	for f in "$out/$n"/0*.patch; do
		[[ "$(basename "$f")" != 0000-* ]] || continue
		(cd "$wt" && PATH=/usr/bin:$PATH scripts/checkpatch.pl --strict -q --no-tree \
			--ignore UNKNOWN_COMMIT_ID "$f") >>"$out/$n.checkpatch.log" 2>&1 || cp=1
	done
	if ((cp)); then
		bad=1
		log "posting $n: checkpatch --strict found something: $out/$n.checkpatch.log"
	else
		echo "checkpatch --strict: clean ($n_patches patches)" >>"$out/$n.checkpatch.log"
	fi
	log "posting $n: $n_patches patches + cover letter in $out/$n (To: ${#to[@]}, Cc: ${#cc[@]})"
done
echo "Nothing was sent.  To send, after reading them:"
for n in "${names[@]}"; do
	printf '  git send-email %q/0*.patch\n' "$out/$n"
done
((bad == 0)) || exit "$E_FAIL"
