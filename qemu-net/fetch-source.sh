#!/bin/bash
# Fetch a kernel tree's Debian source package that Debian 12 does not
# carry (linux-source-7.2: Debian's unstable suite) into the rig's cache,
# without touching the host's apt setup: apt-get reads a private sources
# list, keeps its lists and package cache under RIG_CACHE, installs
# nothing and upgrades nothing.  Prints the tarball's path.  Options:
# usage().
set -euo pipefail
# shellcheck source=qemu-net/lib.sh
. "$(dirname "$0")/lib.sh"

usage() {
	cat <<-EOF
		Usage: qemu-net/fetch-source.sh [--check] [TREE]
		Download linux-source-TREE at its pinned version ($RIG_TREE_PINS)
		from Debian's unstable suite into \$RIG_CACHE/debian/ (apt-get
		download through a private sources list; the host's apt
		configuration and packages are not changed) and print the path of
		its tarball.  A cached tarball is printed at once.  Without TREE:
		every pinned tree (make deps).
		  --check     also say whether Debian has a newer version than the pin
		  -h, --help  this text
		Exit: 0 ok, 2 bad usage, 3 the package cannot be fetched.
	EOF
}

check=0 tree=''
while (($#)); do
	case "$1" in
	--check) check=1 ;;
	-h | --help) usage; exit 0 ;;
	-*) usage_error "unknown option '$1'" ;;
	*) [[ -z "$tree" ]] || usage_error "one TREE only: '$1'"; tree=$1 ;;
	esac
	shift
done
if [[ -z "$tree" ]]; then
	opts=()
	((check == 0)) || opts=(--check)
	for p in $RIG_TREE_PINS; do
		"$0" "${opts[@]}" "${p%%=*}"
	done
	exit 0
fi
pin=$(tree_pin "$tree") || usage_error "tree '$tree' has no pinned Debian version (pins: $RIG_TREE_PINS)"

pkg=linux-source-$tree
dir=$RIG_CACHE/debian
tarball=$dir/$pkg-$pin/usr/src/$pkg.tar.xz
# The host's own Debian mirror (deb822 or one-line form), suite sid.
mirror() {
	local u
	u=$(sed -n 's/^URIs:[[:space:]]*\([^[:space:]]*\).*/\1/p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | grep -v security | head -n 1) || true
	[[ -n "$u" ]] || u=$(awk '$1 == "deb" && $2 !~ /security/ {print $2; exit}' /etc/apt/sources.list 2>/dev/null) || true
	printf '%s\n' "${u:-http://deb.debian.org/debian}"
}
apt_private=(-o "Dir::Etc::SourceList=$dir/sources.list" -o Dir::Etc::SourceParts=/nonexistent
	-o "Dir::State::Lists=$dir/lists" -o "Dir::Cache=$dir/apt-cache" -o APT::Get::List-Cleanup=0)
lists_update() {
	mkdir -p "$dir/lists/partial" "$dir/apt-cache/archives/partial"
	printf 'deb %s sid main\n' "$(mirror)" >"$dir/sources.list"
	step "$dir/apt-update.log" "apt-get update (private list: Debian unstable, for $pkg)" \
		apt-get -q "${apt_private[@]}" update ||
		die "$E_PKG" "apt-get update of Debian's unstable suite failed (is the Debian mirror reachable?)" "$dir/apt-update.log"
}

updated=0
if [[ ! -f "$tarball" ]]; then
	lists_update
	updated=1
	tmp=$dir/$pkg-$pin.tmp
	rm -rf "$tmp"
	mkdir -p "$tmp"
	(cd "$tmp" && apt-get -q "${apt_private[@]}" download "$pkg=$pin") >"$dir/apt-download.log" 2>&1 ||
		die "$E_PKG" "apt-get download $pkg=$pin failed (the pin may have left Debian's unstable suite: see its candidate: apt-cache policy with the options in this script)" "$dir/apt-download.log"
	step "$dir/unpack.log" "unpack $pkg $pin (dpkg-deb -x, nothing installed)" \
		dpkg-deb -x "$tmp/${pkg}_${pin}_all.deb" "$tmp/root" ||
		die "$E_PKG" "dpkg-deb -x of $pkg failed" "$dir/unpack.log"
	rm -rf "$dir/$pkg-$pin"
	mv "$tmp/root" "$dir/$pkg-$pin"
	rm -rf "$tmp"
	check=1
fi
if ((check)); then
	((updated)) || lists_update
	cand=$(apt-cache "${apt_private[@]}" policy "$pkg" 2>/dev/null | sed -n 's/^ *Candidate: *//p')
	if [[ -n "$cand" && "$cand" != "(none)" ]] && dpkg --compare-versions "$cand" gt "$pin"; then
		log "note: Debian's unstable suite has $pkg $cand; the rig is pinned to $pin, the version it was tested with (RIG_TREE_PINS in qemu-net/lib.sh)"
	fi
fi
[[ -f "$tarball" ]] || die "$E_PKG" "$pkg $pin unpacked, but $tarball is not in it"
printf '%s\n' "$tarball"
