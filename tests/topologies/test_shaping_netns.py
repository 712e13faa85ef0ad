"""Link shaping applied and read back on real links.

        h1 -- s1 -- h2

Shaping acts on the egress of every link interface (Mininet's convention), so a ping from
h1 to h2 crosses four shaped egresses: h1-eth0 and s1-eth2 out, h2-eth0 and s1-eth1 back.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import topologies
from tests.helpers import kernel_features, shaped_ping
from topologies import shaping

pytestmark = pytest.mark.timeout(240)

LINK_INTERFACES = ["h1-eth0", "h2-eth0", "s1-eth1", "s1-eth2"]


def test_bandwidth_is_read_back_and_recorded(workdir: Path) -> None:
    spec = topologies.resolve("lan", {"hosts": 2, "bw": 10, "querier": False})
    with topologies.build(spec, workdir=workdir) as net:
        record = net.describe()["shaping"]  # the runner puts describe() in the manifest
    assert record["requested"] == {"bw_mbit": 10.0}
    assert sorted(record["links"]) == LINK_INTERFACES
    for intf in LINK_INTERFACES:
        assert record["links"][intf]["bw_mbit"] == 10.0, record["links"][intf]
        assert record["links"][intf]["qdiscs"] == ["htb"]


def test_shaping_that_did_not_reach_the_links_stops_the_build(
        workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The failure this guards against: a validated parameter that never reached tc.
    Simulated by dropping bw on the way to the links; the read-back refuses the network."""
    monkeypatch.setattr(shaping, "link_params", lambda params: {})
    spec = topologies.resolve("lan", {"hosts": 2, "bw": 10, "querier": False})
    with pytest.raises(RuntimeError, match=r"h1 h1-eth0: bw_mbit None applied, 10 asked for"), \
            topologies.build(spec, workdir=workdir):
        pass


@kernel_features.needs("netem")
def test_delay_and_loss_on_a_two_host_lan(workdir: Path) -> None:
    """delay=10ms, loss=5 per link: RTT >= 4 x 10 ms; an echo survives 4 egresses of 5%
    loss, so the round-trip loss is 1 - 0.95**4 = 18.5%; N pings lose a binomial count,
    accepted within 4.5 standard deviations (false alarm < 1e-5)."""
    count = 1000
    spec = topologies.resolve("lan", {"hosts": 2, "delay": "10ms", "loss": 5, "querier": False})
    with topologies.build(spec, workdir=workdir) as net:
        record = net.describe()["shaping"]
        res = net.run("h1", ["ping", "-n", "-q", "-i", "0.01", "-W", "1", "-c", str(count),
                             net.host_ip("h2")], timeout=120)
    for intf in LINK_INTERFACES:
        assert record["links"][intf]["delay_ms"] == pytest.approx(10.0)
        assert record["links"][intf]["loss_pct"] == pytest.approx(5.0)
    shaped_ping.check(res, egresses=4, delay_ms=10.0, loss_pct=5.0)
