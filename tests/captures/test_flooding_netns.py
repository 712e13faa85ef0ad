"""Multicast user data flooded to a port whose host is no member shows in
the flooding table with snooping off, and does not with snooping on (bridge querier).

    h1 (ddsperf pub)   h2 (sub)   h3 (sub)   h4 (no DDS, no member)
         \\               |          |          /
          +------------- cbr<tag> -------------+     tcpdump on each bridge port

Two subscribers make Cyclone send the data to its multicast group (with one reader it
would send unicast). Membership comes from the IGMP reports in each port's capture.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from captures import capture, wire
from captures.minilab import BridgeLab
from topologies.net import wait_for

pytestmark = pytest.mark.timeout(120)

SPDP_GROUP = "239.255.0.1"  # Cyclone DDS's default multicast group (discovery and data)


def run_bridge(run_dir: Path, snooping: bool) -> pd.DataFrame:
    with BridgeLab(hosts=4, snooping=snooping) as lab:
        points = {f"h{i + 1}-port": (None, port) for i, port in enumerate(lab.ports)}
        ips = {f"h{i + 1}-port": [f"10.77.0.{i + 1}"] for i in range(4)}
        cap = capture.start(lab, points, run_dir / "pcaps", 0, 0, 0, local_ips=ips)
        env = lab.cyclone_env(True)
        subs = [lab.popen(lab.hosts[i], ["ddsperf", "-D", "4", "sub"], env=env) for i in (1, 2)]
        # the subscribers are members (joined Cyclone's group 239.255.0.1) before data flows
        joined = wait_for(lambda: all(SPDP_GROUP in lab.ns_exec(lab.hosts[i], [
            "ip", "maddr", "show", "dev", "eth0"]) for i in (1, 2)), 10)
        assert joined, [lab.ns_exec(lab.hosts[i], ["ip", "maddr"]) for i in (1, 2)]
        pub = lab.popen(lab.hosts[0], ["ddsperf", "-D", "3", "pub", "1kHz", "size", "100"],
                        env=env)
        for p in (pub, *subs):
            p.wait(30)
        cap.stop()
    summary = wire.analyse_run(run_dir)
    on_disk = json.loads((run_dir / "wire" / "summary.json").read_text())
    assert on_disk == summary
    fl = pd.read_parquet(run_dir / "wire" / "flooding.parquet")
    assert summary["flooded_frames"] == int(fl.loc[fl["flooded"], "frames"].sum())
    return fl


def test_flooding_snooping_off_shows_the_non_member_port(tmp_path: Path) -> None:
    fl = run_bridge(tmp_path / "run", snooping=False)
    flooded = fl[fl["flooded"]]
    assert set(flooded["point"]) == {"h4-port"}, fl
    assert int(flooded["frames"].sum()) > 100  # ~3000 samples were published
    members = fl[~fl["flooded"]]
    assert {"h2-port", "h3-port"} <= set(members["point"])


def test_flooding_snooping_on_shows_none(tmp_path: Path) -> None:
    fl = run_bridge(tmp_path / "run", snooping=True)
    assert fl.empty or not fl["flooded"].any(), fl
    assert {"h2-port", "h3-port"} <= set(fl["point"])  # data did reach the members
    assert int(fl["frames"].sum()) > 100
