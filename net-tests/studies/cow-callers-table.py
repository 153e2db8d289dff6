#!/usr/bin/env python3
"""Markdown table of net-tests/studies/cow-callers.sh outputs.

  cow-callers-table.py BASELINE.out PATCHED.out

One line per case, guest and skb_cow_data() caller: its calls, the calls
on a cloned or paged skb (the copies), and per kernel the skb heads
kmalloc_reserve() gave, by allocator (pskb_expand_head: the old copy;
skb_cow_data: v5's), with their bucket bytes per copy."""
import collections
import sys


def load(path):
    d = collections.defaultdict(dict)   # (case, guest) -> key -> value
    with open(path) as f:
        for line in f:
            p = line.split()
            if len(p) != 5 or p[0] != "cow-callers" or "=" not in p[4]:
                continue
            k, v = p[4].split("=", 1)
            d[(p[2], p[3])][k] = int(v)
    return d


def heads(kv, fn):
    n, b = kv.get("head_allocs." + fn, 0), kv.get("head_bytes." + fn, 0)
    return n, b


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    base, pat = load(argv[1]), load(argv[2])
    print("| case | guest | caller | calls | copies (cloned or paged) | "
          "baseline: pskb_expand_head heads, B each | v5: skb_cow_data heads, B each |")
    print("|---|---|---|---|---|---|---|")
    for key in sorted(set(base) | set(pat)):
        b, p = base.get(key, {}), pat.get(key, {})
        callers = sorted({k.split(".", 1)[1] for k in list(b) + list(p)
                          if k.startswith("cow_calls.")})
        for fn in callers:
            calls = "{} / {}".format(b.get("cow_calls." + fn, 0), p.get("cow_calls." + fn, 0))
            cop = "{} / {}".format(b.get("cow_copies." + fn, 0), p.get("cow_copies." + fn, 0))
            nb, bb = heads(b, "pskb_expand_head")
            np_, bp = heads(p, "skb_cow_data")
            print("| {} | {} | {} | {} | {} | {} | {} |".format(
                key[0], key[1], fn, calls, cop,
                "{} x {:.0f}".format(nb, bb / nb) if nb else "0",
                "{} x {:.0f}".format(np_, bp / np_) if np_ else "0"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
