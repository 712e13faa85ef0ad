"""Speed benchmark: ``mcastlab wire`` and our dissector vs tshark vs Scapy, in one invocation.

    sudo .venv/bin/python -m captures.bench                  # capture real traffic, tile to 1 M
    .venv/bin/python -m captures.bench --pcap big.pcap       # an existing capture

Without ``--pcap`` it records a real Cyclone DDS capture first (ddsperf publishers and
subscribers in namespaces on a Linux bridge, unicast and multicast: needs root), then
tiles it (timestamps shifted) until the file holds at least ``--min-packets`` frames.
Each tool decodes the same file: the dissector and tshark all of it, Scapy a subset.
Prints packets/s of each and the ratios. The headline row is end to end: the whole
``mcastlab wire FILE --json`` process (interpreter start-up, imports, C pass, every wire
table written) against the whole ``tshark`` process, each with its peak RSS.
"""

from __future__ import annotations

import argparse
import json
import os
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

    parts = []
    for multicast in (True, False):
        with BridgeLab(hosts=4, snooping=False) as lab:
            d = out.parent / f"rec-{'mc' if multicast else 'uc'}"
            cap = capture.start(lab, {"h1": (None, lab.ports[0])}, d, 0, 0, 0)
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


GNU_TIME = "/usr/bin/time"


def run_process(argv: list[str]) -> tuple[float, int, bytes]:
    """Wall time, peak RSS (bytes) and stdout of one whole child process.

    The peak RSS comes from GNU time when present: a child's own ``ru_maxrss`` also holds
    the resident size of the process that forked it (Linux carries the old address
    space's high-water mark across exec), and this benchmark holds hundreds of MB."""
    with tempfile.TemporaryDirectory() as d:
        rss_file = Path(d) / "rss"
        wrap = ([GNU_TIME, "-f", "%M", "-o", str(rss_file)]
                if os.access(GNU_TIME, os.X_OK) else [])
        with (Path(d) / "err").open("w+b") as err:
            t = time.perf_counter()
            p = subprocess.Popen([*wrap, *argv], stdout=subprocess.PIPE, stderr=err)
            assert p.stdout is not None
            out = p.stdout.read()
            _, status, usage = os.wait4(p.pid, 0)
            dt = time.perf_counter() - t
            p.stdout.close()
            p.returncode = os.waitstatus_to_exitcode(status)
            if p.returncode != 0:
                err.seek(0)
                raise SystemExit(f"bench: {argv[0]} failed ({p.returncode}): "
                                 f"{err.read().decode(errors='replace')[-500:]}")
        rss = (int(rss_file.read_text().split()[-1]) if wrap else usage.ru_maxrss) * 1024
    return dt, rss, out


def mcastlab_argv() -> list[str]:
    exe = Path(sys.executable).with_name("mcastlab")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "mcastlab.cli"]


def time_e2e(pcap: Path, out_dir: Path) -> tuple[float, int, dict]:
    """The whole ``mcastlab wire PCAP --json`` process: wall time, peak RSS, its summary."""
    dt, rss, out = run_process([*mcastlab_argv(), "wire", str(pcap), "--json", "--out",
                                str(out_dir)])
    return dt, rss, json.loads(out)


def time_ours(pcap: Path) -> tuple[float, int, dict]:
    from captures.dissect import dissect

    t = time.perf_counter()
    d = dissect(pcap)
    dt = time.perf_counter() - t
    return dt, d.packets, {"rtps_submessages": sum(d.rtps_counts().values()),
                           "fragments": d.fragment_frames(), "bad": d.bad}


def time_fold(pcap: Path) -> float:
    """The C pass that the wire tables use (aggregate mode), in-process."""
    from captures.fold import fold

    t = time.perf_counter()
    fold({"bench": [pcap]})
    return time.perf_counter() - t


def time_wire(pcap: Path, out_dir: Path) -> float:
    from captures.wire import analyse_pcaps

    t = time.perf_counter()
    analyse_pcaps({"bench": [pcap]}, out_dir)
    return time.perf_counter() - t


def time_tshark(pcap: Path, limit: int | None) -> tuple[float, int, int]:
    """The whole tshark process: wall time, packets printed, peak RSS."""
    argv = ["tshark", "-n", "-r", str(pcap), "-T", "fields", "-e", "rtps.sm.id", "-e",
            "ip.flags.mf", "-e", "igmp.type", "-e", "pim.type"]
    if limit:
        argv += ["-c", str(limit)]
    dt, rss, out = run_process(argv)
    return dt, out.count(b"\n"), rss


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
    ap.add_argument("--e2e-runs", type=int, default=3,
                    help="whole-process runs of mcastlab wire (the last after tshark); best")
    ap.add_argument("--keep", type=Path,
                    help="keep the tiled capture here (e.g. /tmp/mcl-bench.pcap; not in git)")
    ap.add_argument("--json", type=Path, help="also write the figures here")
    args = ap.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="mcl-bench-"))
    try:
        src = args.pcap or record_traffic(work / "recorded.pcap")
        big = concat([src], args.keep or work / "bench.pcap", args.min_packets)
        size = big.stat().st_size
        # end to end: the file was just written (page cache warm for every tool); best of
        # the runs, one of them after tshark (the machine's load varies over minutes)
        e2e = [time_e2e(big, work / "e2e") for _ in range(max(1, args.e2e_runs - 1))]
        ours_dt, n, info = time_ours(big)
        ours_dt2, _, _ = time_ours(big)
        ours_dt = min(ours_dt, ours_dt2)
        fold_dt = time_fold(big)
        wire_dt = time_wire(big, work / "wire")
        ts_dt, ts_n, ts_rss = time_tshark(big, args.tshark_packets or None)
        e2e.append(time_e2e(big, work / "e2e"))
        e2e_dt = min(dt for dt, _, _ in e2e)
        e2e_rss = max(rss for _, rss, _ in e2e)
        n_e2e = e2e[-1][2]["packets"]
        sc_dt, sc_n = time_scapy(big, args.scapy_packets)
        res = {
            "packets": n, "file_mb": round(size / 1e6, 1), **info,
            "e2e_s": e2e_dt, "e2e_runs_s": [round(dt, 3) for dt, _, _ in e2e],
            "e2e_pps": n_e2e / e2e_dt, "e2e_peak_rss_mb": round(e2e_rss / 2**20, 1),
            "dissector_pps": n / ours_dt, "dissector_s": ours_dt,
            "fold_s": fold_dt, "fold_pps": n / fold_dt,
            "wire_tables_s": wire_dt, "wire_tables_pps": n / wire_dt,
            "tshark_packets": ts_n, "tshark_s": ts_dt, "tshark_pps": ts_n / ts_dt,
            "tshark_peak_rss_mb": round(ts_rss / 2**20, 1),
            "scapy_packets": sc_n, "scapy_s": sc_dt, "scapy_pps": sc_n / sc_dt,
        }
        res["e2e_vs_tshark"] = res["e2e_pps"] / res["tshark_pps"]
        res["speedup_vs_tshark"] = res["dissector_pps"] / res["tshark_pps"]
        res["speedup_vs_scapy"] = res["dissector_pps"] / res["scapy_pps"]
        met = res["e2e_pps"] >= 1e6 and res["e2e_vs_tshark"] >= 50
        print(f"pcap: {n} packets, {res['file_mb']} MB, {info['rtps_submessages']} RTPS "
              f"submessages, {info['fragments']} IP fragments")
        rows = [("mcastlab wire --json (process)", res["e2e_pps"], e2e_dt, n_e2e,
                 res["e2e_peak_rss_mb"]),
                ("tshark -T fields (process)", res["tshark_pps"], ts_dt, ts_n,
                 res["tshark_peak_rss_mb"]),
                ("core: C fold -> small tables", res["fold_pps"], fold_dt, n, None),
                ("core: C rows -> numpy", res["dissector_pps"], ours_dt, n, None),
                ("in-process analyse_pcaps", res["wire_tables_pps"], wire_dt, n, None),
                ("scapy with RTPS (subset)", res["scapy_pps"], sc_dt, sc_n, None)]
        for name, pps, dt, k, rss in rows:
            mem = f", peak RSS {rss:,.0f} MB" if rss is not None else ""
            print(f"{name:31s} {pps:12,.0f} packets/s  ({dt:.2f} s, {k} packets{mem})")
        runs = ", ".join(f"{x:.2f}" for x in res["e2e_runs_s"])
        print(f"end to end: mcastlab wire / tshark = {res['e2e_vs_tshark']:.0f}x (best of runs "
              f"{runs} s);  core rows / tshark = {res['speedup_vs_tshark']:.0f}x;  "
              f"core / scapy = {res['speedup_vs_scapy']:.0f}x")
        print(f"goal, end to end: >= 1,000,000 packets/s and >= 50x tshark: "
              f"{'met' if met else 'NOT met'}  (load average {os.getloadavg()[0]:.1f})")
        if args.json:
            args.json.write_text(json.dumps(res, indent=2) + "\n")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
