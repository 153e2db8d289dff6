#!/bin/bash
# Build a guest initramfs for one installed kernel:
#   userspace.cpio.gz (host Debian binaries + libs, cached by content key)
# + modules.cpio.gz   (that kernel's modules)
# concatenated into KERNEL_DIR/initrd.img (the kernel unpacks both).
# Options: usage().
set -euo pipefail
# shellcheck source=qemu-net/lib.sh
. "$(dirname "$0")/lib.sh"

usage() {
	cat <<-'EOF'
		Usage: qemu-net/mkinitramfs.sh KERNEL_DIR
		Make the guest initramfs for a kernel installed by build-kernel.sh
		(the userspace part is cached in RIG_CACHE) and print its path.
		  -h, --help   this text
		Exit: 0 ok, 2 bad usage, 3 a host binary is missing, 6 build failed.
	EOF
}

operands KERNEL_DIR 1 1 "$@"
kdir=${RIG_OPERANDS[0]}
[[ -f "$kdir/info" ]] || usage_error "$kdir is not an installed kernel (no info file)"

# The guests' userspace: Debian's binaries the tests run, no
# configuration of theirs (what runs on the link brings its own through
# the 9p shares).  (perf: linux-perf, bookworm's perf 6.1; bash:
# kselftest scripts; tc: iproute2's, busybox's applet has no clsact;
# wg: wireguard-tools)
bins=(/bin/busybox /usr/sbin/ip /usr/bin/iperf3 /usr/lib/ipsec/charon
	/usr/sbin/swanctl /usr/bin/tcpdump /usr/sbin/ethtool /usr/sbin/xtables-legacy-multi
	/usr/bin/perf /bin/bash /usr/sbin/tc /usr/bin/wg)
# iptables' match and target extensions
xtables=/usr/lib/x86_64-linux-gnu/xtables
plugins=(random nonce openssl kdf pem pkcs1 x509 pubkey kernel-netlink
	socket-default vici updown)
for b in "${bins[@]}"; do
	[[ -x "$b" ]] || die "$E_PKG" "$b missing: run qemu-net/install-deps.sh"
done

ukey=$({
	echo userspace-v4
	cat "$RIG_TOP/qemu-net/guest/init"
	printf '%s\n' "${plugins[@]}"
	dpkg-query -W bash busybox-static iproute2 iperf3 strongswan-charon \
		strongswan-swanctl libstrongswan-standard-plugins tcpdump ethtool iptables libc6 linux-perf \
		wireguard-tools 2>/dev/null
} | sha)
ucpio=$RIG_CACHE/initramfs/userspace-$ukey.cpio.gz

build_userspace() {
	local root lib p f
	root=$(mktemp -d)
	# shellcheck disable=SC2064
	trap "rm -rf '$root'" RETURN
	mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,usr/lib/ipsec/plugins,etc,proc,sys,dev,tmp,run,rig,src}
	install -m 0755 "$RIG_TOP/qemu-net/guest/init" "$root/init"
	cp /bin/busybox "$root/bin/busybox"
	for f in $(/bin/busybox --list); do
		[[ "$f" == busybox ]] || ln -sf busybox "$root/bin/$f"
	done
	# The kernel's request_module() runs /sbin/modprobe (module autoload).
	ln -sf /bin/busybox "$root/sbin/modprobe"
	local elves=("${bins[@]:1}")
	for p in "${plugins[@]}"; do
		elves+=("/usr/lib/ipsec/plugins/libstrongswan-$p.so")
	done
	[[ -d "$xtables" ]] || die "$E_PKG" "$xtables missing: run qemu-net/install-deps.sh"
	elves+=("$xtables"/*.so)
	for f in "${elves[@]}"; do
		mkdir -p "$root$(dirname "$f")"
		cp -L "$f" "$root$f"
	done
	# iptables-legacy by the names the rig calls (the multi binary
	# dispatches on its name)
	for f in iptables ip6tables; do
		ln -sf xtables-legacy-multi "$root/usr/sbin/$f"
	done
	# Libraries the ELF files need, the dynamic loader, and libgcc_s
	# (glibc dlopens it for thread cancellation; charon needs it).
	for lib in $(ldd "${elves[@]}" 2>/dev/null | awk '/=> \//{print $3} /^\t\/lib/{print $1}' | sort -u) \
		/lib/x86_64-linux-gnu/libgcc_s.so.1; do
		mkdir -p "$root$(dirname "$lib")"
		cp -L "$lib" "$root$lib"
	done
	[[ -e "$root/lib64/ld-linux-x86-64.so.2" ]] || {
		mkdir -p "$root/lib64"
		cp -L /lib64/ld-linux-x86-64.so.2 "$root/lib64/"
	}
	echo 'root:x:0:0:root:/:/bin/sh' >"$root/etc/passwd"
	echo 'root:x:0:' >"$root/etc/group"
	mkdir -p "$(dirname "$ucpio")"
	(cd "$root" && find . -print0 | sort -z | cpio --null -o -H newc --quiet) |
		gzip -1 >"$ucpio.tmp"
	mv "$ucpio.tmp" "$ucpio"
}

if [[ ! -f "$ucpio" ]]; then
	step "$RIG_CACHE/logs/initramfs.log" "guest userspace initramfs" build_userspace ||
		die "$E_BUILD" "could not build the guest userspace" "$RIG_CACHE/logs/initramfs.log"
fi

mcpio=$kdir/modules.cpio.gz
if [[ ! -f "$mcpio" ]]; then
	(cd "$kdir/modroot" && find . -print0 | sort -z | cpio --null -o -H newc --quiet) |
		gzip -1 >"$mcpio.tmp"
	mv "$mcpio.tmp" "$mcpio"
fi
initrd=$kdir/initrd-$ukey.img
if [[ ! -f "$initrd" ]]; then
	cat "$ucpio" "$mcpio" >"$initrd.tmp"
	mv "$initrd.tmp" "$initrd"
fi
printf '%s\n' "$initrd"
