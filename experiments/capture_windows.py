"""The runner's side of capture windows (captures/windows.py).

When the measurement window opens (every agent reported discovery complete), each agent's
clock places the windows: a Perftest agent's ``-executionTime`` clock starts when it has
matched its peers (perftest-wrappers/native/measure.c, ``ms_pace_init`` right after the
"discovery complete: ... after X s (process start)" line), so

- full discovery = the latest agent's start + its X;
- the first publisher's end = the earliest publisher's start + its X + execution time.

An agent's start is its process's start time (``/proc/PID/stat``, 10 ms ticks, taken at
the spawn, before the agent's own clock starts): both moments are lower bounds, so a
window placed by them ends before the test's ending. Agents that report no discovery
(ddsperf) count from their start.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path
from typing import Any

from captures.windows import Anchors, Plan, WindowedCapture, plan
from experiments.tables import discovery_seconds
from mcastlab.ledger import proc_start_time


def process_start(pid: int) -> float | None:
    """A process's start on the ``time.monotonic()`` clock (None once it is gone)."""
    ticks = proc_start_time(pid)
    if ticks is None:
        return None
    boot_minus_mono = time.clock_gettime(time.CLOCK_BOOTTIME) - time.monotonic()
    return ticks / os.sysconf("SC_CLK_TCK") - boot_minus_mono


def anchors(starts: dict[str, float], discovered_after: dict[str, float | None],
            execution_time: float, opened: float) -> Anchors:
    """The run's moments from each agent's start and its seconds to discovery.

    >>> a = anchors({"pub0": 10.0, "sub0": 9.5}, {"pub0": 2.0, "sub0": 3.0}, 20, 13.4)
    >>> a.all_discovered, a.first_stop
    (12.5, 32.0)
    """
    known = {n: starts[n] + s for n, s in discovered_after.items() if s is not None}
    if not known or len(known) < len(starts):  # an agent without the line: count from starts
        known = {n: t for n, t in starts.items()}
    pubs = [t for n, t in known.items() if n.startswith("pub")] or list(known.values())
    return Anchors(opened=opened, all_discovered=min(max(known.values()), opened),
                   first_stop=min(pubs) + float(execution_time))


class CaptureWindowHook:
    """Tells a :class:`WindowedCapture` the measurement window's moments: the runner calls
    :meth:`open_window` and :meth:`close_window` where it opens and closes the fidelity
    monitor's window."""

    def __init__(self, capture: WindowedCapture, procs: dict[str, subprocess.Popen[bytes]],
                 agents_dir: Path, execution_time: float, t_start: float) -> None:
        self.capture, self.procs, self.agents_dir = capture, procs, agents_dir
        self.execution_time, self.t_start = execution_time, t_start

    def open_window(self) -> None:
        if self.capture.anchors is not None:
            return
        opened = time.monotonic()
        starts, after = {}, {}
        for name, p in self.procs.items():
            starts[name] = process_start(p.pid) or self.t_start
            try:
                text = (self.agents_dir / f"{name}.stderr").read_text(errors="replace")
            except OSError:
                text = ""
            after[name] = discovery_seconds(text)
        self.capture.open_window(anchors(starts, after, self.execution_time, opened))

    def close_window(self) -> None:
        self.capture.close_window()


__all__ = ["CaptureWindowHook", "WindowedCapture", "anchors", "hook", "plan_of",
           "process_start"]


def plan_of(cfg: dict[str, Any]) -> Plan | None:
    """A run's window plan from its configuration (None: one capture over the whole run,
    also for configurations made before capture windows existed)."""
    c = cfg["capture"]
    if "window_s" not in c:
        return None
    return plan(float(cfg["execution_time"] or 0), c["window_s"], c["window_settle_s"],
                c["window_every_s"])


def hook(capture: Any, procs: dict[str, subprocess.Popen[bytes]], agents_dir: Path,
         cfg: dict[str, Any], t_start: float) -> CaptureWindowHook | None:
    """The hook for a run whose captures are windows (None for a whole-run capture)."""
    if not isinstance(capture, WindowedCapture):
        return None
    return CaptureWindowHook(capture, procs, agents_dir, float(cfg["execution_time"] or 0),
                             t_start)
