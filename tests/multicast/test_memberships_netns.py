"""Convergence is declared only when the snooping switch lists every host's membership.

   h1 ---+
   h2 ---+
   ...   [ s1 ]   150 hosts, snooping and querier on; every host joins 239.255.0.1
   h150 -+        (the SPDP discovery group every DDS participant joins)

A 50-host OVS run once started with the discovery group on 16 of 50 ports: the reports of
the other hosts were lost and convergence had checked only ports and querier. Here every
host joins, convergence must find all 150 ports in the table; then entries are removed
from the switch (as a lost report leaves it) and the check must name exactly those hosts,
and a re-join must bring them back.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

import topologies
from mcastlab import testbed
from multicast import convergence, membership

pytestmark = pytest.mark.timeout(300)

HOSTS = 150
GROUP = membership.SPDP_GROUP


def _report_window_s(net: testbed.Testbed) -> float:
    """Seconds within which a host repeats a join's report: the kernel's IGMPv3 (or v2)
    unsolicited report interval times (robustness - 1), read from host h1."""
    version = net.spec.params.get("igmp", "3")
    ms, qrv = net.cmd("h1", "cat /proc/sys/net/ipv4/conf/h1-eth0/"
                      f"igmpv{version}_unsolicited_report_interval "
                      "/proc/sys/net/ipv4/igmp_qrv").split()
    return int(ms) / 1000 * max(1, int(qrv) - 1)


@pytest.mark.parametrize("switch", ["linuxbridge", "ovs"])
def test_convergence_waits_for_every_membership(workdir: Path, switch: str) -> None:
    spec = topologies.resolve("lan", {"hosts": HOSTS, "switch": switch, "snooping": "on",
                                      "querier": "on"})
    with topologies.build(spec, workdir=workdir) as net:
        net.wait_converged(60)
        holder = membership.Holder(net, {h: [GROUP] for h in net.hosts})
        try:
            joined = time.monotonic()
            assert all(membership.host_groups(net, h) == [GROUP] for h in net.hosts)
            net.wait_converged(60)  # declared only once the table has every membership
            assert membership.switch_table(net, "s1")[GROUP] == set(net.hosts)
            # A join's state-change report is repeated (robustness 2) within the unsolicited
            # report interval; a repeat arriving after the entries are taken out below
            # would put them back, so that window must be over first.
            window = _report_window_s(net)
            time.sleep(max(0.0, joined + window + 0.5 - time.monotonic()))

            # Take three hosts out of the table, as lost reports would.
            gone = ["h7", "h75", "h150"]
            real = net.real_name("s1")
            if switch == "linuxbridge":
                for h in gone:
                    port = next(r for _l, r, peer in net.switch_ports("s1") if peer == h)
                    out = net.cmd("s1", f"bridge mdb del dev {real} port {port} grp {GROUP}")
                    assert out.strip() == "", out
                assert membership.missing(net) == {h: [GROUP] for h in gone}
            else:
                net.switch_control["s1"].appctl("mdb/flush", real)  # OVS: all of them at once
                gone = list(net.hosts)
                assert membership.missing(net) == {h: [GROUP] for h in gone}
            assert "memberships" in convergence.missing(net)

            # Re-joining makes the hosts report again; the table is whole once more.
            membership.wait(net, holder.groups, 30, holder)
            assert membership.switch_table(net, "s1")[GROUP] == set(net.hosts)
        finally:
            holder.close()
