#!/bin/bash
# Print KEY=VALUE structure offsets of an installed rig kernel (cached in
# KERNEL_DIR/offsets.env), from offsets.c compiled to assembly in that
# kernel's build directory.  Usage: gen-offsets.sh KERNEL_DIR
set -euo pipefail
# shellcheck source=qemu-net/lib.sh
. "$(dirname "$0")/../../qemu-net/lib.sh"
kdir=${1:?usage: gen-offsets.sh KERNEL_DIR}
# (a cached file without the newest key is made again)
if ! grep -q '^SKB_SHINFO_ALIGNED=' "$kdir/offsets.env" 2>/dev/null; then
	bdir=$(sed -n 's/^build_dir=//p' "$kdir/info")
	tmp=$(mktemp -d)
	defer rm -rf "$tmp"
	cp "$RIG_TOP/net-tests/offsets/offsets.c" "$RIG_TOP/net-tests/offsets/Kbuild" "$tmp/"
	make -s -C "$bdir" M="$tmp" offsets.s >"$tmp/log" 2>&1 ||
		die "$E_BUILD" "cannot compile offsets.c against $bdir" "$tmp/log"
	sed -n 's/^[[:space:]]*\.ascii "->\([A-Z_]*\) \$\{0,1\}\([0-9]*\) .*/\1=\2/p' "$tmp/offsets.s" >"$kdir/offsets.env.tmp"
	grep -q '^SKB_TAIL=[0-9]' "$kdir/offsets.env.tmp" || die "$E_BUILD" "no offsets in $tmp/offsets.s" "$tmp/offsets.s"
	mv "$kdir/offsets.env.tmp" "$kdir/offsets.env"
fi
cat "$kdir/offsets.env"
