"""Placement on emulated servers (topologies/servers.py): pure planning, no root."""

from __future__ import annotations

import pytest

import topologies
from mcastlab.errors import TopologyParamError
from topologies import servers


def test_one_server_places_nothing_and_needs_no_vxlan() -> None:
    spec = topologies.resolve("lan", {"hosts": 4})
    assert spec.placement == {} and servers.tunnelled(spec) == []
    assert "vxlan" not in spec.needs


def test_lan_hosts_are_dealt_round_robin_and_their_links_tunnelled() -> None:
    spec = topologies.resolve("lan", {"hosts": 5, "emulated_servers": 2})
    assert spec.placement == {"s1": 1, "h1": 1, "h2": 2, "h3": 1, "h4": 2, "h5": 1}
    assert servers.tunnelled(spec) == [("h2", "s1"), ("h4", "s1")]
    assert "vxlan" in spec.needs


def test_routed_segments_follow_their_router_and_router_links_are_tunnelled() -> None:
    spec = topologies.resolve("routed", {"routers": 3, "hosts": 1, "shape": "ring",
                                         "emulated_servers": 2})
    assert spec.placement == {"s1": 1, "h1": 1, "r1": 1, "s2": 2, "h2": 2, "r2": 2,
                              "s3": 1, "h3": 1, "r3": 1}
    # r1-r2 and r2-r3 cross servers; r3-r1 stays on srv1 (a veth).
    assert servers.tunnelled(spec) == [("r1", "r2"), ("r2", "r3")]


@pytest.mark.parametrize(("family", "params", "says"), [
    ("lan", {"hosts": 2, "emulated_servers": 3}, "at most 2 (the number of hosts)"),
    ("routed", {"routers": 2, "emulated_servers": 3}, "at most 2 (one per router)"),
    ("lan", {"hosts": 4, "emulated_servers": 2, "bw": 10}, "cannot be combined with bw"),
    ("lab", {"emulated_servers": 2}, "cannot be combined with bw"),  # lab's default bw
    ("lan", {"hosts": 4, "emulated_servers": 9}, "allowed: a number in [1, 8]"),
])
def test_impossible_placements_are_refused_naming_the_key(family: str, params: dict,
                                                          says: str) -> None:
    with pytest.raises(TopologyParamError, match="emulated_servers") as err:
        topologies.resolve(family, params)
    assert says in str(err.value)
