"""Capture windows: packet captures placed inside a run's measurement window.

The measurement window runs from the moment every agent matched all its peers to the
first agent's exit; the throughput and latency tables measure it. A tcpdump ring over the
whole run keeps only the run's last seconds instead (at 1x1 unpaced, 2 x 64 MB hold under
a second), which are the test's own ending. So a capture window is placed from the
scenario alone, the same in both modes of a comparison:

- it opens ``settle_s`` after full discovery (``[capture] window_settle_s``);
- it lasts ``length_s`` = min(``window_s``, execution time - ``settle_s`` - END_MARGIN_S);
- window keys a scenario leaves unset fit every run (:func:`fitted`): a run too short for
  the default settle gets a shorter one, a run that holds no window at all is captured
  whole; explicit values that do not fit are refused when the scenario is checked;
- it ends at least END_MARGIN_S before the first publisher's execution time runs out
  (the agents' ``-executionTime`` clock starts when each publisher has matched its
  subscribers), so no packet of the test's ending (writers stopping, FINISHED) is in it;
- long runs get several windows, one every ``every_s`` seconds (systematic sampling
  with a fixed start, so both modes sample the same phases).

>>> p = plan(execution_time=20, window_s=5, settle_s=2, every_s=0)
>>> p.length_s, p.count
(5.0, 1)
>>> [(round(a, 1), round(b, 1)) for a, b in schedule(p, Anchors(100.0, 100.3, 118.0))]
[(102.3, 107.3)]
>>> plan(execution_time=600, window_s=5, settle_s=2, every_s=60).count
10

Each window's tcpdump starts START_LEAD_S before the window and stops STOP_LAG_S after
it; its file is then cut to the window exactly (:func:`trim`), so the pcap holds the
window and nothing else. IGMP and PIM are captured over the whole run besides
(``<point>.control.pcap``): the wire analysis needs the hosts' memberships, reported
before any agent starts, to tell flooded multicast from delivered multicast.

Pure logic and the tcpdump lifecycle; imports without root and without Mininet.
"""

from __future__ import annotations

import contextlib
import json
import math
import mmap
import os
import struct
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from captures.coverage import PCAP_MAGICS

if TYPE_CHECKING:  # importing captures needs no mcastlab
    from mcastlab.testbed import Testbed

# tcpdump starts this long before its window and stops this long after it (it writes what
# its kernel buffer still holds); the file is then cut to the window. Listening took
# 0.1-1.2 s at 1x1..25x25 on 2 busy cores, but 3-7 s at 50x50 and 75x75 with the cores
# saturated: with the default settle (5 s) the window's tcpdump starts as soon as the
# measurement window opens. A tcpdump that listens late moves its window later (same
# length, if it fits), and says so.
START_LEAD_S = 8.0
STOP_LAG_S = 1.0
# A window's tcpdump: a kernel buffer that holds a whole window at these rates (25x25
# unicast: 104 MB in 5 s) and a priority above the agents', so it keeps up.
WINDOW_BUFFER_KIB = 262144
WINDOW_NICE = -10
END_MARGIN_S = 1.0  # a window ends this long before the first publisher's clock runs out
MIN_WINDOW_S = 1.0  # shorter planned windows are refused when the scenario is checked
LENGTH_TOLERANCE = 0.10  # two modes' windows "differ in length" beyond 10% of the longer
PHASE_TOLERANCE_S = 0.5  # ... "in phase" when their offsets after discovery differ more
CONTROL_FILTER = ["igmp", "or", "pim"]  # the whole-run capture of memberships
CONTROL_TAG = "control"
WINDOWS_FILE = "windows.json"



class WindowError(ValueError):
    """A window plan that cannot fit the run (one line naming the numbers)."""


@dataclass(frozen=True)
class Plan:
    """Windows as the scenario decides them (identical for both modes of a count)."""

    length_s: float
    settle_s: float
    every_s: float
    count: int

    def as_dict(self) -> dict[str, Any]:
        return {"length_s": self.length_s, "settle_s": self.settle_s, "every_s": self.every_s,
                "count": self.count, "end_margin_s": END_MARGIN_S}


def plan(execution_time: float, window_s: float, settle_s: float, every_s: float
         ) -> Plan | None:
    """The windows of a run of ``execution_time`` seconds; None when ``window_s`` is 0
    (one capture over the whole run, as a ring buffer). WindowError when none fits.

    >>> plan(5, 5, 2, 0).length_s     # a short run: the window is what fits
    2.0
    """
    if window_s <= 0:
        return None
    if execution_time <= 0:
        raise WindowError("capture windows need an execution time (a run of num_iter samples "
                          "has no known end)")
    room = execution_time - settle_s - END_MARGIN_S
    length = min(float(window_s), room)
    if length < MIN_WINDOW_S:
        raise WindowError(
            f"execution_time {execution_time:g} s leaves {max(room, 0):.1f} s for a capture "
            f"window after settle_s {settle_s:g} s and the {END_MARGIN_S:g} s kept before the "
            f"test's end; at least {MIN_WINDOW_S:g} s is needed")
    count = 1 if every_s <= 0 else 1 + math.floor((room - length) / every_s + 1e-9)
    return Plan(round(length, 3), float(settle_s), float(every_s), count)


def fitted(execution_time: float, window_s: float, settle_s: float,
           explicit: frozenset[str] | set[str] = frozenset()) -> tuple[float, float]:
    """The ``(window_s, settle_s)`` a run of ``execution_time`` seconds uses, when the
    scenario left some of the window keys unset (``explicit``: the keys it set, of
    ``window_s``, ``window_settle_s``, ``window_every_s``). The defaults fit every run:

    - values set explicitly are kept: :func:`plan` refuses them when they do not fit;
    - an unset settle gives way as far as a MIN_WINDOW_S window needs (never below 0):
      at most execution time - END_MARGIN_S - MIN_WINDOW_S; longer runs keep it whole;
    - when no window key is set and not even that fits (a run shorter than
      END_MARGIN_S + MIN_WINDOW_S, or a run of ``num_iter`` samples, which has no known
      end), window_s becomes 0: one capture over the whole run.

    >>> fitted(20, 5, 5)                # the defaults fit: unchanged
    (5.0, 5.0)
    >>> fitted(4, 5, 5)                 # the settle gives way: 2 s, then a 1 s window
    (5.0, 2.0)
    >>> fitted(4, 5, 5, {"window_settle_s"})   # set explicitly: kept (plan refuses it)
    (5.0, 5.0)
    >>> fitted(0, 5, 5)                 # num_iter: no known end, the whole run
    (0.0, 5.0)
    """
    window, settle = float(window_s), float(settle_s)
    if window <= 0:
        return window, settle
    if "window_settle_s" not in explicit:
        settle = max(0.0, min(settle, execution_time - END_MARGIN_S - MIN_WINDOW_S))
    if not explicit & {"window_s", "window_settle_s", "window_every_s"}:
        try:
            plan(execution_time, window, settle, 0.0)
        except WindowError:
            return 0.0, float(settle_s)  # no window: the settle has nothing to place
    return window, settle


@dataclass(frozen=True)
class Anchors:
    """Moments of one run (``time.monotonic()``) that place its windows.

    ``opened``: the runner saw every agent report discovery complete (the measurement
    window opened); ``all_discovered``: the latest agent's own discovery moment (from its
    start time and the seconds it reports), at or before ``opened``; ``first_stop``: the
    earliest moment a publisher's execution time can run out (earliest discovery of a
    publisher + execution time; a lower bound, since a process starts after its spawn)."""

    opened: float
    all_discovered: float
    first_stop: float


def schedule(p: Plan, a: Anchors) -> list[tuple[float, float]]:
    """(start, end) of each window that fits between full discovery + settle and the
    first publisher's stop - END_MARGIN_S; never before the measurement window opened."""
    first = max(a.all_discovered + p.settle_s, a.opened)
    bound = a.first_stop - END_MARGIN_S
    out = []
    for k in range(p.count):
        start = first + k * p.every_s
        if start + MIN_WINDOW_S > bound:
            break
        out.append((start, min(start + p.length_s, bound)))
    return out


# ---- cutting a capture file to its window --------------------------------------------
def trim(path: Path, lo: float, hi: float) -> tuple[int, int, float | None]:
    """Keep only the records of a classic pcap whose timestamp lies in [lo, hi); returns
    (records kept, records removed, latest timestamp in the file). The file is replaced
    atomically; a record cut short (tcpdump killed mid-write) ends the walk and is
    removed. A latest timestamp before ``hi`` means tcpdump stopped before it had written
    the window's end.

    ValueError for a file that is not a classic pcap (tcpdump -w writes classic pcap).
    """
    size = path.stat().st_size
    if size < 24:
        raise ValueError(f"{path}: {size} bytes, not a pcap file")
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
        magic = struct.unpack_from("<I", m, 0)[0]
        if magic not in PCAP_MAGICS:
            raise ValueError(f"{path}: not a classic pcap file (magic 0x{magic:08x})")
        order, div = PCAP_MAGICS[magic]
        rec = struct.Struct(order + "IIII")
        ranges: list[list[int]] = []
        kept = removed = 0
        latest: float | None = None
        pos = 24
        while pos + 16 <= size:
            sec, frac, incl, _orig = rec.unpack_from(m, pos)
            end = pos + 16 + incl
            if end > size:
                break
            ts = sec + frac / div
            latest = ts if latest is None or ts > latest else latest
            if lo <= ts < hi:
                if ranges and ranges[-1][1] == pos:
                    ranges[-1][1] = end
                else:
                    ranges.append([pos, end])
                kept += 1
            else:
                removed += 1
            pos = end
        tmp = path.with_name(path.name + ".tmp")
        with open(tmp, "wb") as out:
            out.write(m[:24])
            for a, b in ranges:
                out.write(m[a:b])
    os.replace(tmp, path)
    return kept, removed, latest


# ---- what a window record says -----------------------------------------------------------
def _secs(x: float) -> str:
    return f"{x:.0f}" if x >= 9.95 else f"{x:.1f}"


def describe(length_s: float, count: int, offset_s: float, every_s: float = 0.0) -> str:
    """'5.0 s inside the measurement window, from 2.0 s after full discovery' or, with
    several windows, '3 windows of 5.0 s (15 s) inside the measurement window, every 60 s
    from 2.0 s after full discovery'."""
    where = f"from {_secs(offset_s)} s after full discovery"
    if count <= 1:
        return f"{_secs(length_s)} s inside the measurement window, {where}"
    return (f"{count} windows of {_secs(length_s)} s ({_secs(length_s * count)} s) inside the "
            f"measurement window, every {_secs(every_s)} s {where}")


@dataclass
class WindowSummary:
    """What a comparison needs of a run's windows: seconds captured in all, each window's
    length, how many, the first one's offset after full discovery, whether every window
    lay inside the measurement window, and the sampling period (0: one window)."""

    total_s: float
    length_s: float
    count: int
    offset_s: float
    inside: bool = True
    every_s: float = 0.0

    def text(self) -> str:
        return describe(self.length_s, self.count, self.offset_s, self.every_s)

    @classmethod
    def of(cls, rec: Mapping[str, Any] | None) -> WindowSummary | None:
        """From a ``windows`` record (manifest ``capture_windows``, wire summary)."""
        ws = list((rec or {}).get("windows") or [])
        if not ws:
            return None
        lengths = [float(w["s"]) for w in ws]
        return cls(total_s=round(sum(lengths), 3), length_s=round(max(lengths), 3),
                   count=len(ws), offset_s=float(ws[0]["offset_s"]),
                   inside=all(w.get("inside", True) for w in ws),
                   every_s=float(((rec or {}).get("plan") or {}).get("every_s") or 0.0))


def differences(runs: Mapping[str, list[WindowSummary | None]]) -> list[str]:
    """Why the windows of two modes (each a list over its runs) cannot be compared
    figure for figure; [] when every run's windows have the same length (within
    LENGTH_TOLERANCE), count and phase (within PHASE_TOLERANCE_S).

    >>> a, b = WindowSummary(5.0, 5.0, 1, 2.0), WindowSummary(3.1, 3.1, 1, 2.0)
    >>> differences({"unicast": [a], "multicast": [b]})
    ['lengths differ: unicast 5.0 s, multicast 3.1 s']
    """
    out = []
    missing = [m for m, rs in runs.items() if not rs or any(r is None for r in rs)]
    if missing:
        return [f"no capture window in {', '.join(missing)}"]
    every = [r for rs in runs.values() for r in rs if r is not None]
    totals = [r.total_s for r in every]
    if max(totals) - min(totals) > LENGTH_TOLERANCE * max(totals) or len(
            {r.count for r in every}) > 1:
        out.append("lengths differ: " + ", ".join(
            f"{m} {'/'.join(_secs(r.total_s) for r in rs if r)} s" for m, rs in runs.items()))
    offsets = [r.offset_s for r in every]
    if max(offsets) - min(offsets) > PHASE_TOLERANCE_S:
        out.append("phases differ: " + ", ".join(
            f"{m} from {'/'.join(_secs(r.offset_s) for r in rs if r)} s after full discovery"
            for m, rs in runs.items()))
    outside = [m for m, rs in runs.items() if any(r is not None and not r.inside for r in rs)]
    if outside:
        out.append(f"a window of {', '.join(outside)} is not inside its measurement window")
    return out


# ---- the capture session ---------------------------------------------------------------
def _wall(mono: float) -> float:
    """A monotonic moment on the wall clock (pcap timestamps are wall clock)."""
    return mono + (time.time() - time.monotonic())


@dataclass
class _Window:
    index: int
    start: float  # monotonic; after the capture: what it holds (late start, cut short)
    end: float
    planned: tuple[float, float] = (0.0, 0.0)
    bound: float = math.inf  # the latest end: END_MARGIN_S before the first publisher's end
    handle: Any = None
    ready: float | None = None  # monotonic: every point's tcpdump listening
    stats: dict[str, dict[str, Any]] = field(default_factory=dict)
    cut_short: bool = False
    listen_s: float | None = None  # from spawning tcpdump to its "listening on"
    caught_up: bool = True  # tcpdump had written past the window's end when it stopped
    error: str = ""
    points: dict[str, dict[str, Any]] = field(default_factory=dict)
    wall: tuple[float, float] | None = None  # (start, end) on the wall clock, once cut


class WindowedCapture:
    """Captures of one run placed in its measurement window.

    ``start_control()`` when the network is up (IGMP/PIM over the whole run); then
    ``open_window(anchors)`` when every agent matched its peers (the windows are
    scheduled and captured by a thread), ``close_window()`` at the first agent's exit,
    ``stop()`` after the agents: per-point tcpdump statistics (the manifest's
    ``capture_drops``), and :meth:`record` (``capture_windows``).

    ``net`` as for :func:`captures.capture.start`.
    """

    def __init__(self, net: Testbed, points: dict[str, tuple[str, str]], out_dir: Path,
                 snaplen: int, window_plan: Plan) -> None:
        self.net, self.points, self.out_dir = net, dict(points), Path(out_dir)
        self.snaplen, self.plan = snaplen, window_plan
        self.control: Any = None
        self.control_stats: dict[str, dict[str, Any]] = {}
        self.anchors: Anchors | None = None
        self.late_anchors: Anchors | None = None  # full discovery seen after the first end
        self.closed_at: float | None = None
        self.windows: list[_Window] = []
        self.problems: list[str] = []
        self._closed = threading.Event()
        self._thread: threading.Thread | None = None
        self._stopped: dict[str, dict[str, Any]] | None = None
        self._record: dict[str, Any] | None = None

    def start_control(self) -> WindowedCapture:
        from captures import capture

        self.control = capture.start(self.net, self.points, self.out_dir, self.snaplen, 0, 0,
                                     tag=CONTROL_TAG, expression=CONTROL_FILTER)
        return self

    # --- the runner's moments -----------------------------------------------------------
    def open_window(self, anchors: Anchors) -> None:
        if self.anchors is not None:
            return
        if self._closed.is_set():  # every agent matched, but the first one ended before
            self.late_anchors = anchors
            return
        self.anchors = anchors
        bound = anchors.first_stop - END_MARGIN_S
        self.windows = [_Window(k, s, e, (s, e), bound) for k, (s, e) in
                        enumerate(schedule(self.plan, anchors), start=1)]
        if len(self.windows) < self.plan.count:
            self.problems.append(
                f"{len(self.windows)} of {self.plan.count} planned windows fit between full "
                f"discovery + {self.plan.settle_s:g} s and {END_MARGIN_S:g} s before the first "
                f"publisher's end ({anchors.first_stop - anchors.all_discovered:.1f} s after "
                "full discovery)")
        if self.windows:
            self._thread = threading.Thread(target=self._capture_all, name="capture-windows",
                                            daemon=True)
            self._thread.start()

    def close_window(self) -> None:
        if self.anchors is not None and self.closed_at is None:
            self.closed_at = time.monotonic()
        self._closed.set()

    # --- the thread -----------------------------------------------------------------------
    def _capture_all(self) -> None:
        from captures import capture

        for w in self.windows:
            if self._closed.wait(max(0.0, w.start - START_LEAD_S - time.monotonic())):
                w.error = "not taken: the measurement window closed first"
                continue
            spawned = time.monotonic()
            try:
                w.handle = capture.start(self.net, self.points, self.out_dir, self.snaplen, 0, 0,
                                         tag=f"w{w.index}", buffer_kib=WINDOW_BUFFER_KIB,
                                         nice=WINDOW_NICE)
            except Exception as exc:  # evidence, never the run: recorded
                w.error = f"tcpdump did not start: {type(exc).__name__}: {exc}"
                continue
            w.ready = time.monotonic()
            w.listen_s = w.ready - spawned
            if w.ready > w.start:  # listening late: the same length, later (if it fits)
                w.end = max(w.ready, min(w.end + (w.ready - w.start), w.bound))
                w.start = w.ready
            self._closed.wait(max(0.0, w.end + STOP_LAG_S - time.monotonic()))
            w.cut_short = self.closed_at is not None and self.closed_at < w.end
            try:
                w.stats = w.handle.stop()
            except Exception as exc:
                w.error = f"tcpdump did not stop cleanly: {type(exc).__name__}: {exc}"

    # --- after the agents -----------------------------------------------------------------
    def stop(self) -> dict[str, dict[str, Any]]:
        """Stop every capture, cut each window's files to the window; per point, tcpdump's
        statistics summed over its windows (plus ``windows``: how many)."""
        if self._stopped is not None:
            return self._stopped
        self.close_window()
        if self._thread is not None:
            self._thread.join(timeout=3 * START_LEAD_S + 30.0)
            if self._thread.is_alive():
                self.problems.append("the capture thread did not finish in time")
        for w in self.windows:
            if w.handle is not None and not w.stats:
                with contextlib.suppress(Exception):
                    w.stats = w.handle.stop()
        if self.control is not None:
            try:
                self.control_stats = self.control.stop()
            except Exception as exc:
                self.problems.append(f"control capture: {type(exc).__name__}: {exc}")
        self._cut_files()
        out: dict[str, dict[str, Any]] = {}
        for point in sorted(self.points):
            acc: dict[str, Any] = {"captured": 0, "received": 0, "dropped": 0, "windows": 0,
                                   "killed": False, "files": []}
            for w in self.windows:
                st = w.stats.get(point)
                if not st:
                    continue
                acc["windows"] += 1
                for k in ("captured", "received", "dropped"):
                    acc[k] += int(st.get(k) or 0)
                acc["killed"] = acc["killed"] or bool(st.get("killed"))
                acc["files"] += list(st.get("files") or [])
            acc["dropped_any"] = bool(acc["dropped"])
            out[point] = acc
        self._stopped = out
        self._record = self._make_record()
        self._write_record()
        return out

    def _cut_files(self) -> None:
        """Cut each window's files to its window (once, after the agents: the cut reads
        the whole file) and note what each window holds."""
        a = self.anchors
        if a is None:
            return
        for w in self.windows:
            if w.ready is None:
                continue
            if w.cut_short and self.closed_at is not None:
                w.end = min(w.end, self.closed_at)
            lo, hi = _wall(w.start), _wall(w.end)
            for point in sorted(self.points):
                st = w.stats.get(point) or {}
                kept = None
                try:
                    kept, _outside, latest = trim(self.out_dir / f"{point}.w{w.index}.pcap",
                                                  lo, hi)
                    if latest is None or latest < hi:
                        # what tcpdump received but neither wrote nor dropped: counted as
                        # lost, so the run's figures are marked as undercounts
                        unwritten = max(0, int(st.get("received") or 0) - int(
                            st.get("captured") or 0) - int(st.get("dropped") or 0))
                        st["dropped"] = int(st.get("dropped") or 0) + unwritten
                        w.caught_up = False
                        self.problems.append(
                            f"window {w.index} {point}: tcpdump stopped before it had written "
                            "the window's end (its last packet: "
                            + ("none" if latest is None else f"{hi - latest:.2f} s before it")
                            + f"); its {unwritten} packets received but not written count as "
                            "lost: the window's figures undercount")
                except (OSError, ValueError) as exc:
                    self.problems.append(f"window {w.index} {point}: not cut to the window: "
                                         f"{exc}")
                w.points[point] = {"packets": kept, "received": st.get("received"),
                                   "dropped": st.get("dropped")}
            w.wall = (lo, hi)

    def _make_record(self) -> dict[str, Any]:
        a = self.anchors
        rec: dict[str, Any] = {"plan": self.plan.as_dict(), "windows": [],
                               "problems": list(self.problems)}
        if a is None:
            late = self.late_anchors
            rec["problems"].append(
                "no capture window: the measurement window never opened (not every agent "
                "reported discovery complete)" if late is None else
                "no capture window: the first agent ended before the runner saw every agent's "
                f"discovery (the measurement window was {late.first_stop - late.all_discovered:.1f}"
                " s from full discovery to the first publisher's end: the execution time leaves "
                "no room after the spread of discovery)")
            rec["text"] = "no capture window"
            return rec
        rec.update(all_discovered=_wall(a.all_discovered), first_stop=_wall(a.first_stop),
                   measurement_window={"start": _wall(a.opened),
                                       "end": None if self.closed_at is None
                                       else _wall(self.closed_at)})
        for w in self.windows:
            if w.ready is None or w.wall is None:
                rec["problems"].append(f"window {w.index}: {w.error or 'not captured'}")
                continue
            late = max(0.0, w.ready - w.planned[0])
            win = {"index": w.index, "start": w.wall[0], "end": w.wall[1],
                   "s": round(w.end - w.start, 3),
                   "offset_s": round(w.start - a.all_discovered, 3), "late_s": round(late, 3),
                   "listen_s": None if w.listen_s is None else round(w.listen_s, 3),
                   "caught_up": w.caught_up,
                   "inside": w.start >= a.opened and (self.closed_at is None
                                                      or w.end <= self.closed_at),
                   "cut_short": w.cut_short, "points": w.points,
                   "packets": _total(w.points, "packets"), "dropped": _total(w.points, "dropped")}
            if late > 0:
                rec["problems"].append(f"window {w.index}: tcpdump listened {late:.2f} s late "
                                       f"({w.listen_s:.2f} s after it was started); the window "
                                       "starts then")
            if w.cut_short:
                rec["problems"].append(f"window {w.index}: cut short at the first agent's exit")
            if w.error:
                rec["problems"].append(f"window {w.index}: {w.error}")
            rec["windows"].append(win)
        s = WindowSummary.of(rec)
        rec["s"] = s.total_s if s else 0.0
        rec["text"] = s.text() if s else "no capture window"
        rec["control"] = self.control_stats
        return rec

    def _write_record(self) -> None:
        """``pcaps/windows.json``: the windows beside their files (a run's pcaps directory
        stays self-contained for ``mcastlab wire``)."""
        tmp = self.out_dir / (WINDOWS_FILE + ".tmp")
        self.out_dir.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps(self.record(), indent=2) + "\n")
        os.replace(tmp, self.out_dir / WINDOWS_FILE)

    def record(self) -> dict[str, Any]:
        """The manifest's ``capture_windows`` (after :meth:`stop`; before it, the plan)."""
        if self._record is not None:
            return self._record
        return {"plan": self.plan.as_dict(), "windows": [], "problems": list(self.problems),
                "text": "capture not stopped yet"}


def _total(points: Mapping[str, Mapping[str, Any]], key: str) -> int | None:
    vals = [v.get(key) for v in points.values()]
    return None if any(v is None for v in vals) else sum(int(v) for v in vals)


def read_record(pcap_dir: Path) -> dict[str, Any] | None:
    """``pcaps/windows.json`` (None when the run captured the whole run)."""
    f = Path(pcap_dir) / WINDOWS_FILE
    try:
        data = json.loads(f.read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


# ---- a campaign's windows, checked -------------------------------------------------------
def campaign_rows(root: Path) -> list[dict[str, Any]]:
    """One row per complete run of a results directory that was captured in windows:
    its mode and count, the measurement window's length, the windows (seconds in all,
    offset after full discovery, inside the measurement window or not), and the packets
    and kernel drops of its windows."""
    rows = []
    for run in sorted(Path(root).iterdir()):
        try:
            man = json.loads((run / "manifest.json").read_text())
            cfg = json.loads((run / "config.json").read_text())
        except (OSError, ValueError):
            continue
        rec = man.get("capture_windows")
        if man.get("status") != "complete" or not isinstance(rec, dict):
            continue
        mw = rec.get("measurement_window") or {}
        mw_s = (mw["end"] - mw["start"]) if mw.get("end") and mw.get("start") else None
        s = WindowSummary.of(rec)
        ws = rec.get("windows") or []
        rows.append({
            "run": run.name, "group": cfg.get("group", ""), "mode": cfg.get("mode", ""),
            "count": f"{cfg.get('publishers')}x{cfg.get('subscribers')}",
            "measurement_s": None if mw_s is None else round(mw_s, 3),
            "windows": len(ws), "window_s": s.total_s if s else 0.0,
            "offset_s": s.offset_s if s else None, "inside": bool(s and s.inside),
            "start": ws[0]["start"] if ws else None, "end": ws[-1]["end"] if ws else None,
            "packets": sum(int(w.get("packets") or 0) for w in ws),
            "dropped": sum(int(w.get("dropped") or 0) for w in ws),
            "received": sum(int(p.get("received") or 0) for w in ws
                            for p in (w.get("points") or {}).values()),
            "problems": list(rec.get("problems") or [])})
    return rows


def check_rows(rows: list[dict[str, Any]], min_s: float = 5.0) -> list[str]:
    """What a campaign's windows must hold: every window inside its measurement window,
    at least ``min_s`` seconds (or the measurement window less the settle and the end
    margin, when that is shorter), and the two modes' windows at each count within
    LENGTH_TOLERANCE of each other in length. Returns the failures, [] when all hold."""
    out = []
    for r in rows:
        if not r["windows"]:
            out.append(f"{r['run']}: no capture window ({'; '.join(r['problems'])})")
            continue
        if not r["inside"]:
            out.append(f"{r['run']}: a window is not inside the measurement window")
        if r["window_s"] < min_s - 1e-6 and (r["measurement_s"] is None or r["window_s"] <
                                             r["measurement_s"] - r["offset_s"] - END_MARGIN_S):
            out.append(f"{r['run']}: {r['window_s']:.1f} s of window, below {min_s:g} s and "
                       f"below what the {r['measurement_s']} s measurement window holds")
    cells: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in rows:
        cells.setdefault((r["group"], r["count"]), []).append(r)
    for (group, count), rs in sorted(cells.items()):
        lengths = [r["window_s"] for r in rs]
        if len({r["mode"] for r in rs}) > 1 and (
                max(lengths) - min(lengths) > LENGTH_TOLERANCE * max(lengths)):
            out.append(f"{group} {count}: window lengths differ by more than "
                       f"{LENGTH_TOLERANCE:.0%}: " + ", ".join(
                           f"{r['mode']} {r['window_s']:.2f} s" for r in rs))
    return out
