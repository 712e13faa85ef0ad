"""Several servers: a 3x3 campaign, unicast and multicast, over two servers
controlled over ssh (the second one: tests/helpers/second_server.py), on IGMP-snooped
segments joined by PIM routers.

The scenario is experiments/servers-routed.toml (two pimd routers, snooping with the
routers as queriers on both segments) with its emulated servers replaced by a [cluster]
of this machine and the second server: segment 2 (s2, r2 and its pimd, h3, h4) is on
server 2, r1 -- r2 is the tunnel; every node there is made and driven over ssh, its
agents' output streamed back, its capture and wake-up samples fetched back, its CPU
pressure read there. The unicast run discovers by unicast (`discovery = unicast-peers`;
the multicast run's SPDP crosses the routers): pimd's routed SPDP costs 28 s per run (the
first announcement across the routers is lost at their cache miss; Cyclone repeats it
after 30 s), which this suite cannot afford twice. The snooped LAN over the same two
servers is probed in tests/topologies/test_cluster_netns.py (and servers-lan.toml with a
[cluster] ran by hand: docs/cluster.md, "What was verified").
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from mcastlab import __version__, paths
from tests.helpers import kernel_features
from tests.helpers.second_server import SecondServer

pytestmark = pytest.mark.timeout(600)


@pytest.fixture(scope="module")
def server2() -> Iterator[SecondServer]:
    with SecondServer() as srv:
        yield srv


def _scenario(tmp_path: Path, text: str, name: str, srv: SecondServer, extra: str) -> Path:
    """`text` (a scenario on emulated servers) on this machine and `srv` instead."""
    assert ", emulated_servers = 2" in text
    text = text.replace(", emulated_servers = 2", "").replace(
        'name = "servers-routed"', f'name = "{name}"')
    sec = srv.section()
    # Server 2 runs this checkout: the same-code check has nothing to compare (the
    # override lets the test run in an edited checkout too; its record is checked below).
    text += (f"\n{extra}\n[cluster]\nservers = {json.dumps(sec['servers'])}\n"
             f"identity = \"{sec['identity']}\"\nknown_hosts = \"{sec['known_hosts']}\"\n"
             f"allow_unverified_revision = true\n")
    path = tmp_path / f"{name}.toml"
    path.write_text(text)
    return path


@kernel_features.needs("mroute")  # a [cluster] refuses routers with their own kernel
def test_routed_campaign_over_two_ssh_servers(server2: SecondServer, tmp_path: Path) -> None:
    if not os.access(paths.NATIVE_AGENT, os.X_OK):
        pytest.fail(f"{paths.NATIVE_AGENT} is not built (run ./setup.sh)")
    name, remote_hosts = "cluster-routed", {"h3", "h4"}
    text = (paths.EXPERIMENTS_DIR / "servers-routed.toml").read_text()
    assert 'modes = ["unicast", "multicast"]' in text
    text = text.replace('modes = ["unicast", "multicast"]',
                        'modes = ["unicast", "multicast"]\ndiscovery = ["unicast-peers"]')
    # Room for h3's capture window: a window's tcpdump on server 2 starts over ssh when
    # the measurement window opens and listened 4.0-4.7 s later here (6 agents saturating
    # the 2 cores), and the remote agents' discovery spreads the runs' starts: a 12 s run
    # left 6.3 s from full discovery to the first publisher's end, and the window slid
    # past it and held nothing.
    assert "execution_time = 5\n" in text
    text = text.replace("execution_time = 5\n", "execution_time = 20\n")
    scenario = _scenario(tmp_path, text, name, server2,
                         '[capture]\npoints = ["h3-eth0"]\nsnaplen = 128\n'
                         'window_settle_s = 1')
    root = tmp_path / name
    p = subprocess.run([sys.executable, "-m", "mcastlab.cli", "run", str(scenario),
                        "--results", str(root), "--no-progress"], capture_output=True,
                       text=True, timeout=500, check=False)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-3000:]
    runs = sorted(d for d in root.iterdir() if d.is_dir())
    assert [d.name.split("-")[-2] for d in runs] == ["multicast", "peers"], runs
    for run_dir in runs:
        m = json.loads((run_dir / "manifest.json").read_text())
        mode = json.loads((run_dir / "config.json").read_text())["mode"]
        assert m["status"] == "complete" and set(m["exit_codes"].values()) == {0}
        cluster = m["topology"]["cluster"]
        assert set(cluster["placement"]["srv2"]) >= remote_hosts
        # Provenance of server 2, checked before anything was built there.
        srv2 = cluster["servers"]["srv2"]
        assert srv2["version"] == __version__ and srv2["kernel"] and srv2["vxlan"]
        assert srv2["provenance"]["git"] == m["git"] and srv2["provenance"]["versions"]
        # What each server ran (the same checkout), and the override, recorded.
        assert srv2["code"] == cluster["servers"]["srv1"]["code"]
        assert srv2["code"]["revision"] == m["git"]["revision"]
        assert cluster["allow_unverified_revision"] is True
        assert set(cluster["unverified"]) == ({"srv1", "srv2"} if m["git"]["dirty"] else set())
        assert abs(srv2["clock_offset_s"]) <= srv2["clock_error_s"]  # one clock here
        # Subscribers on server 2 got every sample (reliable), streamed back over ssh.
        summary = json.loads((run_dir / "tables" / "summary.json").read_text())
        remote_subs = [a for a, c in m["commands"].items()
                       if a.startswith("sub") and c["host"] in remote_hosts]
        assert remote_subs, m["commands"]
        for sub in remote_subs:
            (tp,) = summary["processes"][sub]["throughput_summary"]
            assert tp["Total Samples"] > 0 and tp["Lost Samples"] == 0, (sub, tp)
        # Fidelity per server, the wake-up samples of server 2's hosts fetched back.
        fid = m["fidelity"]
        assert set(fid["per_server"]) == {"srv1", "srv2"}
        assert fid["per_server"]["srv2"]["cpu_pressure_some_share"] is not None
        for h in remote_hosts & set(fid["per_host"]):
            assert fid["per_host"][h]["wakeup_p99_us"] is not None, h
            assert (run_dir / "logs" / f"wakeup_{h}.json").is_file()
        assert m["not_sampled"]["agents"] == sorted(
            a for a, c in m["commands"].items() if c["host"] in remote_hosts)
        # r2 and its pimd on server 2: r1 is its PIM neighbour through the tunnel.
        assert "r2" in cluster["placement"]["srv2"]
        state = json.loads((run_dir / "logs" / "multicast_state_after.json").read_text())
        r2 = state["routers"]["r2"]
        assert "10.255.1.1" in r2["neighbors"]["r2-eth1"], r2["neighbors"]
        if mode == "multicast":  # the agents' groups routed from r1 into segment 2
            assert any(e["iif"] == "r2-eth1" and e["packets"] > 0 for e in r2["mfc"]), r2
        # The capture on h3 (server 2): its window (<point>.wK.pcap, cut to the window)
        # and its IGMP/PIM capture (<point>.control.pcap) fetched back into the run
        # directory, the window recorded in the manifest.
        pcaps = {f.name for f in (run_dir / "pcaps").iterdir()}
        assert {"h3-eth0.w1.pcap", "h3-eth0.control.pcap"} <= pcaps, pcaps
        win = m["capture_windows"]
        assert [w["index"] for w in win["windows"]] == [1], win
        assert win["windows"][0]["inside"] and win["windows"][0]["points"]["h3-eth0"][
            "packets"] > 0, win
        assert m["capture_drops"]["h3-eth0"]["windows"] == 1
        assert m["capture_drops"]["h3-eth0"]["received"] > 0
    assert server2.processes() == []
