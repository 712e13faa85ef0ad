"""On captures of real traffic, our per-kind RTPS submessage counts,
fragment counts, IGMP and PIM counts equal tshark's on the same files.

Bridged runs (Cyclone DDS ``ddsperf``; tcpdump on the bridge ports of h1 and h3)::

    h1   h2   h3   h4          10.77.0.1-4/24, each behind a veth on one Linux bridge
     \\    |    |   /
      +---cbr<tag>---+

Routed run (topologies' routed network, two pimd routers; r2 is the RP, so r1 registers
h1's traffic to r2; tcpdump on r1's link to r2 and on h2's link)::

    h1 --[ s1 ]-- r1 ===== r2 --[ s2 ]-- h2
"""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path

import pytest

import topologies
from captures import capture
from captures import dissect as dz
from captures.minilab import BridgeLab, mcast_receiver, mcast_sender
from tests.helpers import kernel_features
from tests.helpers.tshark_ref import ours, tshark_figures
from topologies.net import wait_for

pytestmark = pytest.mark.timeout(300)

DURATION_S = 4


def assert_same(pcap: Path) -> None:
    mine, ref = ours(pcap), tshark_figures(pcap)
    assert mine.packets == ref.packets
    assert dict(mine.rtps) == dict(ref.rtps), pcap
    assert mine.fragments == ref.fragments
    assert dict(mine.igmp) == dict(ref.igmp)
    assert dict(mine.pim) == dict(ref.pim)


@pytest.mark.parametrize(("pairs", "multicast"), [(1, False), (1, True), (10, False), (10, True)],
                         ids=["1x1-unicast", "1x1-multicast", "10x10-unicast", "10x10-multicast"])
def test_ddsperf_counts_equal_tshark(tmp_path: Path, pairs: int, multicast: bool) -> None:
    hosts = 2 if pairs == 1 else 4
    # 1x1: bursts of 200 samples, packed by Cyclone into ~14 KB datagrams (IP fragments)
    rate = ["25Hz", "burst", "200"] if pairs == 1 else ["300Hz"]
    with BridgeLab(hosts=hosts, snooping=False) as lab:
        points = {"h1": (None, lab.ports[0]), f"h{hosts}": (None, lab.ports[-1])}
        cap = capture.start(lab, points, tmp_path / "pcaps", 0, 0, 0)
        env = lab.cyclone_env(multicast)
        procs = []
        for i in range(pairs):  # publishers on the first half of the hosts, subscribers after
            pub_host = lab.hosts[i % (hosts // 2)]
            sub_host = lab.hosts[hosts // 2 + i % (hosts // 2)]
            procs.append(lab.popen(sub_host, ["ddsperf", "-D", str(DURATION_S), "sub"], env=env))
            procs.append(lab.popen(pub_host, ["ddsperf", "-D", str(DURATION_S), "pub", *rate,
                                              "size", "100"], env=env))
        for p in procs:
            p.wait(DURATION_S + 20)
        # The last packets may still be in tcpdump's buffer at SIGINT and be lost: both
        # counts below read the same file, and > 100 captured does not depend on them.
        stats = cap.stop()
    for point, st in stats.items():
        assert st["captured"] and st["captured"] > 100, (point, st)
        assert st["dropped"] is not None, (point, st)  # tcpdump's exit statistics parsed
    for point in points:
        assert_same(tmp_path / "pcaps" / f"{point}.pcap")
    # a big-enough run fragments: Cyclone packs samples into datagrams above the MTU
    if pairs == 1:
        assert ours(tmp_path / "pcaps" / "h1.pcap").fragments > 0


@kernel_features.routed
def test_routed_pim_igmp_counts_equal_tshark(tmp_path: Path) -> None:
    """A routed network as scenarios build it (routers on the host's kernel, or each on its
    own user-mode kernel where the host's cannot route multicast):

        h1 --[ s1 ]-- r1 ========== r2 (RP) --[ s2 ]-- h2
                         r1-eth1 (captured)                h2-eth0 (captured)
    """
    spec = topologies.resolve("routed", {"routers": 2, "hosts": 1, "rp_router": "r2"})
    with topologies.build(spec, workdir=tmp_path / "net") as net:
        net.wait_converged(90)
        points = {p: net.capture_points()[p] for p in ("r1-eth1", "h2-eth0")}
        cap = capture.start(net, points, tmp_path / "pcaps", 0, 0, 0)
        # h2 joins 239.1.2.3 (IGMP report to r2); h1 sends RTPS-framed datagrams. r1, the
        # source's DR, registers them to r2, the static RP, once pimd has resolved the RPF
        # to the RP (pimd re-checks it on a timer; the kernel asks again 10 s after each
        # unresolved cache miss). Registers carry RTPS, counted like tshark does.
        recv = mcast_receiver(net, "h2", "239.1.2.3", duration=120)
        assert wait_for(lambda: "239.1.2.3" in net.cmd("h2", "ip maddr show dev h2-eth0"), 10)
        send = mcast_sender(net, "h1", "239.1.2.3", rate=20, duration=120)
        # Poll the capture, not r1's routes: the Register phase can be over (Register-Stop,
        # native forwarding) between two looks at the routes.
        link = next(p for p in cap.points if p.name == "r1-eth1")
        assert wait_for(lambda: _registers_on_disk(link), 60, interval=1.0), (
            "no PIM Register in the r1-eth1 capture 60 s after h1 began to send",
            net.cmd("r1", "ip mroute"), (net.workdir / "pimd_r1.log").read_text()[-4000:])
        for proc in (send, recv):
            with contextlib.suppress(RuntimeError):
                net.interrupt(proc, wait=5)
        stats = cap.stop()
    assert all(st["dropped"] is not None for st in stats.values()), stats
    for point in points:
        assert_same(tmp_path / "pcaps" / f"{point}.pcap")
    link_counts = ours(tmp_path / "pcaps" / "r1-eth1.pcap")
    # the router link carries PIM (registers of h1's traffic to the RP at least)
    assert link_counts.pim["register"] >= 1, link_counts.pim
    assert link_counts.rtps["DATA"] >= 1  # RTPS inside the Registers, counted like tshark does
    assert sum(ours(tmp_path / "pcaps" / "h2-eth0.pcap").igmp.values()) >= 1


def _registers_on_disk(point: capture._Point) -> bool:
    """Ask tcpdump to flush its file (SIGUSR2, tcpdump's pcap flush signal) and look for a
    PIM Register in it. tcpdump hands packets on only as its kernel buffer blocks retire
    (1 s timeout), so this is how to know the Register reached the file."""
    os.kill(point.proc.pid, signal.SIGUSR2)
    try:
        return ours(point.pcap).pim["register"] >= 1
    except dz.DissectError:  # nothing flushed yet (not even the file header)
        return False
