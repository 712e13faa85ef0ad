"""Waiting out the hypervisor before a run is taken again.

On a VM whose CPUs are shared, another tenant takes CPU time in episodes (steal time,
``/proc/stat``): in a fresh-clone ``make run`` of 2026-12-03 the hypervisor took 16-51% of
both CPUs in 12 attempts from 25x25 to 75x75 over 36 minutes, with quieter runs between.
The runner takes again an attempt that steal spoiled, but it started the retake at once,
inside the same episode: 8 of those 12 retakes were spoiled again (17-50% steal), and
their cells were left testbed-bound.

So before taking again an attempt that lost more than ``QUIET_SHARE`` of a CPU, the runner
probes the hypervisor for ``PROBE_S`` at a time until a probe finds every CPU under
``QUIET_SHARE``, for at most ``WAIT_S``; then it takes the run again whatever it found,
saying so (the retake's own fidelity record still judges it).

Example (a hypervisor that took 30% of a CPU, then 1%)::

    >>> clock = iter(range(0, 100, 5))
    >>> probes = iter([{"cpu0": 0.30, "cpu1": 0.28}, {"cpu0": 0.01, "cpu1": 0.0}])
    >>> wait_for_quiet(lambda s: next(probes), lambda: next(clock))
    Waited(quiet=True, waited_s=10, steal=0.01, probes=2)
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import NamedTuple

from experiments import cpustats

QUIET_SHARE = 0.05  # steal on every CPU below this over a probe: quiet enough for a retake
PROBE_S = 5.0
WAIT_S = 120.0  # at most this long: an episode can last longer than a campaign can wait


class Waited(NamedTuple):
    quiet: bool  # a probe found every CPU under QUIET_SHARE
    waited_s: float
    steal: float  # the worst CPU's steal share in the last probe
    probes: int


def steal_probe(probe_s: float) -> dict[str, float]:
    """Each CPU's steal share over the next `probe_s` seconds."""
    a = cpustats.read()
    time.sleep(probe_s)
    b = cpustats.read()
    return {cpu: share for cpu, rec in cpustats.window(a, b, probe_s, {}, {}).items()
            if (share := rec.get("steal_share")) is not None}


def wait_for_quiet(probe: Callable[[float], dict[str, float]] = steal_probe,
                   clock: Callable[[], float] = time.monotonic,
                   on_probe: Callable[[float, float], None] | None = None,
                   limit: float = QUIET_SHARE, probe_s: float = PROBE_S,
                   wait_s: float = WAIT_S) -> Waited:
    """Probe until every CPU lost less than `limit` in one probe, or `wait_s` passed.
    `on_probe(steal, waited_s)` hears each probe that was not quiet (a progress line)."""
    t0 = clock()
    n = 0
    while True:
        shares = probe(probe_s)
        n += 1
        worst = max(shares.values(), default=0.0)
        waited = clock() - t0
        if worst < limit:
            return Waited(True, waited, worst, n)
        if on_probe is not None:
            on_probe(worst, waited)
        if waited >= wait_s:
            return Waited(False, waited, worst, n)
