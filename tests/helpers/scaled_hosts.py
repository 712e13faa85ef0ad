"""Hosts of fixed capacity, measured: shared by the known-answer tests
(tests/topologies/test_scaled_hosts_netns.py) and their benchmark
(tests/bench/bench_scaled_hosts.py). Every function works on a built network (root).
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

from experiments import fidelity
from mcastlab import paths, testbed

BUSY = ["sh", "-c", "while :; do :; done"]
SECONDS = 4  # per 1 -> 1 measurement


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

