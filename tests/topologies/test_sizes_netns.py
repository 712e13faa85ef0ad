"""Every accepted size builds, delivers and leaves nothing behind.

   h1 (sender) ---+
   h2 (member) ---+
   ...            [ s1 ]   Linux bridge or OVS, snooping and querier on
   hM (member) ---+        1, 39, 40, 150, 250 hosts
   hN (member) ---+

39 -> 40 hosts is where the bridge's start script (3 + N lines) outgrew a pty line (4095
bytes) and reached the shell cut short ("Cannot find device m5"). Each build is followed
by the bounded unicast check and a multicast stream to three members: every member gets
>= 99% of it, every non-member's interface 0 frames (the switch prunes), and after
teardown no process, link, ledger or state directory of the testbed remains.

routed at its bounds: 100 hosts per segment (2 routers) and 60 routers (4 hosts each),
pimd, every router converged (neighbours, RP). The 60-router line streams to members up
to 4 routers away: pimd 2.3.2 passes a Join up one hop per timer tick, so a member 59
routers away took 150 s to get its first packet (measured 2026-11-25), most of a CI run's
budget for the same check of forwarding.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

import topologies
from mcastlab import ledger
from mcastlab.paths import STATE_DIR
from tests.helpers import kernel_features
from topologies import probe

pytestmark = pytest.mark.timeout(600)

COUNT = 300  # packets in the counted stream


def _members(n: int) -> list[str]:
    """Three members spread over the LAN (fewer on tiny LANs), never the sender h1."""
    return sorted({f"h{i}" for i in (2, n // 2 + 1, n) if 2 <= i <= n}, key=lambda h: int(h[1:]))


def _leftovers(tag: str, procs: list[dict[str, Any]]) -> list[str]:
    import subprocess

    left = [f"{e['what']} pid {e['pid']} on {e['node']}" for e in procs
            if ledger.proc_alive(e["pid"], e["start"])]
    if (STATE_DIR / f"{tag}.ledger").exists():
        left.append("ledger")
    if (STATE_DIR / tag).exists():
        left.append(f"state directory {STATE_DIR / tag}")
    links = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True).stdout
    left += [f"link {line.split(':')[1].strip()}" for line in links.splitlines() if tag in line]
    return left


def _check_plane_priority(procs: list[dict[str, Any]], daemon: str) -> None:
    """The network's daemons run above the hosts (topologies/net.py, PLANE_REALTIME)."""
    pids = [e["pid"] for e in procs
            if e["what"] == daemon and ledger.proc_alive(e["pid"], e["start"])]
    assert pids, f"no {daemon} running from the ledger"
    assert {os.sched_getscheduler(pid) for pid in pids} == {os.SCHED_RR}


def _check_stream(r: dict[str, Any], members: list[str]) -> None:
    for m in members:
        assert r["hosts"][m]["received"] >= 0.99 * COUNT, (m, r["hosts"][m])
    flooded = {h: v["wire"] for h, v in r["hosts"].items() if not v["member"] and v["wire"]}
    # Snooping with a querier (bridge) or OVS snooping: the stream leaves only the members'
    # ports, so no non-member's interface sees one frame of it.
    assert flooded == {}, flooded
    assert r["ok"], r["problems"]


@pytest.mark.parametrize("switch", ["linuxbridge", "ovs"])
# 1, the 40-host line of an old pty limit on either side, the study's largest LAN (75
# publishers + 75 subscribers, one per host) and the family's bound.
@pytest.mark.parametrize("hosts", [1, 39, 40, 150, 250])
def test_lan_builds_delivers_and_cleans_up(workdir: Path, hosts: int, switch: str) -> None:
    spec = topologies.resolve("lan", {"hosts": hosts, "switch": switch, "snooping": "on",
                                      "querier": "on"})
    with topologies.build(spec, workdir=workdir) as net:
        tag = net.tag
        procs = [e for e in net.ledger.entries if e["kind"] == "proc"]
        assert len(net.switch_ports("s1")) == hosts
        net.wait_converged(60)
        reach = probe.reachability_report(net)
        assert not any(reach["unreachable"].values()), reach["unreachable"]
        assert reach["not_checked"] == []
        assert reach["pairs_checked"] == len(probe.ping_plan(hosts))
        members = _members(hosts)
        r = probe.probe(net, "h1", members, count=COUNT, rate=500)
        assert r["sent"] == COUNT
        _check_stream(r, members)
        if switch == "ovs":
            _check_plane_priority(procs, "ovs-vswitchd")
        mdb = r["multicast_state"]["switches"]["s1"]["mdb"]
        if members:
            assert sorted(mdb[probe.GROUP]) == sorted(
                logical for logical, _real, peer in net.switch_ports("s1") if peer in members)
        procs = [e for e in net.ledger.entries if e["kind"] == "proc"]
    assert _leftovers(tag, procs) == []


@kernel_features.routed
@pytest.mark.parametrize(("routers", "hosts"), [(2, 100), (60, 4)])
def test_routed_at_its_bounds_builds_delivers_and_cleans_up(workdir: Path, routers: int,
                                                            hosts: int) -> None:
    spec = topologies.resolve("routed", {"routers": routers, "hosts": hosts})
    last = f"h{routers * hosts}"
    with topologies.build(spec, workdir=workdir) as net:
        tag = net.tag
        net.wait_converged(300)
        # 2 routers: across the domain; 60: the sender's segment, the next, 4 routers away.
        members = ["h2", last] if routers == 2 else ["h2", f"h{hosts + 1}", f"h{4 * hosts + 1}"]
        # TTL above the number of routers on the way (a line of 60).
        r = probe.probe(net, "h1", members, count=COUNT, rate=500, ttl=routers + 4)
        for m in members:
            assert r["hosts"][m]["received"] >= 0.99 * COUNT, (m, r["hosts"][m])
        assert r["ok"], r["problems"]
        procs = [e for e in net.ledger.entries if e["kind"] == "proc"]
        # With routers of their own kernel (router_kernel=uml) that kernel is the router's
        # network plane (pimd's process here is its command client).
        _check_plane_priority(procs, "linux.uml" if net.uml else "pimd")
    assert _leftovers(tag, procs) == []

