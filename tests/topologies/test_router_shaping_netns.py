"""Delay and loss on routed links where the host kernel has no netem: the routers apply it.

    h1 -- s1 -- r1 ==== r2 -- s2 -- h2        netem on every router link interface

``router_delay``/``router_loss`` put netem on the egress of r1-eth0, r1-eth1, r2-eth0 and
r2-eth1, in the kernel that routes: the host's where it has sch_netem, else each router's
own user-mode Linux kernel (router_kernel=auto takes "uml" there), which loads the
sch_netem of its own modules. A ping from h1 to h2 crosses two shaped egresses each way
(r1 toward r2 and r2 toward s2, back r2 toward r1 and r1 toward s1): RTT >= 4 x 10 ms, and
an echo survives 4 egresses of 5% loss with probability 0.95**4.

Measured (2026-12-07, user-mode routers): 1000 pings 10 ms apart, RTT 40.4 / 40.9 /
54.2 ms (min/avg/max), 17.6% lost (18.5% expected); the test sends 600, 5 ms apart.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import topologies
from mcastlab import capabilities
from tests.helpers import shaped_ping

pytestmark = [pytest.mark.netns, pytest.mark.timeout(300),
              pytest.mark.skipif(not (capabilities.detect()["netem"]
                                      or capabilities.detect()["uml"]),
                                 reason=f"{capabilities.MESSAGES['netem'][0]} and "
                                        f"{capabilities.MESSAGES['uml'][0]}")]

ROUTER_INTERFACES = ["r1-eth0", "r1-eth1", "r2-eth0", "r2-eth1"]


def test_router_delay_and_loss_are_applied_read_back_and_felt(workdir: Path) -> None:
    count = 600
    spec = topologies.resolve("routed", {"routers": 2, "hosts": 1, "mrouting": "none",
                                         "router_delay": "10ms", "router_loss": 5})
    kernel = spec.params["router_kernel"]
    assert kernel == ("host" if capabilities.detect()["netem"] else "uml"), spec.params
    with topologies.build(spec, workdir=workdir) as net:
        record = net.describe()["shaping"]["routers"]
        src, dst = "h1", "h2"
        net.run(src, ["ping", "-n", "-q", "-c", "3", net.host_ip(dst)], timeout=30)  # ARP
        res = net.run(src, ["ping", "-n", "-q", "-i", "0.005", "-W", "1", "-c", str(count),
                            net.host_ip(dst)], timeout=120)
    assert record["kernel"] == ("user-mode" if kernel == "uml" else "host"), record
    assert sorted(record["links"]) == ROUTER_INTERFACES, record
    for intf in ROUTER_INTERFACES:
        assert record["links"][intf]["qdiscs"] == ["netem"], record["links"][intf]
        assert record["links"][intf]["delay_ms"] == pytest.approx(10.0)
        assert record["links"][intf]["loss_pct"] == pytest.approx(5.0)
    shaped_ping.check(res, egresses=4, delay_ms=10.0, loss_pct=5.0)
