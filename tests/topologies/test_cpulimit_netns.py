"""CPU-limited hosts: each emulated host gets its own CFS share, whatever the others do.

   h1 (3 busy loops, cpu = 0.3) -- s1 -- h2 (1 busy loop, cpu = 0.3)

h1's three loops together get 0.3 of a core (its limit), and h2's single loop still gets
its own 0.3: the machine has 2 cores, so 0.6 in all fits and neither host starves the
other. Measured from the loops' own CPU time (psutil), over 3 s, ±10%.
"""

from __future__ import annotations

import time
from pathlib import Path

import psutil
import pytest

import topologies
from topologies import cpulimit
from topologies.net import wait_for

pytestmark = pytest.mark.timeout(120)

SHARE = 0.3
BUSY = ["sh", "-c", "while :; do :; done"]


def _cpu_seconds(procs: list[psutil.Process]) -> float:
    total = 0.0
    for p in procs:
        t = p.cpu_times()
        total += t.user + t.system
    return total


def _looping(p: psutil.Process) -> bool:
    t = p.cpu_times()
    return p.cmdline() == BUSY and t.user + t.system > 0.01


def _measure(net: object, workdir: Path) -> dict[str, float]:
    started = {"h1": [net.popen("h1", BUSY) for _ in range(3)],  # type: ignore[attr-defined]
               "h2": [net.popen("h2", BUSY)]}  # type: ignore[attr-defined]
    try:
        # mnexec execs the shell in place: the pid is the loop's
        procs = {h: [psutil.Process(p.pid) for p in ps] for h, ps in started.items()}
        every = [p for ps in procs.values() for p in ps]
        # the loops run: each pid is the loop itself (past the ledger's gate and mnexec)
        # and has used CPU
        assert wait_for(lambda: all(_looping(p) for p in every), 10), [
            (p.cmdline(), p.cpu_times()) for p in every]
        before = {h: _cpu_seconds(ps) for h, ps in procs.items()}
        t0 = time.monotonic()
        time.sleep(3.0)  # the measured window itself: CPU time used over 3 s of wall time
        dt = time.monotonic() - t0
        return {h: (_cpu_seconds(ps) - before[h]) / dt for h, ps in procs.items()}
    finally:
        for ps in started.values():
            for p in ps:
                p.kill()
                p.wait(timeout=5)


def _check(kind: int | None, workdir: Path) -> None:
    spec = topologies.resolve("lan", {"hosts": 2, "cpu": SHARE})
    with topologies.build(spec, workdir=workdir) as net:
        assert net.cpu is not None and net.cpu.version == kind
        used = _measure(net, workdir)
        counters = net.cpu_limits().snapshot()
        paths = [d for dirs in net.cpu_limits().hosts.values() for d in dirs]
    assert abs(used["h1"] - SHARE) <= 0.1 * SHARE, used
    assert abs(used["h2"] - SHARE) <= 0.1 * SHARE, used
    assert counters["h1"].throttled > 0, counters
    # teardown removed exactly the cgroups it made
    assert not any(p.exists() for p in paths), paths


@pytest.mark.skipif(cpulimit.version() != 1, reason="this machine has no cgroup v1 cpu "
                    "controller (it uses cgroup v2: see the v2 test)")
def test_cpu_share_cgroup_v1(workdir: Path) -> None:
    _check(1, workdir)


@pytest.mark.skipif(cpulimit.version() != 2, reason="this machine mounts cgroup v1 (no unified "
                    "hierarchy with a cpu controller at /sys/fs/cgroup), so the v2 path cannot "
                    "be exercised here")
def test_cpu_share_cgroup_v2(workdir: Path) -> None:
    _check(2, workdir)


def test_cpu_param_is_validated() -> None:
    with pytest.raises(topologies.TopologyParamError, match="cpu"):
        topologies.resolve("lan", {"hosts": 2, "cpu": 0})
