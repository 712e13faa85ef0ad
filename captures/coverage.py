"""How much of a run a capture covers.

With ``ring_files``, tcpdump overwrites its oldest file once the ring is full, so a long
run's capture keeps only its end, and every wire figure then describes that end. The
covered span is the first and last packet timestamp of the files that survived, set
against the run's span (agents started .. last agent ended, wall clock like pcap time):

>>> coverage(first=1199.0, last=1240.2, run_start=1000.0, run_end=1240.0)["text"]
'capture covers the last 41 s of 240 s'
>>> coverage(first=999.5, last=1240.0, run_start=1000.0, run_end=1240.0)["text"]
'capture covers the whole run (240 s)'

Pure Python, no root, no Mininet.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

# <point>.pcap, ring files <point>.pcapN, capture windows <point>.wK.pcap and the whole-run
# IGMP/PIM capture <point>.control.pcap (captures/windows.py).
RING_SUFFIX = re.compile(
    r"^(?P<point>.+?)(?:\.(?P<tag>w\d+|control))?\.pcap(?:ng)?(?P<ring>\d*)$")
# Classic pcap magics (as read little-endian) -> (byte order, timestamp fraction divisor).
PCAP_MAGICS = {0xA1B2C3D4: ("<", 1e6), 0xD4C3B2A1: (">", 1e6),
               0xA1B23C4D: ("<", 1e9), 0x4D3CB2A1: (">", 1e9)}


def discover_pcaps(pcap_dir: Path, control: bool = False) -> dict[str, list[Path]]:
    """Capture files grouped by capture point; tcpdump ring files (``x.pcap0``,
    ``x.pcap1``...) and capture windows (``x.w1.pcap``...) belong to point ``x`` and are
    read in ring order. ``control``: the whole-run IGMP/PIM captures (``x.control.pcap``)
    instead, which the traffic figures leave out."""
    points: dict[str, list[tuple[int, Path]]] = {}
    for p in sorted(pcap_dir.iterdir()):
        m = RING_SUFFIX.match(p.name)
        if not m or not p.is_file() or (m["tag"] == "control") != control:
            continue
        ring = int(m["ring"]) if m["ring"] else -1
        points.setdefault(m["point"], []).append((ring, p))
    return {k: [p for _, p in sorted(v, key=lambda t: (t[1].stat().st_mtime, t[0]))]
            for k, v in points.items()}


def pcap_span(path: Path) -> tuple[float, float, int] | None:
    """(first, last packet timestamp, packets) of a classic pcap file, walking record
    headers only; None for an empty file or another format (pcapng). A record cut short
    (tcpdump killed mid-write) ends the walk."""
    with open(path, "rb") as f:
        head = f.read(24)
        if len(head) < 24:
            return None
        magic = struct.unpack("<I", head[:4])[0]
        if magic not in PCAP_MAGICS:
            return None
        order, div = PCAP_MAGICS[magic]
        rec = struct.Struct(order + "IIII")
        first = last = None
        n = 0
        while True:
            h = f.read(16)
            if len(h) < 16:
                break
            sec, frac, incl, _orig = rec.unpack(h)
            ts = sec + frac / div
            first = ts if first is None else first
            last = ts
            n += 1
            f.seek(incl, 1)
    if first is None or last is None:
        return None
    return first, last, n


def files_span(files: Iterable[Path]) -> tuple[float, float, int] | None:
    """The span of a point's surviving (ring) files together."""
    spans = [s for s in (pcap_span(Path(f)) for f in files) if s is not None]
    if not spans:
        return None
    return min(s[0] for s in spans), max(s[1] for s in spans), sum(s[2] for s in spans)


def tolerance_s(run_s: float) -> float:
    """Gap at either end that still counts as covered: agents start and stop over a
    moment (discovery traffic begins within ~0.1 s; the last exits trail the traffic)."""
    return max(1.0, 0.02 * run_s)


def coverage(first: float | None, last: float | None, run_start: float, run_end: float
             ) -> dict[str, Any]:
    """Covered span of one capture point against the run's span, with a one-line text."""
    run_s = max(run_end - run_start, 0.0)
    rec: dict[str, Any] = {"run_start": run_start, "run_end": run_end, "run_s": round(run_s, 3),
                           "first_ts": first, "last_ts": last}
    if first is None or last is None:
        rec.update(covered_s=0.0, missing_start_s=round(run_s, 3), missing_end_s=0.0,
                   whole=False, text=f"capture holds no packets of the run's {run_s:.0f} s")
        return rec
    lo, hi = max(first, run_start), min(last, run_end)
    covered = max(hi - lo, 0.0)
    late = min(max(first - run_start, 0.0), run_s)
    early = min(max(run_end - last, 0.0), run_s)
    whole, text = describe(covered, run_s, late, early)
    rec.update(covered_s=round(covered, 3), missing_start_s=round(late, 3),
               missing_end_s=round(early, 3), whole=whole, text=text)
    return rec


def describe(covered_s: float, run_s: float, missing_start_s: float, missing_end_s: float
             ) -> tuple[bool, str]:
    """(covers the whole run, one-line text) from the numbers of :func:`coverage`.

    >>> describe(41.2, 240.0, 198.8, 0.0)
    (False, 'capture covers the last 41 s of 240 s')
    """
    tol = tolerance_s(run_s)
    late, early = missing_start_s > tol, missing_end_s > tol
    cov, run = _secs(covered_s), _secs(run_s)
    if not late and not early:
        return True, f"capture covers the whole run ({run} s)"
    if not early:
        return False, f"capture covers the last {cov} s of {run} s"
    if not late:
        return False, f"capture covers the first {cov} s of {run} s"
    return False, (f"capture covers {cov} s of {run} s (from {_secs(missing_start_s)} s to "
                   f"{_secs(run_s - missing_end_s)} s)")


def _secs(x: float) -> str:
    """Whole seconds, or tenths below 10 s ('0.4', not '0')."""
    return f"{x:.0f}" if x >= 9.95 else f"{x:.1f}"


def of_points(spans: Mapping[str, tuple[float, float] | None], run_span: Mapping[str, float]
              ) -> dict[str, dict[str, Any]]:
    """{point: coverage} for first/last timestamps per point and a run span record
    ``{"start": wall s, "end": wall s}`` (the manifest's ``run_span``)."""
    return {p: coverage(s[0] if s else None, s[1] if s else None,
                        float(run_span["start"]), float(run_span["end"]))
            for p, s in sorted(spans.items())}


def of_run(pcap_dir: Path, run_span: Mapping[str, float]) -> dict[str, dict[str, Any]]:
    """Coverage of every capture point in a run's ``pcaps/`` directory."""
    spans: dict[str, tuple[float, float] | None] = {}
    for point, files in discover_pcaps(pcap_dir).items():
        s = files_span(files)
        spans[point] = (s[0], s[1]) if s else None
    return of_points(spans, run_span)


def lines(cov: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """One line per point, e.g. 'h1-eth0: capture covers the last 41 s of 240 s'."""
    return [f"{p}: {c['text']}" for p, c in sorted(cov.items())]
