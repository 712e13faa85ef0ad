"""On captures of real traffic, our per-kind RTPS submessage counts,
fragment counts, IGMP and PIM counts equal tshark's on the same files.

Bridged runs (Cyclone DDS ``ddsperf``; tcpdump on the bridge ports of h1 and h3)::

    h1   h2   h3   h4          10.77.0.1-4/24, each behind a veth on one Linux bridge
     \\    |    |   /
      +---cbr<tag>---+

Routed run (two pimd routers; r2 is BSR and RP, so r1 registers a's traffic to r2;
tcpdump on r1's link to r2 and on b's link)::

    a --- r1 ===== r2 --- b
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from captures import capture
from captures import dissect as dz
from captures.minilab import BridgeLab, RoutedLab, mcast_receiver, mcast_sender
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
    with RoutedLab() as lab:
        points = {"r1-eth2": (lab.r1, "eth2"), "b-eth0": (lab.b, "eth0")}
        cap = capture.start(lab, points, tmp_path / "pcaps", 0, 0, 0)
        lab.start_pimd(lab.r1)
        lab.start_pimd(lab.r2)
        # b joins 239.1.2.3 (IGMP report to r2); a sends RTPS-framed datagrams. r1, the
        # source's DR, registers them to r2, the static RP, once pimd has resolved the RPF
        # to the RP: 20 s after start here (pimd re-checks it on a timer; the kernel asks
        # again 10 s after each unresolved cache miss). Registers carry RTPS, counted like
        # tshark does.
        recv = mcast_receiver(lab, lab.b, "239.1.2.3", duration=120)
        assert wait_for(lambda: "239.1.2.3" in lab.ns_exec(lab.b, ["ip", "maddr", "show",
                                                                   "dev", "eth0"]), 10)
        send = mcast_sender(lab, lab.a, "239.1.2.3", rate=20, duration=120)
        # Poll the capture, not r1's routes: the Register phase can be over (Register-Stop,
        # native forwarding on eth2) between two looks at `ip mroute`.
        link = next(p for p in cap.points if p.name == "r1-eth2")
        assert wait_for(lambda: _registers_on_disk(link), 60, interval=1.0), (
            "no PIM Register in the r1-eth2 capture 60 s after a began to send",
            lab.ns_exec(lab.r1, ["ip", "mroute"]),
            (lab.workdir / "pimd_r1.log").read_text()[-4000:])
        lab.stop(send)
        lab.stop(recv)
        stats = cap.stop()
    assert all(st["dropped"] is not None for st in stats.values()), stats
    for point in points:
        assert_same(tmp_path / "pcaps" / f"{point}.pcap")
    link = ours(tmp_path / "pcaps" / "r1-eth2.pcap")
    # the router link carries PIM (hellos at least, and registers of a's traffic to the RP)
    assert link.pim["hello"] >= 2 and link.pim["register"] >= 1, link.pim
    assert link.rtps["DATA"] >= 1  # RTPS inside the Registers, counted like tshark does
    assert sum(ours(tmp_path / "pcaps" / "b-eth0.pcap").igmp.values()) >= 1


def _registers_on_disk(point: capture._Point) -> bool:
    """Ask tcpdump to flush its file (SIGUSR2, tcpdump's pcap flush signal) and look for a
    PIM Register in it. tcpdump hands packets on only as its kernel buffer blocks retire
    (1 s timeout), so this is how to know the Register reached the file."""
    os.kill(point.proc.pid, signal.SIGUSR2)
    try:
        return ours(point.pcap).pim["register"] >= 1
    except dz.DissectError:  # nothing flushed yet (not even the file header)
        return False
