"""The C pass of the wire analysis: find a run's capture files and fold each capture
point into small tables (captures/dissect.py ``aggregate``), in parallel threads.

    job = start({"h1-eth0": [Path("h1-eth0.pcap")]})   # returns at once
    folded = job.result()                                # Folded(points, t0, t1)

The C pass needs only ctypes (captures/cnative.py): ``mcastlab wire`` starts it first
and imports numpy and pandas while it runs. captures/wire.py turns the result into the wire tables.
"""

from __future__ import annotations

import ipaddress
import json
import os
from collections.abc import Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from captures import cnative
from captures.cnative import DissectError  # noqa: F401 - raised from here
from captures.coverage import RING_SUFFIX, discover_pcaps
from captures.windows import read_record
from mcastlab import safepath
from mcastlab.errors import UnsafeResults

if TYPE_CHECKING:
    from captures import dissect as dz

class WireError(Exception):
    """Bad input for the wire analysis (one-line message naming the path)."""


def ip_int(s: str) -> int:
    return int(ipaddress.IPv4Address(s))


def load_local_ips(pcap_dir: Path) -> dict[str, set[int]]:
    """``pcaps/points.json`` written by captures.capture: {point: {"ips": [...]}}."""
    f = pcap_dir / "points.json"
    if not f.exists():
        return {}
    try:
        raw = json.loads(f.read_text())
        return {p: {ip_int(ip) for ip in v.get("ips", [])} for p, v in raw.items()}
    except (ValueError, AttributeError) as exc:
        raise WireError(f"{f}: bad points file ({exc}); "
                        "expected {point: {\"ips\": [addresses]}}") from exc


@dataclass
class Folded:
    """Every point folded with the same time origin ``t0`` (the run's first frame)."""

    points: dict[str, dz.Aggregate]
    t0: float
    t1: float


def fold_native(points: Mapping[str, list[Path]],
                workers: int | None = None) -> tuple[dict[str, cnative.AggHandle], float, float]:
    """The C side of ``fold`` (ctypes only: runs before numpy is imported)."""
    workers = workers or os.cpu_count() or 1
    names = sorted(points)
    first = {f: cnative.scan(f, 1) for p in names for f in points[p]}
    firsts = [t for t, _, n in first.values() if n]
    t0 = min(firsts) if firsts else 0.0
    # a point's files in time order (by first frame: robust to copies that lost mtimes;
    # a wrapped tcpdump ring starts at any .pcapN); empty files last
    ordered = {p: sorted(points[p], key=lambda f: (not first[f][2], first[f][0]))
               for p in names}
    with ThreadPoolExecutor(max_workers=max(1, min(workers, len(names) or 1))) as ex:
        hs = list(ex.map(lambda p: cnative.fold_files(ordered[p], t0), names))
        res = [h.result() for h in hs]
        seen = [r for r in res if r.nframes]
        true_t0 = min(r.tmin for r in seen) if seen else 0.0
        if true_t0 != t0:
            t0 = true_t0
            hs = list(ex.map(lambda p: cnative.fold_files(ordered[p], t0), names))
        t1 = max(r.tmax for r in seen) if seen else 0.0
    return dict(zip(names, hs, strict=True)), t0, t1


def fold(points: Mapping[str, list[Path]], workers: int | None = None) -> Folded:
    """Fold every point's files (in order; points in parallel threads: the C core releases
    the GIL). The origin of every ``second`` is the run's first timestamp: taken as the
    earliest first frame of the files, and checked after the pass; a capture whose
    timestamps go backwards below it is folded again with the true origin."""
    handles, t0, t1 = fold_native(points, workers)
    from captures import dissect as dz

    return Folded(points={p: dz.from_handle(h) for p, h in handles.items()}, t0=t0, t1=t1)


def start(points: Mapping[str, list[Path]]) -> Future[Folded]:
    """``fold`` in a background thread: the caller imports pandas meanwhile."""
    ex = ThreadPoolExecutor(max_workers=1)
    fut = ex.submit(fold, points)
    ex.shutdown(wait=False)
    return fut


def _json_object(path: Path) -> dict | None:
    """The JSON object in `path`; None when there is no such file or it holds no object."""
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise WireError(f"{path}: not readable JSON ({exc})") from None
    return data if isinstance(data, dict) else None


def check_run_dir(run: Path) -> None:
    """Refuse a run directory of a results folder from elsewhere that would make the wire
    analysis read or write outside it (mcastlab/safepath.py): its campaign's
    ``campaign.json`` listing an id that is not a plain directory name (or one twice), its
    manifest naming a member outside the run, or a symbolic link at its manifest, in
    ``pcaps/`` or in ``wire/`` (the tables are written there)."""
    try:
        index = run.parent / "campaign.json"
        data = _json_object(index)
        if data is not None:
            safepath.index_run_ids(index, data)
        for name in ("manifest.json", "pcaps", "wire"):
            link = safepath.symlink_below(run / name)
            if link is not None:
                raise WireError(f"{link}: a symbolic link inside the run directory; the wire "
                                "analysis reads and writes only inside it")
        manifest = run / "manifest.json"
        data = _json_object(manifest)
        if data is not None:
            safepath.manifest_members(manifest, data)
    except UnsafeResults as exc:
        raise WireError(str(exc)) from None


@dataclass
class Target:
    """What ``mcastlab wire`` was given, resolved: points, tables directory, addresses;
    for a run captured in windows, the windows (``pcaps/windows.json``) and each point's
    whole-run IGMP/PIM capture (captures/windows.py)."""

    points: dict[str, list[Path]]
    out_dir: Path
    local_ips: dict[str, set[int]]
    windows: dict | None = None
    control: dict[str, list[Path]] = field(default_factory=dict)


def resolve(target: str | os.PathLike[str], out_dir: Path | None = None) -> Target:
    """A run directory (its ``pcaps/`` into ``wire/``) or one capture file (into
    ``FILE.wire/`` unless ``out_dir``)."""
    p = Path(target)
    if p.is_dir():
        check_run_dir(p)
        pcaps = p / "pcaps"
        if not pcaps.is_dir():
            raise WireError(f"{p}: no pcaps/ directory (expected a run directory with captures)")
        points = discover_pcaps(pcaps)
        if not points:
            raise WireError(f"{pcaps}: no capture files (*.pcap, *.pcapN, *.pcapng)")
        return Target(points, p / "wire", load_local_ips(pcaps), read_record(pcaps),
                      discover_pcaps(pcaps, control=True))
    if not p.is_file():
        raise WireError(f"{p}: no such run directory or capture file")
    m = RING_SUFFIX.match(p.name)
    point = m["point"] if m else p.stem
    return Target({point: [p]}, out_dir or p.with_name(f"{p.name}.wire"),
                  load_local_ips(p.parent))
