"""Hosts of fixed capacity, measured: shared by the known-answer tests
(tests/topologies/test_scaled_hosts_netns.py) and their benchmark
(tests/bench/bench_scaled_hosts.py). Every function works on a built network (root).
"""

from __future__ import annotations

import math
import re
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
from scipy import stats as sps

from experiments import fidelity
from mcastlab import paths, testbed

BUSY = ["sh", "-c", "while :; do :; done"]
SECONDS = 4  # per 1 -> 1 measurement
ATTEMPTS = 3  # measurements tried before giving up on a machine the hypervisor keeps busy
T = TypeVar("T")


class HypervisorBusy(Exception):
    """Every attempt at a measurement lost more than ``fidelity.STEAL_WARNING_SHARE`` of a
    CPU to the hypervisor: the known answer cannot be observed on this machine now."""


def unstolen(measure: Callable[[], T], what: str, attempts: int = ATTEMPTS) -> T:
    """``measure()``, again while the hypervisor kept one of this machine's CPUs from it
    more than ``fidelity.STEAL_WARNING_SHARE`` of the time (steal time).

    A virtual machine's CPUs are shared with other tenants, and in a pinned 1x1 pilot
    throughput fell as steal rose (r = -0.91). A known answer about the emulator holds on
    a machine that gets its CPUs, so a measurement the hypervisor slowed is taken again.
    """
    seen: list[float] = []
    for _ in range(attempts):
        a, t0 = fidelity.read_steal(), time.monotonic()
        value = measure()
        shares = fidelity.steal_shares(a, fidelity.read_steal(), time.monotonic() - t0)
        worst = fidelity.worst_steal(shares)
        if worst <= fidelity.STEAL_WARNING_SHARE:
            print(f"{what}: steal {worst:.1%} (worst CPU)")
            return value
        seen.append(worst)
        print(f"{what}: the hypervisor took {worst:.1%} of a CPU (steal); measuring again")
    raise HypervisorBusy(
        f"{what}: the hypervisor took " + ", ".join(f"{s:.1%}" for s in seen)
        + f" of a CPU in each of {attempts} attempts (steal time over "
        f"{fidelity.STEAL_WARNING_SHARE:.0%}): this machine's CPUs are in use by another "
        "tenant, so what the emulator gives its hosts cannot be told from what it lost")


def throughput(net: testbed.Testbed, workdir: Path, tag: str, seconds: int = SECONDS,
               reliable: bool = True) -> float:
    """Samples/s of a 1 -> 1 h1 -> h2 (the subscriber's summary average)."""
    agent = str(paths.NATIVE_AGENT)
    qos = [] if reliable else ["-bestEffort"]
    out = workdir / f"sub-{tag}.out"
    with out.open("wb") as fo:
        sub = net.popen("h2", [agent, "-sub", "-nic", net.host_ip("h2"), "-dataLen", "100",
                               "-noPrintIntervals", *qos], stdout=fo, stderr=fo)
    with (workdir / f"pub-{tag}.out").open("wb") as fp:
        pub = net.popen("h1", [agent, "-pub", "-nic", net.host_ip("h1"), "-dataLen", "100",
                               "-executionTime", str(seconds), "-noPrintIntervals", *qos],
                        stdout=fp, stderr=fp)
    assert pub.wait(timeout=120) == 0, (workdir / f"pub-{tag}.out").read_text()[-800:]
    assert sub.wait(timeout=60) == 0, out.read_text()[-800:]
    text = out.read_text()
    m = re.search(r"^Sample Size \(Bytes\), Total Samples, Avg Samples/s.*\n\s*\d+,\s*\d+,\s*"
                  r"([\d.]+)", text, re.M)
    assert m, text[-800:]
    return float(m.group(1))


# Sends 1,000 datagrams/s of 100 B to PEER for SECONDS; reads what arrives on port 5999
# unless READ is 0, in which case its receive buffer is the kernel's smallest and full.
EXCHANGE = r"""
import socket, sys, time
peer, seconds, read = sys.argv[1], float(sys.argv[2]), sys.argv[3] == "1"
rx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
if not read:
    rx.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1)
rx.bind(("0.0.0.0", 5999))
rx.setblocking(False)
tx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
end = time.monotonic() + seconds
while time.monotonic() < end:
    tx.sendto(b"x" * 100, (peer, 5999))
    while read:
        try:
            rx.recv(2048)
        except BlockingIOError:
            break
    time.sleep(0.001)
"""


def exchange(net: testbed.Testbed, host: str, peer: str, seconds: float, read: bool) -> Any:
    """``host`` sends UDP to ``peer`` for ``seconds`` and reads its own port, or not (then
    what ``peer`` sends it is dropped at a full socket buffer)."""
    return net.popen(host, [sys.executable, "-c", EXCHANGE, net.host_ip(peer), str(seconds),
                            "1" if read else "0"])


def busy(net: testbed.Testbed, hosts: list[str], loops: int) -> list[Any]:
    return [net.popen(h, BUSY) for h in hosts for _ in range(loops)]


def stop(procs: list[Any]) -> None:
    for p in procs:
        p.kill()
        p.wait(timeout=10)


def monitor(net: testbed.Testbed, workdir: Path, seconds: float) -> dict[str, Any]:
    """A fidelity window of ``seconds`` over whatever runs now (no agents)."""
    logs = workdir / f"logs-{time.monotonic_ns()}"
    logs.mkdir()
    mon = fidelity.Monitor(net, list(net.hosts), logs, fidelity.Thresholds(),
                           cpu=net.cpu_limits(), plane_node="s1")
    mon.open_window()
    time.sleep(seconds)
    mon.close_window()
    return mon.result([], 0.0, {"publishers": 0}, logs, None)


def monitor_under_load(net: testbed.Testbed, workdir: Path,
                       load: dict[str, int], seconds: float = 4) -> dict[str, Any]:
    """A fidelity window of ``seconds`` while ``load`` (node -> busy loops) runs; the loops
    get half a second to start first and are stopped whatever happens."""
    procs = [p for node, loops in load.items() for p in busy(net, [node], loops)]
    try:
        time.sleep(0.5)
        return monitor(net, workdir, seconds)
    finally:
        stop(procs)


# Spins for SECONDS and prints, one per line, the CLOCK_MONOTONIC time (ns) at which each
# stall of over 1 ms ended: with a CPU limit, the moments the host got CPU time again.
RESUMES = r"""
import sys, time
end = time.monotonic_ns() + int(float(sys.argv[1]) * 1e9)
last = time.monotonic_ns()
out = []
while last < end:
    now = time.monotonic_ns()
    if now - last > 1_000_000:
        out.append(now)
    last = now
print("\n".join(map(str, out)))
"""


def resumes(net: testbed.Testbed, hosts: list[str], seconds: float) -> dict[str, list[int]]:
    """Each host's stall ends (ns, CLOCK_MONOTONIC) over ``seconds``: one spinning process
    per host, started together."""
    procs = {h: net.popen(h, [sys.executable, "-c", RESUMES, str(seconds)],
                          stdout=subprocess.PIPE, text=True) for h in hosts}
    out = {}
    for h, p in procs.items():
        text, _ = p.communicate(timeout=seconds + 60)
        assert p.returncode == 0, (h, p.returncode)
        out[h] = [int(x) for x in text.split()]
    return out


def phase_concentration(times_ns: list[int], period_us: int) -> tuple[float, float]:
    """Where in a ``period_us`` cycle (counted from CLOCK_MONOTONIC's zero) the times fall:
    (mean phase in µs, concentration 0..1: 1 when every time has the same phase, near 0
    when they are spread evenly over the cycle)."""
    if not times_ns:
        return math.nan, 0.0
    period_ns = period_us * 1000
    angles = 2 * np.pi * (np.asarray(times_ns, dtype=np.int64) % period_ns) / period_ns
    d = sps.directional_stats(np.column_stack([np.cos(angles), np.sin(angles)]))
    phase = math.atan2(d.mean_direction[1], d.mean_direction[0]) % (2 * math.pi)
    return phase / (2 * math.pi) * period_us, float(d.mean_resultant_length)
