#!/usr/bin/env python3
"""A/B report for a benchmark run folder (re-runnable offline).

Reads DIR/runs.jsonl (one line per pair x variant x row) and writes
DIR/summary.json, DIR/summary.md and DIR/plot.png (gnuplot), and prints
the table.  Like lkp-tests compare: median per side, min-max spread,
%change patched vs baseline; plus the IPsec/plaintext ratio of each side
(same protocol and family, same boots), and the median over pairs of
patched/baseline within a pair (the two boots closest in time).
Accounting fields (issue 4) are reported per ESP packet where present, and so is the cost pass: the
median time of one esp_output()/esp6_output() call in the sender, per
boot, summarised like throughput (median of the boots, min-max).
Under -icount, the service demand: sender and receiver guest
instructions per KB delivered over a fixed transfer (/proc/stat busy
ticks of each guest), per boot, summarised the same way.

The guests' link (tap or socket, runs.jsonl "link") is a dimension: rows
are grouped by (link, row), and the plaintext reference is the same
link's.  Records written before the field existed were all on the socket
link.  DIR/meta.json (bench.sh writes it before the first boot: command,
plan, link, accel, icount, sysctls, kernels and their cache keys, git
describe, host CPU, QEMU) is printed as the header, so an offline re-run
prints the same header as the run did.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

ACCT = [("inplace", "in-place"), ("pagefrag", "page-frag"),
        ("privhead", "private head"), ("cow", "cow"),
        ("copied_bytes", "B copied"), ("geniv_copied_bytes", "geniv B copied"),
        ("all_copied_bytes", "all B copied")]


def acct_value(acct, key):
    """Per-ESP-packet value of an accounting key (None if absent).

    all_copied_bytes is system-wide on the sender (pskb_expand_head,
    __pskb_pull_tail incl. the xmit linearisation, skb_copy_expand),
    so it also sees copies outside ESP output, e.g. on received ACKs.
    """
    if not acct:
        return None
    if key in acct:
        return acct[key]
    tot = acct.get(key + "_total")
    pk = acct.get("esp_packets")
    if tot is None or not pk:
        return None
    return tot / pk


def load(path):
    with open(path) as f:
        runs = [json.loads(line) for line in f if line.strip()]
    for r in runs:
        r.setdefault("link", "socket")
    return runs


def load_meta(d):
    """DIR/meta.json, or {} for runs made before bench.sh wrote it."""
    try:
        with open(os.path.join(d, "meta.json")) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def meta_header(m):
    """The run's description from meta.json, as lines (none without it)."""
    if not m:
        return []
    host = m.get("host") or {}
    ks = m.get("kernels") or {}
    kern = "; ".join("{} {} (key {})".format(v, k.get("release") or "?",
                                            k.get("key") or "?")
                     for v, k in ks.items())
    return [
        "run: {} (git {}), started {}".format(
            " ".join(m.get("command") or []), m.get("git_describe", "?"),
            m.get("started_utc", "?")),
        "link: {} ({}); accel {}; icount {}; sysctls {}".format(
            m.get("link", "?"), m.get("link_why", "?"), m.get("accel", "?"),
            m.get("icount") or "off", " ".join(m.get("sysctls") or []) or "none"),
        "plan: {} pairs x {} rows, {}s each (UDP -l {}): {}".format(
            m.get("pairs", "?"), len(m.get("rows") or []), m.get("time_s", "?"),
            m.get("udp_len", "?"), " ".join(m.get("rows") or [])),
        "kernels: " + (kern or "?"),
        "host: {} x {} cores (kernel {}); {}".format(
            host.get("cpu_model", "?"), host.get("cores", "?"),
            host.get("kernel", "?"), m.get("qemu_version", "?")),
    ]


def retransmits(d, r):
    """TCP retransmits of a run's iperf3 -J (None for UDP or no file).

    Under TCG the receiving guest is the bottleneck; runs that overflow
    its queues show retransmits, a cwnd above 1 MB and RTTs of 100+ ms,
    and their throughput drops by a third: the column shows which runs
    those were.
    """
    if not r.get("raw") or r.get("mbps") is None:
        return None
    try:
        with open(os.path.join(d, r["raw"])) as f:
            j = json.load(f)
        return j["end"]["sum_sent"].get("retransmits")
    except (OSError, ValueError, KeyError):
        return None


def med(xs):
    return statistics.median(xs) if xs else None


def dist(xs):
    """Median and min-max of a list (None for an empty one)."""
    return {"n": len(xs), "values": xs, "median": med(xs),
            "min": min(xs) if xs else None, "max": max(xs) if xs else None}


def summarise(runs, d):
    rows = []
    order = []
    for r in runs:
        if (r["link"], r["row"]) not in order:
            order.append((r["link"], r["row"]))
    by = {}
    for r in runs:
        by.setdefault((r["link"], r["row"], r["variant"]), []).append(r)
    for link, row in order:
        ent = {"row": row, "link": link}
        for v in ("baseline", "patched"):
            rs = by.get((link, row, v), [])
            xs = [r["mbps"] for r in rs if r.get("mbps") is not None]
            rt = [retransmits(d, r) for r in rs]
            rt = [x for x in rt if x is not None]
            side = dict(dist(xs), mbps=xs, retransmits=rt,
                        lossy_runs=sum(1 for x in rt if x > 0) if rt else None)
            for key, _ in ACCT:
                vals = [acct_value(r.get("acct"), key) for r in rs]
                vals = [v for v in vals if v is not None]
                side[key] = med(vals)
            pk = [r["acct"]["esp_packets"] for r in rs if r.get("acct")]
            side["esp_packets"] = med(pk)
            cs = [r["cost"]["median_ns"] for r in rs
                  if (r.get("cost") or {}).get("calls")]
            side["cost_ns"] = dist(cs)
            for k in ("snd", "rcv"):
                ds = [r["demand"][k + "_instr_per_kb"] for r in rs
                      if (r.get("demand") or {}).get(k + "_instr_per_kb") is not None]
                side[k + "_instr_per_kb"] = dist(ds)
            ent[v] = side
        pb = {(r["pair"], r["variant"]): r["mbps"] for r in runs
              if r["row"] == row and r["link"] == link
              and r.get("mbps") is not None}
        ratios = [pb[(i, "patched")] / pb[(i, "baseline")]
                  for i in sorted({k[0] for k in pb})
                  if pb.get((i, "baseline")) and (i, "patched") in pb]
        ent["pair_ratio"] = dist(ratios)
        b, p = ent["baseline"]["median"], ent["patched"]["median"]
        ent["change_pct"] = (p - b) / b * 100 if b and p is not None else None
        cb = ent["baseline"]["cost_ns"]["median"]
        cp = ent["patched"]["cost_ns"]["median"]
        ent["cost_change_pct"] = (cp - cb) / cb * 100 if cb and cp is not None else None
        for k in ("snd", "rcv"):
            db = ent["baseline"][k + "_instr_per_kb"]["median"]
            dp = ent["patched"][k + "_instr_per_kb"]["median"]
            ent[k + "_demand_change_pct"] = ((dp - db) / db * 100
                                             if db and dp is not None else None)
        rows.append(ent)
    # IPsec / plaintext ratio per side, on the same link
    plain = {}
    for ent in rows:
        if ent["row"].endswith("-plain"):
            plain[(ent["link"],) + tuple(ent["row"].split("-")[:2])] = ent
    for ent in rows:
        key = (ent["link"],) + tuple(ent["row"].split("-")[:2])
        ref = plain.get(key)
        for v in ("baseline", "patched"):
            m = ent[v]["median"]
            rm = ref[v]["median"] if ref else None
            ent[v]["ratio_plain"] = m / rm if m and rm else None
    return rows


def lossy(side):
    if side.get("lossy_runs") is None:
        return "-"
    return "{}/{}".format(side["lossy_runs"], len(side["retransmits"]))


def fmt(x, spec="{:.1f}"):
    return "-" if x is None else spec.format(x)


def spread(side, spec="{:.1f}"):
    if side["median"] is None:
        return "-"
    return (spec + " [" + spec + "-" + spec + "]").format(
        side["median"], side["min"], side["max"])


def table(rows, md):
    hdr = ["row", "link", "baseline Mbit/s med [min-max]",
           "patched Mbit/s med [min-max]", "%change",
           "p/b same pair med [min-max]", "ipsec/plain b", "p",
           "runs w/ retr b", "p"]
    has_acct = any(e["baseline"].get("inplace") is not None or
                   e["patched"].get("inplace") is not None for e in rows)
    if has_acct:
        for _, name in ACCT:
            hdr += [name + "/pkt b", "p"]
        hdr += ["ESP pkts"]
    has_cost = any(e[v]["cost_ns"]["median"] is not None
                   for e in rows for v in ("baseline", "patched"))
    if has_cost:
        hdr += ["esp_output ns b med [min-max]", "p", "%change ns"]
    has_demand = any(e[v][k + "_instr_per_kb"]["median"] is not None
                     for e in rows for v in ("baseline", "patched")
                     for k in ("snd", "rcv"))
    if has_demand:
        hdr += ["snd instr/KB b med [min-max]", "p", "%change snd",
                "rcv instr/KB b med [min-max]", "p", "%change rcv"]
    lines = []
    for e in rows:
        b, p = e["baseline"], e["patched"]
        cells = [e["row"], e["link"], spread(b), spread(p),
                 fmt(e["change_pct"], "{:+.1f}%"),
                 spread(e["pair_ratio"], "{:.2f}"),
                 fmt(b["ratio_plain"], "{:.2f}"),
                 fmt(p["ratio_plain"], "{:.2f}"),
                 lossy(b), lossy(p)]
        if has_acct:
            for key, _ in ACCT:
                spec = "{:.0f}" if key.endswith("copied_bytes") else "{:.3f}"
                cells += [fmt(b.get(key), spec), fmt(p.get(key), spec)]
            cells += [fmt(b.get("esp_packets"), "{:.0f}")]
        if has_cost:
            cells += [spread(b["cost_ns"], "{:.0f}"), spread(p["cost_ns"], "{:.0f}"),
                      fmt(e["cost_change_pct"], "{:+.1f}%")]
        if has_demand:
            for k in ("snd", "rcv"):
                cells += [spread(b[k + "_instr_per_kb"], "{:.0f}"),
                          spread(p[k + "_instr_per_kb"], "{:.0f}"),
                          fmt(e[k + "_demand_change_pct"], "{:+.1f}%")]
        lines.append(cells)
    if md:
        out = ["| " + " | ".join(hdr) + " |",
               "|" + "---|" * len(hdr)]
        out += ["| " + " | ".join(c) + " |" for c in lines]
        return "\n".join(out)
    widths = [max(len(h), *(len(c[i]) for c in lines))
              for i, h in enumerate(hdr)]
    out = ["  ".join(h.ljust(w) for h, w in zip(hdr, widths))]
    out += ["  ".join(c.ljust(w) for c, w in zip(cells, widths))
            for cells in lines]
    return "\n".join(out)


def plot(rows, d):
    links = sorted({e["link"] for e in rows})
    dat = os.path.join(d, "plot.dat")
    with open(dat, "w") as f:
        f.write("# row b_med b_min b_max p_med p_min p_max\n")
        for i, e in enumerate(rows):
            b, p = e["baseline"], e["patched"]
            if b["median"] is None and p["median"] is None:
                continue
            label = e["row"] if len(links) == 1 else e["row"] + " " + e["link"]
            f.write("{} \"{}\" {} {} {} {} {} {}\n".format(
                i, label, *("-" if x is None else x for x in (
                    b["median"], b["min"], b["max"],
                    p["median"], p["min"], p["max"]))))
    gp = """set terminal pngcairo size 1200,600 noenhanced
set output '{out}'
set title 'iperf3 through the guest link ({links}): baseline vs patched (median, min-max)'
set ylabel 'Mbit/s'
set style data histogram
set style histogram errorbars gap 2 lw 1
set style fill solid 0.6 border -1
set xtics rotate by -30 font ',9'
set key top right
set yrange [0:*]
set datafile missing '-'
plot '{dat}' using 3:4:5:xtic(2) title 'baseline', '' using 6:7:8 title 'patched'
""".format(out=os.path.join(d, "plot.png"), dat=dat, links="/".join(links))
    try:
        subprocess.run(["gnuplot"], input=gp.encode(), check=True)
    except (OSError, subprocess.CalledProcessError) as e:
        print("warning: gnuplot failed: {}".format(e), file=sys.stderr)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("dir")
    ap.add_argument("--build-seconds", type=int)
    ap.add_argument("--total-seconds", type=int)
    ap.add_argument("--icount", default="",
                    help="QEMU -icount spec the guests ran with, if any")
    a = ap.parse_args()
    runs = load(os.path.join(a.dir, "runs.jsonl"))
    if not runs:
        sys.exit("no runs in " + a.dir)
    rows = summarise(runs, a.dir)
    run_meta = load_meta(a.dir)
    # Offline: what the run itself recorded.
    if a.build_seconds is None:
        a.build_seconds = run_meta.get("build_seconds")
    if a.total_seconds is None:
        a.total_seconds = run_meta.get("total_seconds")
    if not a.icount:
        a.icount = run_meta.get("icount") or ""
    meta = {"pairs": max(r["pair"] for r in runs),
            "run": run_meta,
            "links": sorted({r["link"] for r in runs}),
            "build_seconds": a.build_seconds,
            "total_seconds": a.total_seconds,
            "icount": a.icount or None,
            "boot_seconds": sorted(r["boot_s"] for r in runs if "boot_s" in r),
            "ike_up_seconds": sorted(r["ike_up_s"] for r in runs
                                     if r.get("ike_up_s") is not None)}
    with open(os.path.join(a.dir, "summary.json"), "w") as f:
        json.dump({"meta": meta, "rows": rows}, f, indent=1)
    seq = {}
    for r in runs:
        vs = seq.setdefault(r["pair"], [])
        if r["variant"] not in vs:
            vs.append(r["variant"])
    order = " ".join("".join("A" if v == "baseline" else "B" for v in seq[k])
                     for k in sorted(seq))
    head = ("{} pairs (A = baseline, B = patched; boot order " + order +
            "); build {}s, total {}s;"
            " guest pair boot {}-{}s; IKE+CHILD up {}-{}s").format(
        meta["pairs"], a.build_seconds, a.total_seconds,
        min(meta["boot_seconds"], default="-"),
        max(meta["boot_seconds"], default="-"),
        min(meta["ike_up_seconds"], default="-"),
        max(meta["ike_up_seconds"], default="-"))
    if a.icount:
        head += ("; guests under QEMU -icount {}: esp_output ns are guest"
                 " instructions x 2^shift, instr/KB count whole-guest busy"
                 " ticks (10^7 ns each); Mbit/s mix virtual and real time"
                 " and are not comparable with other runs").format(a.icount)
    mh = meta_header(run_meta)
    with open(os.path.join(a.dir, "summary.md"), "w") as f:
        f.write("".join("- " + x + "\n" for x in mh) + ("\n" if mh else ""))
        f.write(head + "\n\n" + table(rows, True) + "\n\n![plot](plot.png)\n")
    plot(rows, a.dir)
    for x in mh:
        print(x)
    print(head)
    print(table(rows, False))
    print("\nfull results: " + a.dir)


if __name__ == "__main__":
    main()
