"""Hosts of fixed capacity, measured (run as root, on a quiet machine; not a test).

    .venv/bin/python tests/bench/bench_scaled_hosts.py [CYCLES]   (default 20)

For each way of making a host a machine of C cores (a 10 ms CFS period, the same pinned
to one CPU per host with periods 250 µs apart as the scaled presets make them, and the
former 100 ms period as the reference of this invocation), on the study's 4-host LAN:

1. the monitor's view of 4 saturated hosts of 0.4 core (2 busy loops each) over 4 s: CPU
   time used / allocation, throttled periods, starved share, a 1 ms timer's p99 inside a
   host and outside every host;
2. isolation at 0.4 core: a 1 -> 1 inside h1 (the native agent, best effort, 100 B,
   unpaced) with h2, h3 and h4 idle, then saturated, CYCLES times in one run: the median
   over cycles of saturated / idle (goal: within 5%); the same across hosts, h1 -> h2 with
   h3 and h4 idle or saturated;
3. proportionality: h1 -> h2 with both hosts given C = 0.2, 0.3, 0.5 in turn, CYCLES
   times in one run: each C's throughput per core over its cycle's mean, median over the
   cycles (goal: within 10%).

Conditions change every 0.5 s (every 10 periods at least) within one run, as in the
known-answer tests (tests/topologies/test_scaled_hosts_netns.py), which assert the goals
for the pinned setting. Every measurement is taken again while the hypervisor took over
2% of a CPU (steal time), up to 3 times; the benchmark stops, naming the steal, when it
never fell below.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
from functools import partial
from pathlib import Path
from typing import Any

import topologies
from mcastlab import paths

sys.path.insert(0, str(paths.REPO_ROOT))  # run as a script: tests/ importable
from tests.helpers import scaled_hosts as scaled

SETTINGS = {
    "10 ms period": {"cpu_period_us": 10_000},
    "10 ms period, pinned, 250 µs steps": {"cpu_period_us": 10_000, "cpu_pin": True,
                                           "cpu_period_step_us": 250},
    "100 ms period (reference)": {"cpu_period_us": 100_000},
}


def _lan(cores: float, extra: dict[str, Any], hosts: int = 4) -> Any:
    return topologies.resolve("lan", {"hosts": hosts, "cpu": cores, **extra})


def _timing(extra: dict[str, Any]) -> dict[str, float]:
    """Each condition for 10 periods at least, the first 2 of them not counted."""
    period_s = extra["cpu_period_us"] / 1e6
    return {"dwell_s": max(scaled.DWELL_S, 10 * period_s),
            "settle_s": max(scaled.SETTLE_S, 2 * period_s)}


def _isolation(net: Any, d: Path, name: str, sender: str, receiver: str,
               neighbours: list[str], cycles: int, timing: dict[str, float]) -> float:
    out = scaled.unstolen(partial(scaled.against_neighbours, net, d, sender, receiver,
                                  neighbours, cycles, **timing), f"{name}: {sender} -> {receiver}")
    return scaled.saturated_over_idle(out)


def main() -> int:
    cycles = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    work = Path(tempfile.mkdtemp(prefix="bench-scaled-"))
    for name, extra in SETTINGS.items():
        d = work / name.replace(" ", "_").replace(",", "").replace("µ", "u")
        d.mkdir()
        timing = _timing(extra)
        with topologies.build(_lan(0.4, extra), workdir=d) as net:
            fid = scaled.monitor_under_load(net, d, {h: 2 for h in ("h1", "h2", "h3", "h4")})
            m = fid["metrics"]
            inside = max(v["wakeup_p99_us"] or 0 for v in fid["per_host"].values())
            print(f"{name}: saturated 4 x 0.4: allocation {m['allocation_share']:.3f} (worst), "
                  f"throttled {m['throttled_share']:.0%}, short {m['shortfall_share']:.1%}, "
                  f"timer p99 inside {inside / 1000:.1f} ms, outside "
                  f"{(m['plane_wakeup_p99_us'] or 0) / 1000:.1f} ms; steal "
                  f"{m.get('steal_share', 0.0):.1%}; bound {fid['bound']}",
                  flush=True)
            net.wait_converged(timeout=30)
            inside_host = _isolation(net, d, name, "h1", "h1", ["h2", "h3", "h4"], cycles,
                                     timing)
            across = _isolation(net, d, name, "h1", "h2", ["h3", "h4"], cycles, timing)
        print(f"{name}: isolation at 0.4 core, saturated / idle neighbours over {cycles} "
              f"cycles: 1 -> 1 inside h1 {inside_host:.3f} (goal within 5%), h1 -> h2 "
              f"{across:.3f}", flush=True)
        tried = (0.2, 0.3, 0.5)
        dd = d / "proportionality"
        dd.mkdir()
        with topologies.build(_lan(max(tried), extra, hosts=2), workdir=dd) as net:
            net.wait_converged(timeout=30)
            per_core = scaled.unstolen(partial(scaled.per_core, net, dd, tried, cycles,
                                               **timing), f"{name}: 0.2 / 0.3 / 0.5 core")
        rel = scaled.relative(per_core)
        print(f"{name}: proportionality over {cycles} cycles: bytes/s per core " + ", ".join(
            f"C={c:g}: {statistics.median(r[c] for r in per_core) / 1e6:.1f} M "
            f"({rel[c]:.3f})" for c in tried)
            + " (goal each within 10% of the cycle's mean)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
