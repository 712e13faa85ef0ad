"""Perftest's heartbeat timing at 25x25, read on the wire.

    h1 .. h4 (0.4 core each, pinned) -- s1 (snooping bridge, querier)   capture on h1-eth0

A 25x25 run in each mode on the scaled preset with
``heartbeat_timing = ["scaled-discovery"]`` (the agents' -scaleDiscovery: the scaled
timing until every peer has matched, Perftest's from then on, as the study's campaigns
run): from the capture window on h1-eth0, every throughput writer of h1
asks its readers for acknowledgements (HEARTBEAT without the Final flag) with a 90th
percentile spacing of at most Perftest's 10 ms plus the run's own timer wake-up p99
inside the hosts (the fidelity monitor's figure: a saturated host fires a 10 ms timer
late by about that much) plus a margin of one more period, 10 ms.

Measured (2026-12-07): with "scaled-discovery" p90 38-45 ms in multicast (wake-up p99
64.6 ms) and 72-84 ms in unicast (73.9 ms); with "perftest" (Perftest's timing from the
start, while another test suite ran) 36-49 ms in multicast and 59-88 ms in unicast; with
"scaled", the native agent's -scaleSettings for the whole test, 268-318 ms in multicast
(wake-up p99 46.4 ms) and 409-536 ms in unicast (49.6 ms), which this bound fails.
"""

from __future__ import annotations

import ipaddress
import json
from pathlib import Path

import pytest

from captures import dissect as dz
from captures import heartbeats
from tests.helpers.scenarios import run_native_campaign

pytestmark = pytest.mark.timeout(900)

PERFTEST_PERIOD_MS = 10.0
MARGIN_MS = 10.0  # one more period
H1 = int(ipaddress.IPv4Address("10.0.0.1"))

SCENARIO = """
[campaign]
name = "heartbeats-25"
retries = 1
[topology]
name = "lan"
params = { hosts = 4, snooping = true, querier = true, cpu = 0.4, cpu_pin = true, \
cpu_from = "measurement", cpu_period_step_us = 250 }
[agent]
kind = "native"
[matrix]
participants = [25]
modes = ["unicast", "multicast"]
latency_count = [6]
execution_time = 14
heartbeat_timing = ["scaled-discovery"]
[timing]
warmup = 0
converge_timeout = 60
run_timeout = 300
[capture]
points = ["h1-eth0"]
snaplen = 256
window_s = 5
window_settle_s = 4
"""


def test_perftest_timing_at_25x25_on_the_wire(tmp_path: Path) -> None:
    root = run_native_campaign(tmp_path, SCENARIO, timeout=800)
    runs = sorted(p for p in root.iterdir() if p.is_dir() and p.name.startswith("lan-"))
    assert [p.name for p in runs] == ["lan-rel-100B-25x25-multicast-r1",
                                      "lan-rel-100B-25x25-unicast-r1"]
    for run in runs:
        manifest = json.loads((run / "manifest.json").read_text())
        assert manifest["heartbeat_timing"] == "scaled-discovery"
        argvs = [c["argv"] for c in manifest["commands"].values()]
        assert all("-scaleDiscovery" in a and "-scaleSettings" not in a for a in argvs)
        differences = json.dumps(manifest["agent_qos"].get("differences", {}))
        assert "writer.heartbeat_period" not in differences, differences
        wake_ms = manifest["fidelity"]["metrics"]["wakeup_p99_us"] / 1000
        bound = PERFTEST_PERIOD_MS + wake_ms + MARGIN_MS
        pcaps = sorted((run / "pcaps").glob("h1-eth0.w*.pcap"))
        assert pcaps, f"{run.name}: no capture window"
        table = heartbeats.spacing_table(dz.dissect(pcaps[0]), 25, source=H1)
        print(f"{run.name}: wake-up p99 {wake_ms:.1f} ms, bound {bound:.1f} ms; p90 "
              + ", ".join(f"{w.p90_ms:.1f}" for w in table) + " ms; requests "
              + ", ".join(str(w.requests) for w in table))
        assert len(table) >= 5, table  # 25 publishers round-robin on 4 hosts: 6-7 on h1
        for w in table:
            assert w.requests >= 20, (run.name, w)
            assert w.p90_ms <= bound, (run.name, w, bound)
