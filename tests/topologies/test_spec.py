"""Pure-logic tests of topology plans, parameters and capability messages (no root)."""

from __future__ import annotations

import pytest

import topologies
from mcastlab import capabilities
from mcastlab.errors import TopologyParamError
from topologies.spec import shortest_next_hops


def test_lan_defaults_and_names() -> None:
    spec = topologies.resolve("lan", {})
    assert topologies.host_names(spec) == ["h1", "h2", "h3", "h4"]
    assert spec.host_ip("h3") == "10.0.0.3"
    assert spec.switches == {"s1": ["h1", "h2", "h3", "h4"]}
    assert spec.params["snooping"] is True and spec.params["igmp"] == "3"


def test_lab_and_production_defaults() -> None:
    lab = topologies.resolve("lab", {})
    prod = topologies.resolve("production", {})
    assert (len(lab.hosts), lab.params["bw"]) == (2, 100.0)
    assert (len(prod.hosts), prod.params["bw"]) == (21, 1000.0)
    assert "htb" in prod.needs


@pytest.mark.parametrize(
    ("name", "params", "fragment"),
    [
        ("lan", {"snooping": "maybe"}, "'snooping' = 'maybe' is not allowed; allowed: on/off"),
        ("lan", {"hosts": 0}, "'hosts' = 0 is not allowed; allowed: a number in [1, 250]"),
        ("lan", {"colour": "red"}, "unknown parameter 'colour'; allowed: hosts, bw"),
        ("lan", {"switch": "cisco"}, "allowed: linuxbridge | ovs | ovs-user | ovs-kernel"),
        ("routed", {"shape": "ring", "routers": 2}, "shape=ring needs routers >= 3"),
        ("routed", {"rp_router": "r9"}, "'rp_router' = 'r9' is not allowed; allowed: r1 | r2"),
        ("routed", {"mrouting": "smcroute", "smc_to": "s7"}, "'smc_to' names 's7'"),
        ("mesh", {}, "unknown topology 'mesh'; allowed: lan, routed, lab, production"),
    ],
)
def test_bad_parameters_name_key_and_allowed_values(name: str, params: dict, fragment: str) -> None:
    with pytest.raises(TopologyParamError) as err:
        topologies.resolve(name, params)
    assert fragment in str(err.value)


def test_routed_line_addresses_and_static_routes() -> None:
    spec = topologies.resolve("routed", {"routers": 3, "hosts": 2})
    assert spec.switches["s2"] == ["h3", "h4", "r2"]
    assert spec.addresses["r2"] == {"r2-eth0": "10.0.2.254/24", "r2-eth1": "10.255.1.2/24",
                                    "r2-eth2": "10.255.2.1/24"}
    # r1 reaches segment 3 and link 2 through r2 (10.255.1.2).
    assert ("10.0.3.0/24", "10.255.1.2") in spec.routes["r1"]
    assert ("10.255.2.0/24", "10.255.1.2") in spec.routes["r1"]
    assert spec.gateways["h5"] == "10.0.3.254"


def test_ring_has_two_paths_and_uses_the_shortest() -> None:
    spec = topologies.resolve("routed", {"routers": 4, "shape": "ring"})
    assert spec.router_links == [("r1", "r2"), ("r2", "r3"), ("r3", "r4"), ("r4", "r1")]
    table = dict(spec.routes["r1"])
    assert table["10.0.2.0/24"] == "10.255.1.2"  # direct to r2
    assert table["10.0.4.0/24"] == "10.255.4.1"  # direct to r4 over the closing link
    # r3 is two hops both ways; the tie goes to the first-listed neighbour (r2).
    assert table["10.0.3.0/24"] == "10.255.1.2"


def test_shortest_next_hops_ties_to_first_neighbour() -> None:
    adj = {"a": ["b", "c"], "b": ["a", "d"], "c": ["a", "d"], "d": ["b", "c"]}
    assert shortest_next_hops(adj, "a") == {"b": "b", "c": "c", "d": "b"}


def test_smcroute_routes_follow_the_path_to_chosen_segments_only() -> None:
    spec = topologies.resolve("routed", {"routers": 3, "mrouting": "smcroute", "smc_to": "s2",
                                         "smc_mode": "sg", "smc_groups": "239.1.2.3"})
    routes = spec.params["smc_routes"]
    assert routes == {
        "r1": [{"iif": "r1-eth0", "source": "10.0.1.1", "group": "239.1.2.3", "oifs": ["r1-eth1"]}],
        "r2": [{"iif": "r2-eth1", "source": "10.0.1.1", "group": "239.1.2.3", "oifs": ["r2-eth0"]}],
    }
    assert "r3" not in routes


def test_delay_needs_netem_and_message_names_alternative(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(capabilities, "detect", lambda: {"netem": False, "mininet": True,
                                                        "bridge": True})
    spec = topologies.resolve("lan", {"delay": "5ms"})
    missing = topologies.missing_capabilities(spec)
    assert missing == ["netem qdisc unavailable (sch_netem module missing), needed for "
                       "delay/loss: drop the delay/loss parameters or run on a machine with "
                       "sch_netem"]


def test_routed_beyond_its_host_bound_is_refused_with_the_reason() -> None:
    with pytest.raises(TopologyParamError, match=r"60 x 100 = 6000 hosts.*at most 250"):
        topologies.resolve("routed", {"routers": 60, "hosts": 100})
    assert len(topologies.resolve("routed", {"routers": 2, "hosts": 100}).hosts) == 200
    assert len(topologies.resolve("routed", {"routers": 60, "hosts": 4}).hosts) == 240


def test_ping_plan_covers_every_host_as_sender_and_target() -> None:
    from collections import Counter

    from topologies.probe import ALL_PAIRS_MAX, ping_plan

    for n in (2, 16, 17, 40, 150, 250):
        plan = ping_plan(n)
        assert len(set(plan)) == len(plan) and all(i != j for i, j in plan)
        sent, answered = Counter(i for i, _ in plan), Counter(j for _, j in plan)
        assert set(sent) == set(answered) == set(range(n))
        if n * (n - 1) <= ALL_PAIRS_MAX:
            assert len(plan) == n * (n - 1)
        else:  # bounded: a fixed number per host, not n - 1
            assert max(sent.values()) == max(answered.values()) == 4


def test_a_build_error_is_one_bounded_line_naming_step_node_and_log() -> None:
    from mcastlab.errors import BuildError

    detail = "RTNETLINK answers: File exists\n" + "x" * 2000
    e = BuildError("starting the Linux bridge", "s1", detail).with_log("/tmp/b.log")
    text = str(e)
    assert "\n" not in text and len(text) < 400
    assert text.startswith("starting the Linux bridge failed on s1: RTNETLINK answers")
    assert text.endswith("(log: /tmp/b.log)")


def test_neighbour_need_counts_every_pair_of_a_segment_and_two_per_router_link() -> None:
    from topologies.neighbours import neighbour_need

    # One segment of N nodes: every node may hold an ARP entry for every other one.
    assert neighbour_need(topologies.resolve("lan", {"hosts": 250})) == 250 * 249
    assert neighbour_need(topologies.resolve("lan", {"hosts": 1})) == 0
    # 3 segments of 2 hosts + their router (3 nodes: 6 entries each), 2 router links.
    assert neighbour_need(topologies.resolve("routed", {"routers": 3, "hosts": 2})) == 3 * 6 + 4
