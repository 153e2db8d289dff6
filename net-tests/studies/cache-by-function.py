#!/usr/bin/env python3
"""Compare two cache-by-function.sh outputs (baseline, patched): the
sender's simulated L1D and L2 misses per KB sent, by kernel function
(symbolised with each run's own /proc/kallsyms), largest differences
first.

usage: cache-by-function.py DIR-BASELINE DIR-PATCHED [N]

With --copy-path instead of N: only the functions of skb_cow_data()'s
copy (the copy, its allocation and its frees), and their sum.
"""
import bisect
import gzip
import os
import sys


def opn(path):
    """PATH, or PATH.gz as kept under docs/results/."""
    return open(path) if os.path.exists(path) else gzip.open(path + ".gz", "rt")


def load(d):
    syms = []
    for line in opn(d + "/kallsyms"):
        a, t, name = line.split()[:3]
        if t in "tTwW":
            syms.append((int(a, 16), name))
    syms.sort()
    addrs = [a for a, _ in syms]
    kb = 0
    for line in opn(d + "/demand.txt"):
        k, _, v = line.strip().partition("=")
        if k == "bytes_sent":
            kb = int(v) / 1024
    by = {}
    for line in opn(d + "/pcs.txt"):
        pc, acc, l1, l2 = line.split()
        pc = int(pc, 16)
        i = bisect.bisect_right(addrs, pc) - 1
        name = syms[i][1] if i >= 0 and pc >= 0xffff000000000000 else "(user)"
        e = by.setdefault(name, [0, 0, 0])
        e[0] += int(acc)
        e[1] += int(l1)
        e[2] += int(l2)
    return kb, by


# skb_cow_data()'s copy on either kernel: the old path (pskb_expand_head,
# __pskb_pull_tail), the new one (inline in skb_cow_data), the copies,
# the head's allocation and the frees of the old data
COPY_PATH = ["skb_cow_data", "pskb_expand_head", "__pskb_pull_tail",
             "skb_copy_bits", "memcpy", "kmalloc_reserve",
             "__kmalloc_node_track_caller", "___slab_alloc",
             "kmem_cache_alloc_node", "kfree", "skb_release_data",
             "__slab_free", "page_frag_free"]


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    (kb_b, b), (kb_p, p) = load(sys.argv[1]), load(sys.argv[2])
    if sys.argv[3:] == ["--copy-path"]:
        sb = sp = 0
        print("%-30s %10s %10s %9s %9s" % ("function", "acc/KB b", "acc/KB p", "L1D/KB b", "L1D/KB p"))
        for f in COPY_PATH:
            eb, ep = b.get(f, [0, 0, 0]), p.get(f, [0, 0, 0])
            if eb[0] or ep[0]:
                print("%-30s %10.2f %10.2f %9.2f %9.2f" % (f, eb[0] / kb_b, ep[0] / kb_p, eb[1] / kb_b, ep[1] / kb_p))
                sb += eb[1] / kb_b
                sp += ep[1] / kb_p
        print("%-30s %10s %10s %9.2f %9.2f" % ("sum", "", "", sb, sp))
        return
    n = int(sys.argv[3]) if len(sys.argv) == 4 else 25
    tot = [sum(e[i] for e in x.values()) for x in (b, p) for i in (1, 2)]
    print("L1D misses per KB: baseline %.2f, patched %.2f; L2: %.2f, %.2f"
          % (tot[0] / kb_b, tot[2] / kb_p, tot[1] / kb_b, tot[3] / kb_p))
    names = set(b) | set(p)
    rows = []
    for f in names:
        eb, ep = b.get(f, [0, 0, 0]), p.get(f, [0, 0, 0])
        rows.append((ep[1] / kb_p - eb[1] / kb_b, f, eb, ep))
    rows.sort(key=lambda r: -abs(r[0]))
    print("%-32s %12s %12s %9s %9s %9s" % ("function", "L1D/KB b", "L1D/KB p", "diff", "L2/KB b", "L2/KB p"))
    for d, f, eb, ep in rows[:n]:
        print("%-32s %12.2f %12.2f %+9.2f %9.2f %9.2f"
              % (f[:32], eb[1] / kb_b, ep[1] / kb_p, d, eb[2] / kb_b, ep[2] / kb_p))


if __name__ == "__main__":
    main()
