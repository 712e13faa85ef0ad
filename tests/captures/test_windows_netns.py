"""Capture windows on real runs (captures/windows.py, experiments/capture_windows.py).

    h1 (pub0) -- s1 -- h2 (sub0)        capture window on h1-eth0

1. No packet from discovery or from the test's ending enters the wire tables. The real
   runner (in this process) runs one paced 1x1 run (2000 samples/s, 14 s) with a 5 s
   capture window, and, besides, one tcpdump on h1-eth0 over the whole run: the
   reference. From the reference's packets alone: discovery ends with the SEDP
   announcements and the publisher's first sample; the ending starts with its last
   sample (FINISHED and the endpoints' SEDP disposals follow). The window must lie between
   them (5 s after discovery, >= 1 s before the last sample), hold exactly the
   reference's packets of [start, end), and its wire tables must hold no SEDP topic and
   no sample of the ending.
2. A campaign of 1x1 and 3x3, both modes, unpaced (``mcastlab run``): every run's window
   lies inside its measurement window, covers 5 s, and the modes' windows at each count
   differ by at most 10% in length (``mcastlab windows``); the report names them.
"""

from __future__ import annotations

import ipaddress
import json
import os
import re
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from captures import capture, wire
from captures import dissect as dz
from experiments.runner import CampaignRunner
from mcastlab import paths, testbed

pytestmark = pytest.mark.timeout(600)

PACED = """
[campaign]
name = "windows"
retries = 0
[topology]
name = "lan"
params = { hosts = 2, querier = false }
[matrix]
participants = [1]
modes = ["unicast"]
pub_rate = [2000]
latency_count = [100]
execution_time = 14
[capture]
points = ["h1-eth0"]
window_s = 5
[timing]
run_timeout = 60
"""

CAMPAIGN = """
[campaign]
name = "windows-matrix"
retries = 1
[topology]
name = "lan"
params = { hosts = 4, snooping = true, querier = false }
[matrix]
participants = [1, 3]
modes = ["unicast", "multicast"]
execution_time = 12
[capture]
points = ["h1-eth0"]
[timing]
run_timeout = 90
"""


def _need_native_agent() -> None:
    if not os.access(paths.NATIVE_AGENT, os.X_OK):
        pytest.fail(f"{paths.NATIVE_AGENT} is not built (run ./setup.sh)")


class ReferenceRunner(CampaignRunner):
    """The campaign runner, plus a tcpdump over the whole run on h1-eth0 (``reference/``
    in the run directory), started with the run's captures and stopped after them."""

    reference: Any = None

    def _start_captures(self, net: testbed.Testbed, cfg: dict[str, Any], work: Path,
                        prog: Any) -> Any:
        handle = super()._start_captures(net, cfg, work, prog)
        self.reference = capture.start(net, {"h1-eth0": net.capture_points()["h1-eth0"]},
                                       work / "reference", 65535, 0, 0)
        return handle

    def _record_windows(self, capture_handle: Any, cfg: dict[str, Any], out: dict[str, Any],
                        prog: Any) -> None:
        self.reference.stop()
        CampaignRunner._record_windows(capture_handle, cfg, out, prog)


def _stamps(path: Path) -> list[float]:
    """Every record's timestamp of a classic µs pcap (tcpdump's)."""
    data = path.read_bytes()
    out, pos = [], 24
    while pos + 16 <= len(data):
        sec, usec, incl, _ = struct.unpack_from("<IIII", data, pos)
        out.append(sec + usec / 1e6)
        pos += 16 + incl
    return out


def _user_data_of(d: dz.Dissection, src: int) -> pd.DataFrame:
    """(ts, sn) of the user DATA first sent from address ``src`` (the publisher's samples;
    its last sn is FINISHED)."""
    sb = d.subs
    fr = d.frames[sb["frame"]]
    keep = ((sb["id"] == 0x15) & (sb["cls"] == dz.C_USER) & (sb["quoted"] == 0)
            & (fr["src"] == src) & ~d.repair)
    return pd.DataFrame({"ts": fr["ts"][keep], "sn": sb["seq"][keep]})


def test_no_packet_of_discovery_or_of_the_ending_enters_the_wire_tables(tmp_path: Path) -> None:
    _need_native_agent()
    scen = tmp_path / "windows.toml"
    scen.write_text(PACED)
    runner = ReferenceRunner(scen, tmp_path / "results", progress=False)
    assert runner.run() == 0
    run = next(p for p in (tmp_path / "results").iterdir() if (p / "manifest.json").exists())
    man = json.loads((run / "manifest.json").read_text())
    rec = man["capture_windows"]
    (win,) = rec["windows"]
    start, end = win["start"], win["end"]
    assert win["s"] == pytest.approx(5.0, abs=0.01) and win["inside"], rec
    # 5 s after full discovery (window_settle_s), later only if tcpdump listened late
    assert win["offset_s"] == pytest.approx(5.0 + win["late_s"], abs=0.01), win
    mw = rec["measurement_window"]
    assert mw["start"] <= start < end <= mw["end"], rec

    # The reference: the whole run, as h1-eth0 saw it.
    h1 = int(ipaddress.IPv4Address(json.loads(
        (run / "pcaps" / "points.json").read_text())["h1-eth0"]["ips"][0]))
    ref_file = run / "reference" / "h1-eth0.pcap"
    ref = dz.dissect(ref_file)
    sedp_ts = ref.frames["ts"][ref.topics["frame"]]
    samples = _user_data_of(ref, h1).sort_values("ts")
    finished_sn = int(samples["sn"].max())
    last_sample_ts = float(samples.loc[samples["sn"] == finished_sn - 1, "ts"].min())
    finished_ts = float(samples.loc[samples["sn"] == finished_sn, "ts"].min())
    first_sample_ts = float(samples["ts"].min())
    assert len(samples) > 10_000, len(samples)
    # discovery (SEDP announcements), the samples, then the ending (the last sample,
    # FINISHED, the endpoints' SEDP disposals as the agents exit); the window between
    assert (sedp_ts < first_sample_ts).sum() >= 2, sedp_ts
    assert not ((sedp_ts >= start) & (sedp_ts < end)).any(), (sedp_ts, start, end)
    assert first_sample_ts + 4 < start, (first_sample_ts, start)
    assert end < last_sample_ts - 0.5 < finished_ts, (end, last_sample_ts, finished_ts)

    # The window's file holds exactly the reference's packets of [start, end) ...
    stamps = _stamps(run / "pcaps" / "h1-eth0.w1.pcap")
    ref_stamps = np.array(_stamps(ref_file))
    assert stamps and min(stamps) >= start and max(stamps) < end
    in_window = int(((ref_stamps >= start) & (ref_stamps < end)).sum())
    assert len(stamps) == in_window == win["packets"], (len(stamps), in_window, win)
    assert len(ref_stamps) > 2 * in_window  # the run holds much more than the window

    # ... and so do its wire tables: no SEDP, no sample of the ending, rates per window s.
    summary = json.loads((run / "wire" / "summary.json").read_text())
    assert summary["packets"] == in_window and summary["duration_s"] == win["s"]
    assert summary["windows"]["windows"][0]["start"] == start
    assert pd.read_parquet(run / "wire" / "topics.parquet").empty
    windowed = _user_data_of(dz.dissect(run / "pcaps" / "h1-eth0.w1.pcap"), h1)
    assert len(windowed) > 5_000 and windowed["sn"].max() < finished_sn - 1000
    nacks = pd.read_parquet(run / "wire" / "nacks.parquet")
    assert nacks.empty or nacks["ts"].between(start, end).all()
    # The same analysis over the whole run (the reference) sees discovery and the ending.
    whole = wire.analyse_pcaps({"h1-eth0": [ref_file]}, tmp_path / "whole")
    assert whole["packets"] == len(ref_stamps) > summary["packets"]
    assert not pd.read_parquet(tmp_path / "whole" / "topics.parquet").empty


def test_campaign_windows_inside_measurement_windows_same_length_both_modes(
        tmp_path: Path) -> None:
    _need_native_agent()
    scen = tmp_path / "matrix.toml"
    scen.write_text(CAMPAIGN)
    root = tmp_path / "results"
    res = subprocess.run([sys.executable, "-m", "mcastlab.cli", "run", str(scen), "--results",
                          str(root)], capture_output=True, text=True,
                         timeout=500, cwd=paths.REPO_ROOT, check=False)
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    assert "capture: 5.0 s inside the measurement window" in res.stdout + res.stderr
    chk = subprocess.run([sys.executable, "-m", "mcastlab.cli", "windows", str(root), "--json"],
                         capture_output=True, text=True, timeout=60, cwd=paths.REPO_ROOT,
                         check=False)
    out = json.loads(chk.stdout)
    assert chk.returncode == 0 and out["failures"] == [], out
    assert len(out["runs"]) == 4
    for r in out["runs"]:
        assert r["window_s"] == pytest.approx(5.0, abs=0.01) and r["inside"], r
        assert r["packets"] > 0 and r["measurement_s"] > r["window_s"], r
    rep = subprocess.run([sys.executable, "-m", "mcastlab.cli", "report", str(root)],
                         capture_output=True, text=True, timeout=300, cwd=paths.REPO_ROOT,
                         check=False)
    assert rep.returncode == 0, rep.stderr[-2000:]
    md = (root / "report" / "report.md").read_text()
    for count in ("1×1", "3×3"):
        assert re.search(rf"- {count}: 5\.0 s inside the measurement window, from 5\.\d s "
                         r"after full discovery, both modes", md), md[-3000:]
