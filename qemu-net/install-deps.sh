#!/bin/bash
# Install the Debian packages the rig needs (idempotent).  Options: usage().
set -euo pipefail
# shellcheck source=qemu-net/lib.sh
. "$(dirname "$0")/lib.sh"

usage() {
	cat <<-'EOF'
		Usage: qemu-net/install-deps.sh [PACKAGE...]
		Install Debian packages with apt-get, those not installed yet
		(default: the rig's list, qemu-net/packages.txt; make deps).
		  -h, --help   this text
		Exit: 0 ok, 2 bad usage, 3 a package is unknown or does not install.
	EOF
}

operands PACKAGE 0 1000 "$@"
pkgs=("${RIG_OPERANDS[@]}")
if ((${#pkgs[@]} == 0)); then
	list=$(awk '!/^#/ && NF {print $1}' "$RIG_TOP/qemu-net/packages.txt") ||
		die "$E_PKG" "cannot read $RIG_TOP/qemu-net/packages.txt"
	[[ -n "$list" ]] || die "$E_PKG" "no packages in $RIG_TOP/qemu-net/packages.txt"
	mapfile -t pkgs <<<"$list"
fi

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing+=("$p")
done
((${#missing[@]} == 0)) && exit 0

sudo=()
((EUID == 0)) || sudo=(sudo)
logf=$RIG_CACHE/logs/apt.log
mkdir -p "$(dirname "$logf")"
log "installing: ${missing[*]}"
# Unknown names are reported by apt-cache before anything is installed.
for p in "${missing[@]}"; do
	apt-cache show "$p" >/dev/null 2>&1 || {
		"${sudo[@]}" apt-get update -q >"$logf" 2>&1 || true
		apt-cache show "$p" >/dev/null 2>&1 ||
			die "$E_PKG" "Debian package '$p' is unknown to apt (apt-get update done; check the name)" "$logf"
	}
done
step "$logf" "apt-get install ${#missing[@]} packages" \
	env DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -q \
	--no-install-recommends "${missing[@]}" ||
	die "$E_PKG" "apt-get install failed for: ${missing[*]}" "$logf"
