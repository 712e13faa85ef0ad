"""On one machine: networks whose nodes are on two emulated servers (namespaces
joined by an underlay), their cross-server links VXLAN tunnels (topologies/servers.py).

   srv1                                    srv2
   h1 (sender) --+                    +-- h2 (member)    } each a VXLAN tunnel over
   h3 (member) --[ s1 ]====tunnels====+-- h4 (non-member)} 10.254.0.1 <-> 10.254.0.2

What this shows: multicast, IGMP and snooping cross the tunnels as they cross a veth (the
bridge learns the member behind its tunnel port and prunes the non-member behind the
other), and the stream really crossed the underlay. PIM across a tunnel, and campaigns,
are tested over two servers controlled over ssh (tests/topologies/test_cluster_netns.py,
tests/experiments/test_cluster_campaign_netns.py), whose tunnels are the same VXLAN pairs;
the routed network on emulated servers is built and cleaned in test_cleanup_netns.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import topologies
from topologies import probe, servers

pytestmark = pytest.mark.timeout(240)

COUNT = 1000


def test_snooping_lan_across_two_servers_delivers_and_prunes_through_the_tunnels(
        workdir: Path) -> None:
    spec = topologies.resolve("lan", {"hosts": 4, "snooping": True, "querier": True,
                                      "emulated_servers": 2})
    with topologies.build(spec, workdir=workdir) as net:
        net.wait_converged(60)
        before = net.servers.underlay_counters()
        r = probe.probe(net, "h1", ["h2", "h3"], count=COUNT, rate=1000)
        after = net.servers.underlay_counters()
        kinds = {n: net.cmd(n, f"ip -d -o link show {n}-eth0") for n in spec.hosts}
        described = net.describe()["emulated_servers"]
    assert described["placement"] == {"srv1": ["s1", "h1", "h3"], "srv2": ["h2", "h4"]}
    assert [t["link"] for t in described["tunnels"]] == ["h2-s1", "h4-s1"]
    # h2 and h4 reach the switch through VXLAN devices, h1 and h3 through veths; every
    # interface has the tunnels' MTU.
    for h, text in kinds.items():
        assert ("vxlan id" in text) == (h in ("h2", "h4")), text
        assert f"mtu {servers.TUNNEL_MTU} " in text, text
    hosts = r["hosts"]
    assert hosts["h2"]["received"] >= 0.99 * COUNT, hosts  # the member behind a tunnel
    assert hosts["h3"]["received"] >= 0.99 * COUNT, hosts
    assert hosts["h4"]["wire"] == 0, hosts  # pruned: its tunnel carried none of the stream
    assert r["multicast_state"]["switches"]["s1"]["mdb"]["239.1.2.3"] == ["s1-eth2", "s1-eth3"]
    # The stream to h2 crossed the underlay: srv1 sent at least one datagram per sample.
    sent = after["srv1"]["tx_packets"] - before["srv1"]["tx_packets"]
    assert sent >= hosts["h2"]["received"], (before, after)
    assert r["ok"]
