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
instructions per KB delivered over a fixed transfer (counted by the
skbt-insn QEMU plugin between two marks in each guest, record source
"insn"; older records or runs without the plugin: each guest's busy ns
from /proc/timer_list's idle and iowait sleep times, or /proc/stat busy
ticks), per boot, summarised the same way.

The guests' link (tap or socket, runs.jsonl "link") is a dimension: rows
are grouped by (link, row), and the plaintext reference is the same
link's.  Records written before the field existed were all on the socket
link.  DIR/meta.json (bench.sh writes it before the first boot: command,
plan, link, accel, icount, sysctls, kernels and their cache keys, git
describe, host CPU, QEMU) is printed as the header, so an offline re-run
prints the same header as the run did.

DIR/verdict.json judges the run, row by row and metric by metric
(cow/pkt, B copied/pkt, IV generator B copied/pkt, instructions per
esp_output() call under -icount or ns per call without it, sender and
receiver instructions per KB, throughput as the same-pair ratio):
baseline and patched median [min-max over boots], the ratio, and
"better", "worse", "same" or "noise" (rules below, also written into
verdict.json); the table and the one-line verdict are printed too.
  - deterministic metrics (counts per packet; instructions per call
    under -icount) are judged against a fixed threshold: 1 % of the
    baseline, at least 0.01 cow/pkt, 16 B/pkt, one 100-instruction
    bucket of the cost histogram.  Beyond it: better/worse, unless the
    boots of one kernel disagree by more than the difference ("noise");
    within it: "same" (or "noise" if the boots disagree by more than it).
  - noisy metrics (instructions per KB: 3 %; throughput same-pair ratio,
    wall-clock ns per call: 5 %) are judged only when every boot of one
    kernel is beyond every boot of the other (the difference exceeds the
    spread of both sides) and the difference exceeds the threshold and
    the noise floor: one /proc/stat tick, the spread (max-min)/median of
    the same-pair ratios, and the A/A spread of the control rows of the
    same protocol and link (all boots of a control, both kernels pooled:
    the change does not touch it; or its same-pair ratios); otherwise
    "noise" ("same" if the difference, the boots' spreads and the floor
    are all within the threshold).  Fewer than 3 boots a side (LKP's
    minimum): "noise", rule none.  With 5 same-pair ratios or more the
    rule is bootstrap95 instead: the 95 % bootstrap interval of the mean
    same-pair ratio must lie on one side of 1 and its mean beyond the
    threshold and the floor, which is one tick and how far the controls'
    own interval reaches from 1 (an interval narrows with more pairs
    where a range only widens).
  - control rows (--controls, default *-plain,udp-*,icmp-*,*-on: the
    plaintext reference, UDP, ICMP and ESP GSO rows a TCP-clone series
    does not touch; bench.sh --controls records them in meta.json) judge
    the rig: a control that comes out better or worse on a metric has
    "moved", and every better/worse finding of that metric on targeted
    rows of that link becomes "unconfirmed".
  - --fail-on-regression: exit 1 when a targeted row is "worse" on a
    deterministic metric or a control moved (each printed on stderr);
    noisy "worse" findings are reported, not fatal.  Exit 0 otherwise.
"""
import argparse
import glob
import fnmatch
import json
import os
import random
import statistics
import subprocess
import sys

ACCT = [("inplace", "in-place"), ("pagefrag", "page-frag"),
        ("privhead", "private head"), ("cow", "cow"),
        ("copied_bytes", "B copied"), ("geniv_copied_bytes", "geniv B copied"),
        ("segment_copied_bytes", "segment B copied"),
        ("all_copied_bytes", "all B copied")]


def acct_value(acct, key):
    """Per-ESP-packet value of an accounting key (None if absent).

    copied_bytes ("B copied") is ESP output's own copy: skb_cow_data()
    plus the headers copied into a private head (patched);
    geniv_copied_bytes the IV generator's src -> dst copy;
    segment_copied_bytes ("segment B copied") the payload skb_segment()
    copies when it segments without NETIF_F_SG (software ESP GSO).
    all_copied_bytes ("all B copied") is every counted copy on the
    sender: pskb_expand_head, __pskb_pull_tail incl. the xmit
    linearisation, skb_copy_expand (system-wide, so it also sees copies
    outside ESP output, e.g. on received ACKs), skb_segment without SG,
    the private-head headers and the IV generator's copy.  Records
    without segment_copied_bytes_total were made before the last three
    were added: their all_copied_bytes is the first three only (it
    misses ~1,400 B/pkt on the ESP GSO rows); segment B copied shows
    "-" for them.
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
    kern = "; ".join("{} {} (key {}{})".format(
        v, k.get("release") or "?", k.get("key") or "?",
        ", series " + k["series"] if k.get("series") else "")
        for v, k in ks.items())
    return [
        "run: {} (git {}), started {}".format(
            " ".join(m.get("command") or []), m.get("git_describe", "?"),
            m.get("started_utc", "?")),
        "link: {} ({}); accel {}{}{}; icount {}; sysctls {}".format(
            m.get("link", "?"), m.get("link_why", "?"), m.get("accel", "?"),
            ", {} vCPUs".format(m["smp"]) if m.get("smp", 1) != 1 else "",
            ", guests pinned" if m.get("pinned") else "",
            m.get("icount") or "off", " ".join(m.get("sysctls") or []) or "none"),
        "plan: {} pairs x {} rows, {}s each (UDP -l {}): {}".format(
            m.get("pairs", "?"), len(m.get("rows") or []), m.get("time_s", "?"),
            m.get("udp_len", "?"), " ".join(m.get("rows") or [])),
        "kernels: " + (kern or "?"),
    ] + demand_line(m) + [
        "host: {} x {} cores (kernel {}); {}".format(
            host.get("cpu_model", "?"), host.get("cores", "?"),
            host.get("kernel", "?"), m.get("qemu_version", "?")),
    ]


def demand_line(m):
    """The service-demand pass's settings, for runs under -icount."""
    d = m.get("demand")
    if not d or not (m.get("icount") or m.get("phase") == "instructions"):
        return []
    if d.get("demand_rate", "0") != "0":
        tcp = "TCP {} paced at {}".format(d.get("demand_paced_bytes"), d.get("demand_rate"))
        udp = "UDP {} at {}".format(d.get("demand_udp_bytes"), d.get("demand_rate"))
    else:
        tcp = "TCP {} (plaintext {})".format(d.get("demand_tcp_bytes"),
                                             d.get("demand_plain_tcp_bytes"))
        udp = "UDP {} at {}".format(d.get("demand_udp_bytes"), d.get("demand_udp_rate"))
    return ["demand pass: {}; {}; window {}, one ACK per segment {}; skbt-insn plugin (RIG_INSN) {}".format(
        tcp, udp, d.get("demand_window"), "yes" if d.get("demand_quickack") == "1" else "no",
        d.get("insn"))]


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
                ds = [(r.get("demand") or {}).get(k + "_cycles_per_kb") for r in rs]
                side[k + "_cycles_per_kb"] = dist([x for x in ds if x is not None])
                # the throughput pass's CPU on each end (/proc/stat)
                for f in ("util_pct", "us_per_kb"):
                    xs = [(r.get("cpu") or {}).get(k + "_" + f) for r in rs]
                    side[k + "_" + f] = dist([x for x in xs if x is not None])
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
    has_cpu = any(e[v].get("snd_util_pct", {}).get("median") is not None
                  for e in rows for v in ("baseline", "patched"))
    has_cyc = any(e[v].get("snd_cycles_per_kb", {}).get("median") is not None
                  for e in rows for v in ("baseline", "patched"))
    if has_cyc:
        hdr += ["snd cycles/KB b med [min-max]", "p", "rcv cycles/KB b med [min-max]", "p"]
    if has_cpu:
        hdr += ["snd CPU % b", "p", "rcv CPU % b", "p",
                "snd us/KB b med [min-max]", "p", "rcv us/KB b med [min-max]", "p"]
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
        if has_cyc:
            for k in ("snd", "rcv"):
                cells += [spread(b[k + "_cycles_per_kb"], "{:.0f}"),
                          spread(p[k + "_cycles_per_kb"], "{:.0f}")]
        if has_cpu:
            for k in ("snd", "rcv"):
                cells += [fmt(b[k + "_util_pct"]["median"], "{:.0f}"),
                          fmt(p[k + "_util_pct"]["median"], "{:.0f}")]
            for k in ("snd", "rcv"):
                cells += [spread(b[k + "_us_per_kb"], "{:.2f}"),
                          spread(p[k + "_us_per_kb"], "{:.2f}")]
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
    if all(e["baseline"]["median"] is None and e["patched"]["median"] is None
           for e in rows):
        return   # no throughput (bench's instruction phase): nothing to plot
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


# --- verdict.json ---------------------------------------------------------
# The run judged row by row and metric by metric (the rules are in the
# module's docstring and in verdict.json "rules").

VERDICT_FORMAT = 1
DEFAULT_CONTROLS = ("*-plain", "udp-*", "icmp-*", "*-on")
# The cost histogram's bucket (net-tests/guest/cost.sh B=100, in the
# recorded unit: instructions at -icount shift=0).
COST_BUCKET = 100
# Noisy metrics: LKP's minimum of samples a side, the number of
# same-pair ratios from which the bootstrap interval judges, resamples.
LKP_MIN = 3
BOOT_MIN = 5
BOOT_N = 10000


def _acct_get(key):
    return lambda r: (acct_value(r.get("acct"), key), 0)


def _cost_get(r):
    c = r.get("cost") or {}
    return (c.get("median_ns") if c.get("calls") else None), 0


def _cost_cow_get(r):
    c = r.get("cost_cow") or {}
    return (c.get("median_ns") if c.get("calls") else None), 0


def _miss_get(side, level):
    # simulated misses: deterministic for one guest run, noisy across
    # boots as the instruction counts are
    return lambda r: ((r.get("demand") or {}).get(
        "{}_{}_miss_per_kb".format(side, level)), 0)


def _demand_get(side):
    def get(r):
        d = r.get("demand") or {}
        v, t = d.get(side + "_instr_per_kb"), d.get(side + "_ticks")
        if d.get("source") in ("insn", "timer_list"):
            return v, 0   # counted instructions, or busy ns: exact
        # resolution: what one /proc/stat tick is worth in this boot
        return v, (v / t if v is not None and t else 0)
    return get


def _cpu_get(side, what):
    """The throughput pass's CPU figure of one side, with the worth of
    one /proc/stat tick (10 ms of one CPU) in it as the resolution."""
    def get(r):
        c = r.get("cpu") or {}
        v, t = c.get(side + "_" + what), c.get(side + "_busy_ticks")
        return v, (v / t if v is not None and t else 0)
    return get


# key, label, class, lower is better, relative threshold, absolute floor,
# unit, value of a run record (value, resolution).  "icount": only in
# runs with (True) or without (False) -icount.
METRICS = [
    dict(key="cow_per_pkt", label="cow/pkt", cls="deterministic", lower=True,
         rel=0.01, floor=0.01, unit="skb_cow_data() calls per ESP packet",
         get=_acct_get("cow")),
    dict(key="bytes_copied_per_pkt", label="B copied/pkt", cls="deterministic",
         lower=True, rel=0.01, floor=16, unit="bytes copied per ESP packet",
         get=_acct_get("copied_bytes")),
    dict(key="geniv_bytes_copied_per_pkt", label="geniv B copied/pkt",
         cls="deterministic", lower=True, rel=0.01, floor=16,
         unit="bytes the IV generator copies per ESP packet",
         get=_acct_get("geniv_copied_bytes")),
    dict(key="instr_per_call", label="instr/call", cls="deterministic",
         lower=True, rel=0.01, floor=COST_BUCKET, icount=True,
         unit="guest instructions per encrypt call: esp_output(), WireGuard's"
              " encrypt_packet() (x 2^shift)",
         get=_cost_get),
    dict(key="cow_instr_per_call", label="cow instr/call", cls="deterministic",
         lower=True, rel=0.01, floor=COST_BUCKET, icount=True,
         unit="guest instructions per skb_cow_data() call (x 2^shift)",
         get=_cost_cow_get),
    dict(key="cow_copies_per_pkt", label="cow copies/pkt", cls="deterministic",
         lower=True, rel=0.01, floor=0.01,
         unit="skb_cow_data() calls on a cloned or paged skb per packet",
         get=_acct_get("cow_copies")),
    dict(key="head_bytes_per_pkt", label="head B/pkt", cls="deterministic",
         lower=True, rel=0.01, floor=16,
         unit="kmalloc bucket bytes of the skb heads allocated per packet"
              " (slab footprint)", get=_acct_get("head_bytes")),
    dict(key="ns_per_call", label="ns/call", cls="noisy", lower=True,
         rel=0.05, floor=0, icount=False,
         unit="ns per esp_output() call (wall clock)", get=_cost_get),
    dict(key="snd_instr_per_kb", label="snd instr/KB", cls="noisy", lower=True,
         rel=0.03, floor=0,
         unit="sender guest instructions per KB delivered",
         get=_demand_get("snd")),
    dict(key="rcv_instr_per_kb", label="rcv instr/KB", cls="noisy", lower=True,
         rel=0.03, floor=0,
         unit="receiver guest instructions per KB delivered",
         get=_demand_get("rcv")),
    dict(key="snd_l1d_miss_per_kb", label="snd L1D miss/KB", cls="noisy",
         lower=True, rel=0.03, floor=0,
         unit="sender simulated L1D misses per KB delivered (skbt-cache"
              " plugin, RIG_INSN=cache: Zen 4 sizes, LRU)",
         get=_miss_get("snd", "l1d")),
    dict(key="snd_l2_miss_per_kb", label="snd L2 miss/KB", cls="noisy",
         lower=True, rel=0.03, floor=0,
         unit="sender simulated L2 misses per KB delivered (skbt-cache)",
         get=_miss_get("snd", "l2")),
    dict(key="rcv_l1d_miss_per_kb", label="rcv L1D miss/KB", cls="noisy",
         lower=True, rel=0.03, floor=0,
         unit="receiver simulated L1D misses per KB delivered (skbt-cache)",
         get=_miss_get("rcv", "l1d")),
    dict(key="throughput", label="throughput", cls="noisy", lower=False,
         rel=0.05, floor=0,
         unit="Mbit/s per side; judged on the median same-pair ratio"
              " patched/baseline", get=lambda r: (r.get("mbps"), 0)),
    dict(key="snd_cycles_per_kb", label="snd cycles/KB", cls="noisy", lower=True,
         rel=0.03, floor=0,
         unit="sender guest cycles per KB sent (perf stat, the guest's PMU:"
              " KVM)", get=lambda r: ((r.get("demand") or {}).get("snd_cycles_per_kb"), 0)),
    dict(key="rcv_cycles_per_kb", label="rcv cycles/KB", cls="noisy", lower=True,
         rel=0.03, floor=0,
         unit="receiver guest cycles per KB received (perf stat, the guest's PMU)",
         get=lambda r: ((r.get("demand") or {}).get("rcv_cycles_per_kb"), 0)),
    dict(key="snd_us_per_kb", label="snd us/KB", cls="noisy", lower=True,
         rel=0.05, floor=0,
         unit="sender CPU busy us per KB sent over the throughput pass"
              " (/proc/stat, all vCPUs: netperf's service demand)",
         get=_cpu_get("snd", "us_per_kb")),
    dict(key="rcv_us_per_kb", label="rcv us/KB", cls="noisy", lower=True,
         rel=0.05, floor=0,
         unit="receiver CPU busy us per KB received over the throughput pass",
         get=_cpu_get("rcv", "us_per_kb")),
    dict(key="snd_util_pct", label="snd CPU %", cls="context", lower=True,
         rel=0.05, floor=0,
         unit="sender CPU utilisation over the throughput pass, % of all"
              " its vCPUs (context: read with throughput and us/KB)",
         get=_cpu_get("snd", "util_pct")),
    dict(key="rcv_util_pct", label="rcv CPU %", cls="context", lower=True,
         rel=0.05, floor=0,
         unit="receiver CPU utilisation over the throughput pass, % of all"
              " its vCPUs (context)",
         get=_cpu_get("rcv", "util_pct")),
]

RULES = {
    "deterministic": "beyond max(rel x |baseline|, floor) -> better/worse, "
                     "unless a kernel's boots disagree by more than the "
                     "difference (noise); within it -> same (noise if the "
                     "boots disagree by more than the threshold)",
    "noisy_rule": "which rule judged a noisy metric is in its entry "
                  "(\"rule\"): bootstrap95 with at least %d "
                  "same-pair ratios, else lkp-separated with at least "
                  "%d boots a side, else none (noise)" % (BOOT_MIN, LKP_MIN),
    "bootstrap95": "the 95 %% interval of the mean same-pair ratio "
                   "patched/baseline (percentile bootstrap, %d "
                   "resamples, fixed seed): better/worse when the whole "
                   "interval lies on one side of 1 and |mean - 1| exceeds "
                   "the threshold and the noise floor (one /proc/stat "
                   "tick, and how far the 95 %% interval of the same "
                   "protocol's control rows on that link reaches from 1 "
                   "(their A/A range when they have no interval); a "
                   "control's own floor is the tick); same when the whole "
                   "interval lies within 1 +- threshold and the floor is "
                   "within it; else noise" % BOOT_N,
    "interval": "every noisy or context metric with at least %d "
                "same-pair ratios carries interval95 (bootstrap, as "
                "above), whichever rule judged it" % LKP_MIN,
    "context": "utilisation: reported with its interval, not judged (a "
               "change that moves more bytes may use more CPU; us/KB is "
               "the judged figure)",
    "noisy": "lkp-separated: judged only when every boot of one kernel is beyond every "
             "boot of the other and |ratio - 1| exceeds the threshold and "
             "the noise floor: one /proc/stat tick, (max-min)/median of the "
             "same-pair ratios, the A/A spread of the control rows of the "
             "same protocol and link (all their boots, both kernels pooled, "
             "or their same-pair ratios; controls themselves: their own "
             "boots only); else noise (same if the difference, the boots' "
             "spreads and the floor are within the threshold); fewer than "
             "%d boots a side -> noise (LKP's rule: at least 3 samples a "
             "side, ranges separated)" % LKP_MIN,
    "controls": "a control row judged better or worse on a metric has "
                "moved: the better/worse findings of that metric on the "
                "targeted rows of its link become unconfirmed",
    "fail_on_regression": "exit 1 when a targeted row is worse on a "
                          "deterministic metric, or a control moved",
    "thresholds": {m["key"]: {"class": m["cls"], "rel": m["rel"],
                              "floor": m["floor"],
                              "better": "lower" if m["lower"] else "higher",
                              "unit": m["unit"]} for m in METRICS},
}


def interval95(xs, seed=1):
    """95 % percentile-bootstrap interval of the mean of xs: {"mean",
    "lo", "hi", "n", "method"}, or None with fewer than LKP_MIN values.
    A fixed seed: the same runs give the same verdict.json."""
    xs = [x for x in xs if x is not None]
    n = len(xs)
    if n < LKP_MIN:
        return None
    rnd = random.Random(seed)
    means = sorted(sum(rnd.choices(xs, k=n)) / n for _ in range(BOOT_N))
    return {"mean": sum(xs) / n, "lo": means[int(0.025 * BOOT_N)],
            "hi": means[int(0.975 * BOOT_N) - 1], "n": n,
            "method": "percentile bootstrap of the mean same-pair ratio, "
                      "{} resamples".format(BOOT_N)}


def _dist(xs):
    xs = [x for x in xs if x is not None]
    if not xs:
        return None
    return {"n": len(xs), "median": med(xs), "min": min(xs), "max": max(xs),
            "values": xs}


def _rel_spread(d):
    """(max-min)/median of a distribution (0 for one value, None if none)."""
    if not d or d["n"] < 2 or not d["median"]:
        return None if not d else 0.0
    return (d["max"] - d["min"]) / abs(d["median"])


def _side(rs, get):
    """Per-boot values of one kernel: {pair: value}, worst resolution."""
    vals, res = {}, 0.0
    for r in rs:
        v, rv = get(r)
        if v is not None:
            vals[r["pair"]] = v
            res = max(res, rv or 0)
    return vals, res


def _pct(b, p):
    return (p - b) / b * 100 if b else None


def _judge(diff, thr, noise, lower, separated=True):
    """better/worse when |diff| exceeds max(thr, noise) and (noisy
    metrics) every boot of one kernel is beyond every boot of the other;
    same when |diff| and the noise are within thr; noise otherwise."""
    if abs(diff) > max(thr, noise) and separated:
        return "better" if (diff < 0) == lower else "worse"
    return "same" if abs(diff) <= thr and noise <= thr else "noise"


def _metric_entry(m, bvals, bres, pvals, pres, aa, aa_iv=None):
    """One row x metric: values, threshold, noise, judgement.  aa: the
    controls' A/A spread (relative, where) for a targeted row's noisy
    metric, or None; aa_iv: how far the controls' own 95 % interval of
    the mean same-pair ratio reaches from 1 (relative, where), the floor
    under bootstrap95, or None."""
    b, p = _dist([bvals[i] for i in sorted(bvals)]), _dist([pvals[i] for i in sorted(pvals)])
    for d, vals in ((b, bvals), (p, pvals)):
        if d:
            d["pairs"] = sorted(vals)
    e = {"class": m["cls"], "better": "lower" if m["lower"] else "higher",
         "baseline": b, "patched": p}
    if b is None or p is None:
        e["judgement"] = "n/a"
        e["note"] = "no {} value".format("patched" if b else "baseline")
        return e
    bm, pm = b["median"], p["median"]
    e["ratio"] = pm / bm if bm else None
    e["change_pct"] = _pct(bm, pm)
    if m["key"] == "throughput":
        rs = [pvals[i] / bvals[i] for i in sorted(bvals)
              if i in pvals and bvals[i]]
        e["pair_ratio"] = _dist(rs)
        if e["pair_ratio"]:
            e["ratio"] = e["pair_ratio"]["median"]
            e["change_pct"] = (e["ratio"] - 1) * 100
    if m["cls"] == "deterministic":
        diff = pm - bm
        thr = max(m["rel"] * abs(bm), m["floor"])
        noise = max(b["max"] - b["min"], p["max"] - p["min"])
        e.update(diff=diff, threshold=thr, noise=noise)
        e["judgement"] = e["judged"] = _judge(diff, thr, noise, m["lower"])
        return e
    if not bm or e["ratio"] is None:
        e["judgement"] = "n/a"
        e["note"] = "no baseline to compare with"
        return e
    # the 95 % interval of the mean same-pair ratio (noisy and context)
    prs = [pvals[i] / bvals[i] for i in sorted(bvals) if i in pvals and bvals[i]]
    iv = interval95(prs)
    if iv:
        e["interval95"] = iv
    if m["cls"] == "context":
        e["judgement"] = "context"
        return e
    if min(b["n"], p["n"]) < LKP_MIN:
        e["judgement"] = "noise"
        e["rule"] = "none"
        e["note"] = "fewer than {} boots a side (LKP's minimum): not judged".format(LKP_MIN)
        return e
    diff, thr = e["ratio"] - 1, m["rel"]
    # every boot of one kernel beyond every boot of the other
    separated = b["max"] < p["min"] or p["max"] < b["min"]
    parts = {"baseline boots": _rel_spread(b), "patched boots": _rel_spread(p),
             "one tick": max(bres / bm, pres / pm if pm else 0)}
    if e.get("pair_ratio"):
        parts["same-pair ratios"] = _rel_spread(e["pair_ratio"])
    if aa:
        parts["controls' A/A: " + aa[1]] = aa[0]
    parts = {k: round(v, 4) for k, v in parts.items() if v}
    # the boots' own spreads count through "separated"; the rest here
    floor = {k: v for k, v in parts.items()
             if k not in ("baseline boots", "patched boots")}
    noise = max(floor.values(), default=0.0)
    e.update(diff_rel=diff, threshold_rel=thr, noise_rel=noise,
             separated=separated, spreads_rel=parts)
    if iv and iv["n"] >= BOOT_MIN:
        # bootstrap95: the interval, not the boots' ranges, decides; the
        # floor is what an unchanged row's interval shows (the controls'
        # own interval, not their range: a range grows with the number of
        # pairs, an interval narrows), and one tick
        e["rule"] = "bootstrap95"
        bfloor = {k: v for k, v in parts.items() if k == "one tick"}
        if aa_iv:
            bfloor["controls' A/A interval: " + aa_iv[1]] = aa_iv[0]
        elif aa:
            bfloor["controls' A/A: " + aa[1]] = aa[0]
        noise = max(bfloor.values(), default=0.0)
        e.update(noise_rel=noise, floor_rel=bfloor)
        d = iv["mean"] - 1
        beyond = iv["lo"] > 1 or iv["hi"] < 1
        if beyond and abs(d) > max(thr, noise):
            j = "better" if (d < 0) == m["lower"] else "worse"
        elif 1 - thr <= iv["lo"] and iv["hi"] <= 1 + thr and noise <= thr:
            j = "same"
        else:
            j = "noise"
        e["judgement"] = e["judged"] = j
        return e
    e["rule"] = "lkp-separated"
    e["judgement"] = e["judged"] = _judge(
        diff, thr, noise if separated else max(parts.values(), default=0.0),
        m["lower"], separated)
    return e


def _fmtv(m, x):
    if m["key"] == "cow_per_pkt":
        return "{:.3f}".format(x)
    return "{:.0f}".format(x) if abs(x) >= 100 else "{:.3g}".format(x)


def _short(row, link, nlinks, m, e):
    """'ROW [(LINK)] LABEL b -> p (+x %)' for the summary lists."""
    name = row if nlinks == 1 else "{} ({})".format(row, link)
    if e.get("pair_ratio"):
        val = "same-pair ratio {:.2f} [{:.2f}-{:.2f}]".format(
            e["ratio"], e["pair_ratio"]["min"], e["pair_ratio"]["max"])
    else:
        val = " -> ".join("-" if e[v] is None else _fmtv(m, e[v]["median"])
                          for v in ("baseline", "patched"))
        if e.get("change_pct") is not None:
            val += " ({:+.1f} %)".format(e["change_pct"])
    if e.get("interval95"):
        val += ", 95 % interval {:+.1f}..{:+.1f} %".format(
            (e["interval95"]["lo"] - 1) * 100, (e["interval95"]["hi"] - 1) * 100)
    return "{} {} {}".format(name, m["label"], val)


def _brief(m, e):
    """'LABEL +x %' (throughput: 'throughput x1.66'), '(noisy)' marked."""
    if e.get("pair_ratio"):
        c = "x{:.2f}".format(e["ratio"])
    elif e.get("change_pct") is not None:
        c = "{:+.1f} %".format(e["change_pct"])
    else:
        c = " -> ".join(_fmtv(m, e[v]["median"]) for v in ("baseline", "patched"))
    return "{} {}{}".format(m["label"], c, " (noisy)" if m["cls"] == "noisy" else "")


def verdict(runs, run_meta, controls, icount):
    """The verdict of a run (a dict, written as verdict.json)."""
    metrics = [m for m in METRICS if m.get("icount", bool(icount)) == bool(icount)]
    order, by = [], {}
    for r in runs:
        k = (r["link"], r["row"])
        if k not in order:
            order.append(k)
        by.setdefault(k + (r["variant"],), []).append(r)
    links = sorted({k[0] for k in order})
    variants = sorted({r["variant"] for r in runs})
    role = {k: ("control" if any(fnmatch.fnmatchcase(k[1], c) for c in controls)
                else "target") for k in order}
    proto = {k: k[1].split("-")[0] for k in order}
    sides = {}
    for k in order:
        for m in metrics:
            sides[k + (m["key"],)] = (_side(by.get(k + ("baseline",), []), m["get"]),
                                      _side(by.get(k + ("patched",), []), m["get"]))
    # A/A spread of the controls, per (link, protocol, metric): the
    # relative range of all boots of a control, both kernels pooled (the
    # change does not touch it), or of its same-pair ratios; the widest.
    aa, aa_iv = {}, {}
    for k in order:
        if role[k] != "control":
            continue
        for m in metrics:
            if m["cls"] != "noisy":
                continue
            (bv, _), (pv, _) = sides[k + (m["key"],)]
            cand = []
            if len(bv) + len(pv) >= 2:
                cand.append((_rel_spread(_dist(list(bv.values()) + list(pv.values()))),
                             k[1] + " boots"))
            if m["key"] == "throughput":
                rs = [pv[i] / bv[i] for i in bv if i in pv and bv[i]]
                if len(rs) >= 2:
                    cand.append((_rel_spread(_dist(rs)), k[1] + " same-pair ratios"))
            for c in cand:
                key = (k[0], proto[k], m["key"])
                if c[0] and c[0] > aa.get(key, (0, ""))[0]:
                    aa[key] = (round(c[0], 4), c[1])
            # the control's own 95 % interval of the mean same-pair
            # ratio: how far from 1 an unchanged row's interval reaches
            iv = interval95([pv[i] / bv[i] for i in sorted(bv) if i in pv and bv[i]])
            if iv and iv["n"] >= BOOT_MIN:
                key = (k[0], proto[k], m["key"])
                x = round(max(1 - iv["lo"], iv["hi"] - 1, 0.0), 4)
                if x >= aa_iv.get(key, (-1, ""))[0]:
                    aa_iv[key] = (x, k[1] + " interval95 [{:.3f}-{:.3f}]".format(iv["lo"], iv["hi"]))
    rows = []
    for k in order:
        ent = {"row": k[1], "link": k[0], "role": role[k], "metrics": {}}
        for m in metrics:
            (bv, bres), (pv, pres) = sides[k + (m["key"],)]
            if not bv and not pv:
                continue
            tk = (k[0], proto[k], m["key"])
            a, ai = (aa.get(tk), aa_iv.get(tk)) if role[k] == "target" else (None, None)
            ent["metrics"][m["key"]] = _metric_entry(m, bv, bres, pv, pres, a, ai)
        rows.append(ent)
    # Controls that moved make the targeted findings of that metric on
    # their link unconfirmed.
    labels = {m["key"]: m for m in metrics}
    moved, ctl_noise = {}, []
    for ent in rows:
        if ent["role"] != "control":
            continue
        for key, e in ent["metrics"].items():
            s = _short(ent["row"], ent["link"], len(links), labels[key], e)
            if e["judgement"] in ("better", "worse"):
                moved.setdefault((ent["link"], key), []).append(s)
            elif e["judgement"] == "noise":
                ctl_noise.append(s)
    tgt = {"better": [], "worse": [], "unconfirmed": [], "same": 0, "noise": 0, "n/a": 0,
           "context": 0}
    brief = {"better": {}, "worse": {}, "unconfirmed": {}}
    regressions = []
    for ent in rows:
        if ent["role"] != "target":
            continue
        name = ent["row"] if len(links) == 1 else "{} ({})".format(ent["row"], ent["link"])
        for key, e in ent["metrics"].items():
            m = labels[key]
            s = _short(ent["row"], ent["link"], len(links), m, e)
            if e["judgement"] in ("better", "worse") and (ent["link"], key) in moved:
                e["judgement"] = "unconfirmed"
                e["note"] = "control moved: " + "; ".join(moved[(ent["link"], key)])
            j = e["judgement"]
            if j in brief:
                tgt[j].append("{} [{}{}]".format(
                    s, m["cls"], ", was " + e["judged"] if j == "unconfirmed" else ""))
                brief[j].setdefault(name, []).append(
                    _brief(m, e) + (" was " + e["judged"] if j == "unconfirmed" else ""))
            else:
                tgt[j] += 1
            if e.get("judged") == "worse" and m["cls"] == "deterministic":
                regressions.append("worse: " + s)
    for v in moved.values():
        regressions += ["control moved: " + s for s in v]
    ctl_rows = sorted({e["row"] for e in rows if e["role"] == "control"})
    state = ("n/a" if variants != ["baseline", "patched"] else "moved" if moved
             else "noisy" if ctl_noise else "steady" if ctl_rows else "none")
    if variants != ["baseline", "patched"]:
        text = "A/A run ({} only): no A/B verdict".format("/".join(variants))
    else:
        def rowwise(j):
            return "; ".join("{} ({})".format(r, ", ".join(x))
                             for r, x in brief[j].items()) or "none"
        text = "targeted rows better: {} | worse: {}".format(
            rowwise("better"), rowwise("worse"))
        if brief["unconfirmed"]:
            text += " | unconfirmed: " + rowwise("unconfirmed")
        text += " | {} same, {} noise".format(tgt["same"], tgt["noise"])
        used = {}
        for ent in rows:
            for e in ent["metrics"].values():
                if e.get("rule") and ent["role"] == "target":
                    used[e["rule"]] = used.get(e["rule"], 0) + 1
        if used:
            text += " | noisy metrics judged by " + ", ".join(
                "{} ({})".format(r, n) for r, n in sorted(used.items()))
        if state == "moved":
            text += " | control moved: " + "; ".join(
                s for v in moved.values() for s in v)
        elif state == "none":
            text += " | no control rows: nothing judges the rig"
        else:
            text += " | controls {} ({}){}".format(
                state, ", ".join(ctl_rows),
                ": none moved, {} metric(s) noise".format(len(ctl_noise))
                if ctl_noise else ": none moved")
    return {
        "format": VERDICT_FORMAT,
        "run": {"git_describe": run_meta.get("git_describe"),
                "started_utc": run_meta.get("started_utc"),
                "command": run_meta.get("command"),
                "icount": icount or None, "links": links,
                "variants": variants,
                "pairs": max((r["pair"] for r in runs), default=0)},
        "controls": {"patterns": list(controls), "rows": ctl_rows,
                     "state": state,
                     "moved": [s for v in moved.values() for s in v],
                     "noise": ctl_noise},
        "rules": RULES,
        "rows": rows,
        "summary": {"targeted": tgt, "controls": state,
                    "regressions": regressions, "text": text},
    }


def _round(x):
    """Floats to 6 significant digits, for a readable verdict.json."""
    if isinstance(x, float):
        return float("{:.6g}".format(x))
    if isinstance(x, dict):
        return {k: _round(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_round(v) for v in x]
    return x


def verdict_table(v, md):
    """Rows x metrics: judgement and change, as text or markdown."""
    keys = [m["key"] for m in METRICS
            if any(m["key"] in e["metrics"] for e in v["rows"])]
    labels = {m["key"]: m["label"] for m in METRICS}
    hdr = ["row", "role"] + [labels[k] for k in keys]
    if len(v["run"]["links"]) > 1:
        hdr.insert(1, "link")
    lines = []
    for ent in v["rows"]:
        cells = [ent["row"], ent["role"]]
        if len(v["run"]["links"]) > 1:
            cells.insert(1, ent["link"])
        for k in keys:
            e = ent["metrics"].get(k)
            if not e:
                cells.append("-")
                continue
            c = e["judgement"]
            if k == "throughput" and e.get("pair_ratio"):
                c += " {:.2f}".format(e["ratio"])
            elif e.get("change_pct") is not None:
                c += " {:+.1f}%".format(e["change_pct"])
            if e.get("interval95"):
                c += " [{:+.1f}..{:+.1f}]".format((e["interval95"]["lo"] - 1) * 100,
                                                 (e["interval95"]["hi"] - 1) * 100)
            cells.append(c)
        lines.append(cells)
    if md:
        out = ["| " + " | ".join(hdr) + " |", "|" + "---|" * len(hdr)]
        return "\n".join(out + ["| " + " | ".join(c) + " |" for c in lines])
    widths = [max(len(h), *(len(c[i]) for c in lines)) for i, h in enumerate(hdr)]
    out = ["  ".join(h.ljust(w) for h, w in zip(hdr, widths))]
    return "\n".join(out + ["  ".join(c.ljust(w) for c, w in zip(cells, widths))
                            for cells in lines])


def copy_flags(d):
    """The guests' string-copy CPU flags (erms, fsrm, rep_good) as the
    guest init recorded them per boot, one entry per distinct set."""
    seen = []
    for f in sorted(glob.glob(os.path.join(d, "boot-*", "*", "cpu-copy-flags.txt"))):
        try:
            with open(f) as fh:
                v = " ".join(fh.read().split()) or "none"
        except OSError:
            continue
        if v not in seen:
            seen.append(v)
    return seen


# --pairs auto watches these noisy metrics of the targeted rows
AUTO_METRICS = ("throughput", "snd_us_per_kb", "rcv_us_per_kb")


def ci_status(v, target):
    """bench --pairs auto: are the 95 % intervals of the watched metrics
    (AUTO_METRICS) on every targeted row within +-target %?  (ok, state
    as a dict with a one-line "text")."""
    widest, missing = None, []
    for ent in v["rows"]:
        if ent["role"] != "target":
            continue
        for k in AUTO_METRICS:
            e = ent["metrics"].get(k)
            if not e:
                continue
            iv = e.get("interval95")
            if not iv:
                missing.append("{} {}".format(ent["row"], k))
                continue
            hw = (iv["hi"] - iv["lo"]) / 2 * 100
            if widest is None or hw > widest["half_width_pct"]:
                widest = {"row": ent["row"], "metric": k,
                          "half_width_pct": round(hw, 2),
                          "interval": [round(iv["lo"], 4), round(iv["hi"], 4)]}
    ok = not missing and widest is not None and widest["half_width_pct"] <= target
    if missing:
        text = "no interval yet for " + ", ".join(missing)
    elif widest is None:
        text = "no watched metric ({}) on a targeted row".format(", ".join(AUTO_METRICS))
    else:
        text = "widest 95 % interval +-{} % ({} {})".format(
            widest["half_width_pct"], widest["row"], widest["metric"])
    return ok, {"ok": ok, "target_ci_pct": target, "widest": widest,
                "missing": missing, "text": text}


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir")
    ap.add_argument("--build-seconds", type=int)
    ap.add_argument("--total-seconds", type=int)
    ap.add_argument("--icount", default="",
                    help="QEMU -icount spec the guests ran with, if any")
    ap.add_argument("--controls", metavar="GLOB[,GLOB...]",
                    help="control rows (rows the change does not target;"
                         " default: meta.json's, else "
                         + ",".join(DEFAULT_CONTROLS) + "; '' for none)")
    ap.add_argument("--fail-on-regression", action="store_true",
                    help="exit 1 if a targeted row is worse on a deterministic"
                         " metric or a control row moved (printed on stderr)")
    ap.add_argument("--no-plot", action="store_true", help="skip gnuplot")
    ap.add_argument("--ci-status", type=float, metavar="PCT",
                    help="bench --pairs auto: print whether the 95 %% intervals"
                         " of throughput and us/KB on every targeted row are"
                         " within +-PCT %% (JSON); exit 0 if so, 1 if not;"
                         " writes nothing")
    a = ap.parse_args()
    # (exit 2, not 1: 1 is --fail-on-regression's verdict)
    try:
        runs = load(os.path.join(a.dir, "runs.jsonl"))
    except (OSError, ValueError) as e:
        print("report.py: cannot read runs: {}".format(e), file=sys.stderr)
        sys.exit(2)
    if not runs:
        print("report.py: no runs in " + a.dir, file=sys.stderr)
        sys.exit(2)
    run_meta = load_meta(a.dir)
    if a.ci_status is not None:
        ctl = run_meta.get("controls")
        ctl = list(DEFAULT_CONTROLS) if ctl is None else ctl
        ok, st = ci_status(verdict(runs, run_meta, ctl, run_meta.get("icount") or ""),
                           a.ci_status)
        print(json.dumps(st))
        sys.exit(0 if ok else 1)
    rows = summarise(runs, a.dir)
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
    if any(r.get("cpu") for r in runs):
        head += ("; both ends' CPU from /proc/stat over the throughput pass (utilisation"
                 " of all vCPUs, busy us per KB sent/received){}").format(
            ": under TCG a vCPU's busy time is its share of QEMU's emulation,"
            " context beside the instruction counts" if run_meta.get("accel", "tcg") == "tcg"
            else ": under KVM, the figure")
    if not a.icount and any((r.get("demand") or {}).get("source") == "insn" for r in runs):
        head += ("; no -icount, {} vCPUs on one TCG thread: instr/KB counted by the"
                 " skbt-insn plugin (the guests' whole work per KB, including timer"
                 " ticks, whose number follows the transfer's wall-clock time: compare"
                 " the kernels of this run, not with runs under -icount); esp_output ns"
                 " are wall-clock").format(run_meta.get("smp", "?"))
    if a.icount:
        sources = {(r.get("demand") or {}).get("source") for r in runs} - {None}
        per_kb = ("each guest's instructions over the transfer (skbt-insn plugin)"
                  if sources == {"insn"} else
                  "whole-guest busy time (clock minus idle, /proc/timer_list)"
                  if sources <= {"timer_list"} else
                  "sources " + ", ".join(sorted(sources)))
        head += ("; guests under QEMU -icount {}: esp_output ns are guest"
                 " instructions x 2^shift, instr/KB count {}; Mbit/s mix virtual and real time"
                 " and are not comparable with other runs").format(a.icount, per_kb)
        if run_meta.get("guest_append"):
            head += "; guests booted with {}".format(run_meta["guest_append"])
        flags = copy_flags(a.dir)
        if flags:
            head += ("; guest string-copy CPU flags: {} (memcpy() is rep"
                     " movsb with ERMS on 6.1, with FSRM on 6.12, else a"
                     " loop; -icount counts each rep iteration as one"
                     " instruction, so a rep movsb copy counts once per"
                     " byte)").format(" | ".join(flags))
    if a.controls is None:
        a.controls = run_meta.get("controls")
    if a.controls is None:
        controls = list(DEFAULT_CONTROLS)
    elif isinstance(a.controls, list):
        controls = a.controls
    else:
        controls = [c for c in a.controls.split(",") if c]
    v = verdict(runs, run_meta, controls, a.icount)
    with open(os.path.join(a.dir, "verdict.json"), "w") as f:
        json.dump(_round(v), f, indent=1)
        f.write("\n")
    vhead = ("verdict (verdict.json; controls: {}): ".format(
        ",".join(controls) or "none") + v["summary"]["text"])
    mh = meta_header(run_meta)
    with open(os.path.join(a.dir, "summary.md"), "w") as f:
        f.write("".join("- " + x + "\n" for x in mh) + ("\n" if mh else ""))
        f.write(head + "\n\n" + table(rows, True) + "\n\n![plot](plot.png)\n")
        f.write("\n" + vhead + "\n\n" + verdict_table(v, True) + "\n")
    # bench --profile: the perf diffs and top symbols (profile/)
    prof = sorted(glob.glob(os.path.join(a.dir, "profile", "*.diff.txt")))
    if prof:
        plines = ["profiles (perf, sender, cpu-clock): " + ", ".join(
            os.path.relpath(f, a.dir) for f in prof) + " (perf diff baseline"
            " vs patched); top kernel symbols per boot: profile/*.top.txt"]
        with open(os.path.join(a.dir, "summary.md"), "a") as f:
            f.write("\n" + "".join("- [{0}]({0})\n".format(os.path.relpath(x, a.dir))
                                   for x in prof))
        vhead += "\n" + plines[0]
    if not a.no_plot:
        plot(rows, a.dir)
    for x in mh:
        print(x)
    print(head)
    print(table(rows, False))
    print("\n" + verdict_table(v, False))
    print(vhead)
    print("\nfull results: " + a.dir)
    if a.fail_on_regression and v["summary"]["regressions"]:
        for x in v["summary"]["regressions"]:
            print("regression: " + x, file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
