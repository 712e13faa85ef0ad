"""Parsers of the multicast state read back from pimd and Open vSwitch (pure logic, no root)."""

from __future__ import annotations

from multicast import snooping
from multicast.pimd import parse_show, rp_from_log


def test_pimd_show_parser_reads_neighbours_and_flags() -> None:
    text = ("Virtual Interface Table =====\nVif  Local Address ...\n---\n"
            "  0  10.0.2.254       10.0.2/24                1  DR NO-NBR\n"
            "  1  10.255.1.2       10.255.1/24              1  DR PIM     10.255.1.1     \n"
            "                                                            10.255.1.3\n"
            "  2  10.0.2.254       register_vif0            1 \n\n"
            "Multicast Routing Table =====\n"
            "INADDR_ANY       239.1.2.3        10.0.1.254       WC RP\n"
            "10.0.1.1         239.1.2.3        10.0.1.254       SPT CACHE SG\n")
    st = parse_show(text)
    assert [v["neighbors"] for v in st["vifs"]] == [[], ["10.255.1.1", "10.255.1.3"], []]
    assert st["vifs"][0]["flags"] == ["DR", "NO-NBR"]
    assert [(r["source"], r["flags"][0]) for r in st["routes"]] == [("INADDR_ANY", "WC"),
                                                                   ("10.0.1.1", "SPT")]


def test_rp_from_log_tracks_bsr_learnt_and_deleted_rps() -> None:
    log = ("Local static RP: 169.254.0.1, group 232.0.0.0/8\n"
           "New RP candidate 10.0.2.254 for group 224.0.0.0/4, priority 1\n")
    assert rp_from_log(log) == [{"rp": "10.0.2.254", "group": "224.0.0.0/4", "how": "bsr"}]
    log += "Delete RP group entry for group 224.0.0.0 (holdtime timeout)\n"
    assert rp_from_log(log) == []


def test_ovs_mdb_parser() -> None:
    text = " port  VLAN  GROUP                Age\n    2     0  239.1.2.3        1\n" \
           "    3     0  239.1.2.3        1\n"
    assert snooping.parse_ovs_mdb(text) == {"239.1.2.3": ["2", "3"]}
