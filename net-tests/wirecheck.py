#!/usr/bin/env python3
"""Check a capture of the guest link (QEMU filter-dump, pcap, Ethernet).

  wirecheck.py PCAP --after-ike-only-esp
      every IPv4/IPv6 packet from the first IKE packet on is ESP (proto 50,
      or in UDP 4500 behind a non-zero SPI) or IKE (UDP 500/4500).  Allowed besides: ARP, ICMPv6 neighbour
      discovery and link-scope multicast membership reports (IPv6 MLD to
      ff02::/16, IPv4 IGMP to 224.0.0.0/24): the SA's traffic selectors
      never cover them, and the kernel sends them on its own timers
  wirecheck.py --selftest               check the classifier on built frames
  wirecheck.py PCAP --absent MARKER     MARKER never appears in any frame
  wirecheck.py PCAP --present MARKER    MARKER appears in some frame
  wirecheck.py PCAP --esp-min-len ADDR=N
      there are ESP packets from ADDR (IPv4 or IPv6 source), and every
      one is at least N bytes long (IP header included: IPv4 total
      length, IPv6 40 + payload length): TFC padding seen on the wire
  wirecheck.py PCAP --only-esp
      every IPv4/IPv6 packet of the capture is ESP or IKE (the allowed
      kinds above besides), and there is ESP: SAs keyed by hand, no IKE
  wirecheck.py PCAP --only-wireguard
      every IPv4/IPv6 packet of the capture is a WireGuard message (UDP
      to or from port 51820, type 1-4, three reserved zero bytes; the
      allowed kinds above besides), and there is one: the WireGuard rows
  wirecheck.py PCAP --esp-in-udp ADDR
      ADDR's ESP is UDP-encapsulated (RFC 3948: UDP 4500, a non-zero SPI
      where IKE has its zero marker): some such packets, no bare ESP
  wirecheck.py PCAP --esp-exthdr ADDR
      there are ESP packets from the IPv6 address ADDR, and each has an
      extension header (hop-by-hop, routing, destination options) in
      front of its ESP header

  --vnet-hdr auto|N   bytes of virtio-net header before each Ethernet
      frame (default auto).  QEMU 7.2's filter-dump on a tap netdev with
      vnet_hdr=on writes the 12-byte virtio_net_hdr_mrg_rxbuf in front of
      every frame (later QEMUs strip it); auto picks, over the capture,
      the offset (0, 10 or 12) at which the frames carry the ethertypes
      of the guests' traffic (IPv4, IPv6, ARP) and says which.

Exit 0 when the check holds, 1 when it does not (printing every reason
that holds, one a line), 2 on bad input: a file that cannot be read, is
not a classic Ethernet pcap, or is truncated (a record cut short), never
judged.  Host-side only: reads a file, never a live interface.
"""
import argparse
import ipaddress
import struct
import sys

ND = range(133, 138)
MLD = (130, 131, 132, 143)


class BadCapture(Exception):
    """The file is not a complete Ethernet pcap (exit 2, never a verdict)."""


MAX_FRAME = 1 << 18


def frames(path):
    """Every frame of a classic pcap file; BadCapture if it is truncated,
    not a pcap, or not Ethernet (a partial capture must not be judged)."""
    with open(path, "rb") as f:
        hdr = f.read(24)
        if len(hdr) < 24:
            raise BadCapture("{}: {} bytes, not a pcap file header".format(path, len(hdr)))
        magic = struct.unpack("<I", hdr[:4])[0]
        if magic in (0xa1b2c3d4, 0xa1b23c4d):
            end = "<"
        elif magic in (0xd4c3b2a1, 0x4d3cb2a1):
            end = ">"
        else:
            raise BadCapture("{}: bad pcap magic {:#x}".format(path, magic))
        linktype = struct.unpack(end + "I", hdr[20:24])[0] & 0xffff
        if linktype != 1:
            raise BadCapture("{}: link type {}, not Ethernet".format(path, linktype))
        n = 0
        while True:
            rec = f.read(16)
            if not rec:
                return
            n += 1
            if len(rec) < 16:
                raise BadCapture("{}: truncated header of record {}".format(path, n))
            _, _, incl, _ = struct.unpack(end + "IIII", rec)
            if incl > MAX_FRAME:
                raise BadCapture("{}: record {} claims {} bytes".format(path, n, incl))
            data = f.read(incl)
            if len(data) < incl:
                raise BadCapture("{}: record {} truncated ({} of {} bytes)".format(
                    path, n, len(data), incl))
            yield data


ETHERTYPES = (b"\x08\x00", b"\x86\xdd", b"\x08\x06")


def vnet_offset(frs):
    """The header length in front of the Ethernet frames (0, 10 or 12):
    the offset at which most frames carry IPv4/IPv6/ARP ethertypes."""
    best, score = 0, -1
    for off in (0, 12, 10):
        n = sum(1 for f in frs[:200] if f[off + 12:off + 14] in ETHERTYPES)
        if n > score:
            best, score = off, n
    return best


EXTHDRS = (0, 43, 60)    # IPv6 hop-by-hop, routing, destination options


def ip_parse(fr):
    """(source address, IP length, protocol, L4 bytes, extension headers
    walked) of an IPv4/IPv6 frame, or None.  IPv6 extension headers are
    skipped to the protocol behind them."""
    if len(fr) < 14:
        return None
    etype, p = struct.unpack("!H", fr[12:14])[0], fr[14:]
    if etype == 0x0800 and len(p) >= 20:
        return (str(ipaddress.ip_address(p[12:16])), struct.unpack("!H", p[2:4])[0],
                p[9], p[(p[0] & 0xf) * 4:], 0)
    if etype == 0x86dd and len(p) >= 40:
        proto, l4, n = p[6], p[40:], 0
        while proto in EXTHDRS and len(l4) >= 2:
            proto, l4, n = l4[0], l4[(l4[1] + 1) * 8:], n + 1
        return (str(ipaddress.ip_address(p[8:24])), 40 + struct.unpack("!H", p[4:6])[0],
                proto, l4, n)
    return None


WG_PORT = 51820   # the WireGuard rows' listen port (net-tests/lib/func.sh)


def classify(fr):
    """Return (kind, detail): arp, nd, mld, igmp, ike, esp, wg, other, nonip."""
    if len(fr) < 14:
        return "nonip", "short"
    etype = struct.unpack("!H", fr[12:14])[0]
    if etype == 0x0806:
        return "arp", ""
    ip = ip_parse(fr)
    if ip is None:
        return "nonip", hex(etype)
    _, _, proto, l4, _ = ip
    p = fr[14:]
    if etype == 0x0800 and proto == 2 and p[16:19] == bytes((224, 0, 0)):
        return "igmp", ""
    if etype == 0x86dd:
        if proto == 58 and l4 and l4[0] in ND:
            return "nd", ""
        if proto == 58 and l4 and l4[0] in MLD and p[24:26] == b"\xff\x02":
            return "mld", ""
    if proto == 50:
        return "esp", ""
    if proto == 17 and len(l4) >= 4:
        sport, dport = struct.unpack("!HH", l4[:4])
        if 4500 in (sport, dport) and len(l4) >= 12 and l4[8:12] != b"\0\0\0\0":
            return "esp", "in UDP"    # RFC 3948: a non-zero SPI, not IKE's marker
        if {sport, dport} & {500, 4500}:
            return "ike", ""
        if WG_PORT in (sport, dport) and len(l4) >= 12 and l4[8] in (1, 2, 3, 4) \
                and l4[9:12] == b"\0\0\0":
            return "wg", ""      # a WireGuard message: type 1-4, 3 reserved zero bytes
        return "other", "udp {}->{}".format(sport, dport)
    return "other", "ip proto {}".format(proto)


def esp_info(fr):
    """(source, IP length, 'bare' or 'udp', extension headers) of an ESP
    frame (bare, or in UDP 4500 with a non-zero SPI), else None."""
    ip = ip_parse(fr)
    if ip is None:
        return None
    src, ln, proto, l4, n = ip
    if proto == 50:
        return src, ln, "bare", n
    if proto == 17 and len(l4) >= 12 and 4500 in struct.unpack("!HH", l4[:4]) \
            and l4[8:12] != b"\0\0\0\0":
        return src, ln, "udp", n
    return None


def esp_source_len(fr):
    """(source address as text, IP length) of a bare ESP frame, else None."""
    e = esp_info(fr)
    return (e[0], e[1]) if e and e[2] == "bare" else None


def esp_min_len(fr, addr, n):
    """Lines to print and the verdict (True: holds) of --esp-min-len."""
    lens = [x[1] for x in map(esp_source_len, fr) if x and x[0] == addr]
    out = ["ESP packets from {}: {}, lengths {}-{}".format(
        addr, len(lens), min(lens, default=0), max(lens, default=0))]
    short = [x for x in lens if x < n]
    if not lens:
        out.append("no ESP packet from {}".format(addr))
    if short:
        out.append("{} of {} ESP packets from {} shorter than {} bytes, first {}".format(
            len(short), len(lens), addr, n, short[0]))
    return out, bool(lens) and not short


def esp_in_udp(fr, addr):
    """Lines and verdict of --esp-in-udp."""
    kinds = [x[2] for x in map(esp_info, fr) if x and x[0] == addr]
    udp, bare = kinds.count("udp"), kinds.count("bare")
    out = ["ESP packets from {}: {} in UDP 4500, {} bare".format(addr, udp, bare)]
    if not udp:
        out.append("no UDP-encapsulated ESP packet from {}".format(addr))
    if bare:
        out.append("{} bare ESP packets from {} (not UDP-encapsulated)".format(bare, addr))
    return out, udp > 0 and not bare


def esp_exthdr(fr, addr):
    """Lines and verdict of --esp-exthdr."""
    ns = [x[3] for x in map(esp_info, fr) if x and x[0] == addr]
    without = sum(1 for n in ns if not n)
    out = ["ESP packets from {}: {}, {} behind an extension header".format(
        addr, len(ns), len(ns) - without)]
    if not ns:
        out.append("no ESP packet from {}".format(addr))
    if without:
        out.append("{} of {} ESP packets from {} without an extension header".format(
            without, len(ns), addr))
    return out, bool(ns) and not without


def selftest():
    """The classifier on hand-built frames; returns the number of misses."""
    eth4, eth6 = b"\0" * 12 + b"\x08\x00", b"\0" * 12 + b"\x86\xdd"

    def v4(proto, dst, l4=b""):
        return eth4 + bytes((0x45, 0, 0, 0, 0, 0, 0, 0, 1, proto, 0, 0)) + \
            bytes((10, 0, 0, 1)) + bytes(dst) + l4

    def v6(nh, dst, l4=b""):
        return eth6 + bytes((0x60, 0, 0, 0, 0, 0, nh, 1)) + b"\xfe\x80" + \
            b"\0" * 14 + dst + l4

    ff02_16 = b"\xff\x02" + b"\0" * 13 + b"\x16"
    fd00_2 = b"\xfd" + b"\0" * 14 + b"\x02"
    hbh = bytes((58, 0, 5, 2, 0, 0, 1, 0))   # router alert, then ICMPv6
    udp = struct.pack("!HH", 500, 500)
    cases = [
        (v4(50, (10, 0, 0, 2)), "esp"),
        (v4(17, (10, 0, 0, 2), udp), "ike"),
        (v4(17, (10, 0, 0, 2), struct.pack("!HH", 4500, 4500)), "ike"),
        (v4(17, (10, 0, 0, 2), struct.pack("!HHHHI", 4500, 4500, 0, 0, 0)), "ike"),
        (v4(17, (10, 0, 0, 2), struct.pack("!HHHHI", 4500, 4500, 0, 0, 0x1234)), "esp"),
        (v4(6, (10, 0, 0, 2)), "other"),
        (v4(17, (10, 0, 0, 2), struct.pack("!HH", 5201, 5201)), "other"),
        (v4(17, (10, 0, 0, 2), struct.pack("!HHHHI", 51820, 51820, 0, 0, 0x04000000)), "wg"),
        (v4(17, (10, 0, 0, 2), struct.pack("!HHHHI", 51820, 51820, 0, 0, 0x05000000)), "other"),
        (v4(17, (10, 0, 0, 2), struct.pack("!HHHHI", 51820, 51820, 0, 0, 0x04000001)), "other"),
        (v6(17, fd00_2, struct.pack("!HHHHI", 40000, 51820, 0, 0, 0x01000000)), "wg"),
        (v4(2, (224, 0, 0, 22)), "igmp"),
        (v4(2, (10, 0, 0, 2)), "other"),
        (v6(0, ff02_16, hbh + bytes((143, 0))), "mld"),
        (v6(0, ff02_16, hbh + bytes((131, 0))), "mld"),
        (v6(0, fd00_2, hbh + bytes((143, 0))), "other"),
        (v6(0, ff02_16, bytes((6, 0, 0, 0, 0, 0, 0, 0))), "other"),
        (v6(58, fd00_2, bytes((135, 0))), "nd"),
        (v6(58, fd00_2, bytes((128, 0))), "other"),
        (v6(50, fd00_2), "esp"),
        (v6(17, fd00_2, udp), "ike"),
        (v6(60, fd00_2, bytes((50, 0, 1, 4, 0, 0, 0, 0))), "esp"),
        (v6(0, fd00_2, bytes((43, 0, 1, 4, 0, 0, 0, 0, 6, 0, 1, 4, 0, 0, 0, 0))), "other"),
        (eth4[:12] + b"\x08\x06" + b"\0" * 28, "arp"),
    ]
    # --esp-min-len on built frames: (frames, addr, n, verdict)
    def esp4(src, ln):
        return eth4 + bytes((0x45, 0)) + struct.pack("!H", ln) + bytes((0, 0, 0, 0, 64, 50, 0, 0)) + \
            bytes(src) + bytes((10, 0, 0, 2))

    def esp6(ln):
        return eth6 + bytes((0x60, 0, 0, 0)) + struct.pack("!H", ln - 40) + bytes((50, 64)) + \
            b"\xfd" + b"\0" * 14 + b"\x01" + fd00_2
    lcases = [
        ([esp4((10, 0, 0, 1), 1056), esp4((10, 0, 0, 2), 184)], "10.0.0.1", 1000, True),
        ([esp4((10, 0, 0, 1), 1056), esp4((10, 0, 0, 1), 184)], "10.0.0.1", 1000, False),
        ([esp4((10, 0, 0, 2), 1056)], "10.0.0.1", 1000, False),
        ([esp6(1076)], "fd00::1", 1000, True),
        ([esp6(224)], "fd00::1", 1000, False),
    ]
    # --esp-in-udp and --esp-exthdr on built frames: (fn, frames, addr, verdict)
    natt = struct.pack("!HHHH", 4500, 4500, 0, 0)

    def esp4u(spi):
        return eth4 + bytes((0x45, 0, 0, 60, 0, 0, 0, 0, 64, 17, 0, 0)) + \
            bytes((10, 0, 0, 1, 10, 0, 0, 2)) + natt + struct.pack("!I", spi)

    def esp6x(nh):   # nh: the extension header in front of ESP, None: none
        ext = b"" if nh is None else bytes((50, 0, 1, 4, 0, 0, 0, 0))
        return eth6 + bytes((0x60, 0, 0, 0)) + struct.pack("!H", 100) + \
            bytes((50 if nh is None else nh, 64)) + b"\xfd" + b"\0" * 14 + b"\x01" + fd00_2 + ext
    ecases = [
        (esp_in_udp, [esp4u(0x1234)], "10.0.0.1", True),
        (esp_in_udp, [esp4u(0x1234), esp4((10, 0, 0, 1), 184)], "10.0.0.1", False),
        (esp_in_udp, [esp4u(0)], "10.0.0.1", False),            # IKE marker: not ESP
        (esp_exthdr, [esp6x(0), esp6x(60)], "fd00::1", True),
        (esp_exthdr, [esp6x(0), esp6x(None)], "fd00::1", False),
        (esp_exthdr, [esp4u(0x1234)], "fd00::1", False),
    ]
    miss = 0
    # KTAP, as net-tests/lib/tap.sh's ktap_line writes it
    print("KTAP version 1")
    print("1..{}".format(len(cases) + 3 + len(lcases) + len(ecases)))
    for i, (frame, want) in enumerate(cases):
        got = classify(frame)[0]
        ok = got == want
        miss += not ok
        print("{}ok {} classify -> {}{}".format(
            "" if ok else "not ", i + 1, got, "" if ok else " (want " + want + ")"))
    # vnet header in front (filter-dump on a vnet_hdr tap, QEMU 7.2)
    frs = [f for f, _ in cases]
    for n, off in enumerate((0, 12, 10), len(cases) + 1):
        got = vnet_offset([b"\1" * off + f for f in frs])
        miss += got != off
        print("{}ok {} vnet_offset of {}-byte header -> {}".format(
            "" if got == off else "not ", n, off, got))
    for n, (frs, addr, ln, want) in enumerate(lcases, len(cases) + 4):
        got = esp_min_len(frs, addr, ln)[1]
        miss += got != want
        print("{}ok {} esp_min_len {} {} -> {}".format(
            "" if got == want else "not ", n, addr, ln, got))
    for n, (fn, frs, addr, want) in enumerate(ecases, len(cases) + 4 + len(lcases)):
        got = fn(frs, addr)[1]
        miss += got != want
        print("{}ok {} {} {} -> {}".format(
            "" if got == want else "not ", n, fn.__name__, addr, got))
    return miss


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("pcap", nargs="?")
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--selftest", action="store_true")
    g.add_argument("--after-ike-only-esp", action="store_true")
    g.add_argument("--absent")
    g.add_argument("--present")
    g.add_argument("--esp-min-len", metavar="ADDR=N")
    g.add_argument("--only-esp", action="store_true")
    g.add_argument("--only-wireguard", action="store_true")
    g.add_argument("--esp-in-udp", metavar="ADDR")
    g.add_argument("--esp-exthdr", metavar="ADDR")
    ap.add_argument("--vnet-hdr", default="auto")
    a = ap.parse_args(argv)
    if a.selftest:
        return 1 if selftest() else 0
    if a.pcap is None:
        ap.error("a pcap file is needed")
    if a.vnet_hdr != "auto" and not a.vnet_hdr.isdigit():
        ap.error("--vnet-hdr takes auto or a number of bytes")
    try:
        fr = list(frames(a.pcap))
    except (BadCapture, OSError) as e:
        print("wirecheck: bad capture, no verdict: {}".format(e), file=sys.stderr)
        return 2
    off = vnet_offset(fr) if a.vnet_hdr == "auto" else int(a.vnet_hdr)
    if off:
        print("{}-byte virtio-net header before each frame ({}): stripped".format(
            off, "detected" if a.vnet_hdr == "auto" else "--vnet-hdr"))
        fr = [f[off:] for f in fr]
    if a.after_ike_only_esp or a.only_esp:
        seen_ike = a.only_esp
        where = "in the capture" if a.only_esp else "after first IKE"
        counts, bad = {}, []
        for i, f in enumerate(fr):
            kind, det = classify(f)
            seen_ike = seen_ike or kind == "ike"
            if not seen_ike:
                continue
            counts[kind] = counts.get(kind, 0) + 1
            if kind == "other":
                bad.append("frame {}: {}".format(i + 1, det))
        print("frames {} {}: {}".format(len(fr), where, counts))
        # Every reason that holds is printed (callers match the one they
        # expect: a control run in the clear must fail for its cleartext).
        fails = 0
        if not seen_ike:
            print("no IKE packet in the capture")
            fails += 1
        elif not counts.get("esp"):
            print("no ESP packet {}".format("in the capture" if a.only_esp else "after IKE"))
            fails += 1
        if bad:
            print("{} cleartext IP packets {}, first: {}".format(
                len(bad), "in the capture" if a.only_esp else "after IKE", "; ".join(bad[:5])))
            fails += 1
        return 1 if fails else 0
    if a.only_wireguard:
        counts, bad = {}, []
        for i, f in enumerate(fr):
            kind, det = classify(f)
            counts[kind] = counts.get(kind, 0) + 1
            if kind in ("other", "esp", "ike"):
                bad.append("frame {}: {} {}".format(i + 1, kind, det).rstrip())
        print("frames {} in the capture: {}".format(len(fr), counts))
        fails = 0
        if not counts.get("wg"):
            print("no WireGuard packet in the capture")
            fails += 1
        if bad:
            print("{} IP packets not WireGuard in the capture, first: {}".format(
                len(bad), "; ".join(bad[:5])))
            fails += 1
        return 1 if fails else 0
    for addr, fn in ((a.esp_in_udp, esp_in_udp), (a.esp_exthdr, esp_exthdr)):
        if addr is not None:
            try:
                ipaddress.ip_address(addr)
            except ValueError:
                print("wirecheck: '{}' is not an IP address".format(addr), file=sys.stderr)
                return 2
            out, ok = fn(fr, addr)
            print("\n".join(out))
            return 0 if ok else 1
    if a.esp_min_len is not None:
        addr, _, n = a.esp_min_len.rpartition("=")
        if not addr or not n.isdigit():
            print("wirecheck: --esp-min-len takes ADDR=N", file=sys.stderr)
            return 2
        out, ok = esp_min_len(fr, addr, int(n))
        print("\n".join(out))
        return 0 if ok else 1
    marker = (a.absent or a.present).encode()
    hits = [i + 1 for i, f in enumerate(fr) if marker in f]
    print("frames {}, marker {!r} in {} of them".format(len(fr), marker.decode(), len(hits)))
    if a.absent is not None and hits:
        print("marker seen in cleartext, first in frame {}".format(hits[0]))
        return 1
    if a.present is not None and not hits:
        print("marker not seen in any frame")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
