"""Live progress of a campaign: run i of n, current phase, elapsed time and ETA.

On a terminal this is a rich live display; otherwise (CI logs, tests) one plain line per
phase change on stderr. Without progress (``--no-progress``) the phase lines go, and the
lines that report something (a failed attempt, a host-bound run, a warning) stay.
"""

from __future__ import annotations

import sys
import time
from typing import Any

from rich.console import Console
from rich.live import Live
from rich.text import Text


def _fmt(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    s = int(max(seconds, 0))
    return f"{s // 3600:d}:{s % 3600 // 60:02d}:{s % 60:02d}"


class Progress:
    """ETA = remaining runs' expected durations, scaled by how long finished runs took
    compared with their expectation."""

    def __init__(self, total: int, expected: list[float], enabled: bool = True) -> None:
        self.total = total
        self.expected = expected
        self.console = Console(stderr=True)
        self.live_mode = enabled and self.console.is_terminal
        self.quiet = not enabled
        self.t0 = time.monotonic()
        self.index = 0
        self.run_id = ""
        self.phase = "starting"
        self.run_t0 = self.t0
        self._spent_actual = 0.0
        self._spent_expected = 0.0
        self._live: Live | None = None
        self._finished = 0  # runs before this index are done

    def __enter__(self) -> Progress:
        if self.live_mode:
            self._live = Live(self._render(), console=self.console, refresh_per_second=2,
                              transient=False, get_renderable=self._render)
            self._live.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._live is not None:
            self._live.__exit__(*exc)

    def eta(self) -> float | None:
        first = max(self.index, self._finished)
        remaining = sum(self.expected[first:])
        # Finished runs' actual/expected ratio, damped by a 60 s prior so the first short
        # runs do not swing the estimate.
        scale = (self._spent_actual + 60.0) / (self._spent_expected + 60.0)
        in_run = time.monotonic() - self.run_t0 if self.index >= self._finished else 0.0
        return max(remaining * scale - in_run, 0.0)

    def _render(self) -> Text:
        elapsed = time.monotonic() - self.t0
        return Text.assemble(
            (f"run {min(self.index + 1, self.total)} of {self.total}", "bold"),
            f"  {self.run_id}  ", (self.phase, "cyan"),
            f"  elapsed {_fmt(elapsed)}  ETA {_fmt(self.eta())}",
        )

    def start_run(self, index: int, run_id: str) -> None:
        self.index, self.run_id, self.run_t0 = index, run_id, time.monotonic()
        self.set_phase("starting")

    def set_phase(self, phase: str) -> None:
        self.phase = phase
        if self.live_mode or self.quiet:
            return
        print(f"[{self.index + 1}/{self.total}] {self.run_id}: {phase} "
              f"(elapsed {_fmt(time.monotonic() - self.t0)}, ETA {_fmt(self.eta())})",
              file=sys.stderr, flush=True)

    def end_run(self, status: str, counted: bool = True) -> None:
        if counted and self.index < len(self.expected):
            self._spent_actual += time.monotonic() - self.run_t0
            self._spent_expected += self.expected[self.index]
        self._finished = self.index + 1
        self.set_phase(status)

    def log(self, msg: str) -> None:
        """A line that matters whatever the display (a failed attempt, a host-bound run, a
        warning): printed also when progress is off."""
        if self._live is not None:
            self._live.console.print(msg)
        else:
            print(msg, file=sys.stderr, flush=True)
