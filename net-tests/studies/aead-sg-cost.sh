# shellcheck shell=bash
# What the shape of an ESP packet's scatterlists costs the AEAD: loads
# net-tests/aead-sg-mod/aead_sg_cost.ko (built here against the variant's
# O= dir) in guest a and prints its per-call figures, one line per
# algorithm and layout.  Under QEMU -icount shift=0 they are instruction
# counts.  A body for qemu-net/pair.sh (run it on each kernel):
#   RIG_ICOUNT=shift=0,sleep=on qemu-net/pair.sh baseline net-tests/studies/aead-sg-cost.sh
# (The module's payload= parameter takes another frag size; 1368 here.)
# Output on stdout: aead-sg-cost VARIANT ALG PAYLOAD LAYOUT min=I median=I
# (eval'd by pair.sh: no trap here, it would replace pair.sh's cleanup)
# shellcheck disable=SC2154 # pair.sh's variant and kdir
mod=$(mktemp -d)
module_build "$kdir" "$RIG_TOP/net-tests/aead-sg-mod" "$mod/m" KCFLAGS=-Werror W=1
cp "$mod/m/aead_sg_cost.ko" "$GUEST_RUN/a/"
rm -rf "$mod"
echo "aead-sg-cost $RIG_TREE/$variant cpu-flags: $(guest_exec a "grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -xE 'erms|fsrm|rep_good|avx|avx2|aes' | tr '\n' ' '")"
guest_exec a "insmod /rig/aead_sg_cost.ko payload=1368; rc=\$?; dmesg | grep 'aead-sg-cost ' | sed -E 's/^\[[ 0-9.]+\] //'; exit \$rc" |
	sed "s|^aead-sg-cost |aead-sg-cost $RIG_TREE/$variant |"
