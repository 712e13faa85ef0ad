"""Host memberships against the snooping switch's table: nothing starts before they agree.

A snooping switch forwards a group only to the ports it learnt a membership report on.
Reports are sent when a host joins (IGMPv3: the state-change report and one repeat within
a second) and in answer to a querier's queries. A report lost on the way — a switch busy
with 50 agents starting at once, or a userspace OVS dropping frames under load — leaves
that host out of the group until the next query (Linux bridge querier: 125 s) or for
good (Open vSwitch has no querier of its own). A run whose discovery group 239.255.0.1
reached only some hosts is not a result about multicast, so:

- :func:`missing` compares what every host joined (its kernel's ``/proc/net/igmp``, read
  from outside through ``/proc/<pid>/net``) with the switch's table on that host's port;
- :class:`Holder` joins groups on hosts from this process (sockets in their namespaces,
  no process per host) before the agents start, and re-joins where the switch missed
  them (a fresh state-change report);
- :func:`wait` blocks until the switch lists every membership, or raises
  ConvergenceError naming the hosts and groups it lacks.

Groups in 224.0.0.0/24 are link-local: switches flood them and never list them.
"""

from __future__ import annotations

import socket
import time
from pathlib import Path
from typing import Any

from mcastlab.errors import ConvergenceError
from mcastlab.testbed import Testbed
from multicast import nsock

# Cyclone DDS's (and RTI Connext's) default SPDP discovery group: every participant of
# both modes joins it unless discovery is fully unicast.
SPDP_GROUP = "239.255.0.1"
REJOIN_AFTER_S = 1.0  # re-join a host whose membership the switch still lacks


def parse_proc_igmp(text: str) -> dict[str, list[str]]:
    """{interface: [groups joined]} from /proc/net/igmp (groups are host-order hex).

    >>> parse_proc_igmp("Idx\\tDevice    : Count Querier\\tGroup    Users Timer\\tReporter\\n"
    ...                 "2\\th1-eth0   :     2      V3\\n"
    ...                 "\\t\\t\\t\\t010000E0     1 0:00000000\\t\\t0\\n"
    ...                 "\\t\\t\\t\\t0100FFEF     1 0:00000000\\t\\t0\\n")
    {'h1-eth0': ['224.0.0.1', '239.255.0.1']}
    """
    out: dict[str, list[str]] = {}
    iface = None
    for line in text.splitlines()[1:]:
        if not line.strip():
            continue
        if not line[0].isspace():
            iface = line.split()[1].rstrip(":")
            out.setdefault(iface, [])
        elif iface is not None:
            n = int(line.split()[0], 16)
            out[iface].append(".".join(str((n >> s) & 0xFF) for s in (0, 8, 16, 24)))
    return out


def link_local(group: str) -> bool:
    """224.0.0.0/24: never snooped.

    >>> link_local("224.0.0.1"), link_local("239.255.0.1")
    (True, False)
    """
    return group.startswith("224.0.0.")


def host_groups(net: Testbed, host: str) -> list[str]:
    """Snoopable groups `host` joined on its LAN interface, read from its kernel (over ssh
    for a host on another server of a cluster)."""
    if net.is_remote(host):
        r = net.run(host, ["cat", "/proc/net/igmp"])
        if r.returncode != 0:
            raise RuntimeError(f"reading /proc/net/igmp on {host} failed: {r.stderr.strip()}")
        text = r.stdout
    else:
        text = Path(f"/proc/{net.node(host).pid}/net/igmp").read_text()
    return sorted(g for g in parse_proc_igmp(text).get(f"{host}-eth0", []) if not link_local(g))


def snooping_switches(net: Testbed) -> list[str]:
    """Switches that forward by membership (snooping on): the ones a lost report hurts."""
    return list(net.switches) if net.spec.params.get("snooping") else []


def switch_table(net: Testbed, sw: str) -> dict[str, set[str]]:
    """{group: attached nodes whose ports the switch lists for it}."""
    port_to_node = {logical: peer for logical, _real, peer in net.switch_ports(sw)}
    mdb = net.switch_state(sw).get("mdb", {})
    return {g: {port_to_node[p] for p in ports if p in port_to_node}
            for g, ports in mdb.items() if g != "*"}


def missing(net: Testbed, expected: dict[str, list[str]] | None = None) -> dict[str, list[str]]:
    """{host: [groups it joined (or is expected to) that its snooping switch does not list
    on its port]}; empty when every membership is in the tables.

    `expected` {host: [groups]} is checked as given; without it, every host on a snooping
    switch is checked against what its kernel joined.
    """
    lacking: dict[str, list[str]] = {}
    for sw in snooping_switches(net):
        hosts = [m for m in net.spec.switches[sw] if m in net.spec.hosts]
        want = {h: (expected.get(h, []) if expected is not None else host_groups(net, h))
                for h in hosts}
        want = {h: [g for g in gs if not link_local(g)] for h, gs in want.items()}
        if not any(want.values()):
            continue
        table = switch_table(net, sw)
        for h, groups in want.items():
            gone = [g for g in groups if h not in table.get(g, set())]
            if gone:
                lacking[h] = gone
    return lacking


def describe(lacking: dict[str, list[str]], total_hosts: int) -> str:
    """One line: how many hosts lack which memberships.

    >>> describe({"h3": ["239.255.0.1"], "h9": ["239.255.0.1"]}, 50)
    'the switch lacks memberships of 2 of 50 hosts: h3 239.255.0.1; h9 239.255.0.1'
    """
    shown = "; ".join(f"{h} {','.join(gs)}" for h, gs in list(lacking.items())[:8])
    more = f" (+{len(lacking) - 8} more)" if len(lacking) > 8 else ""
    return (f"the switch lacks memberships of {len(lacking)} of {total_hosts} hosts: "
            f"{shown}{more}")


# A host on another server of a cluster holds its groups in a process there (a socket
# cannot be opened in its namespace from here): join, say so, wait for SIGINT.
JOINER = """
import signal, socket, sys, time
signal.signal(signal.SIGINT, lambda *_: sys.exit(0))
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for g in sys.argv[2:]:
    s.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP,
                 socket.inet_aton(g) + socket.inet_aton(sys.argv[1]))
print("joined", flush=True)
while True:
    time.sleep(3600)
"""


class Holder:
    """Joins `groups` {host: [groups]} on the hosts' LAN interfaces from this process (one
    UDP socket per host, in its namespace) and keeps them joined until :meth:`close`; on
    another server of a cluster, a small process there holds them."""

    def __init__(self, net: Testbed, groups: dict[str, list[str]]) -> None:
        self.net = net
        self.groups = {h: [g for g in gs if not link_local(g)] for h, gs in groups.items()}
        self._socks: dict[str, socket.socket] = {}
        self._procs: dict[str, Any] = {}
        try:
            for h, gs in self.groups.items():
                if not gs:
                    continue
                if net.is_remote(h):
                    self._procs[h] = self._join_remote(h, gs)
                    continue
                s = nsock.socket_in(net.node(h).pid, socket.AF_INET, socket.SOCK_DGRAM,
                                    socket.IPPROTO_UDP)
                self._socks[h] = s
                for g in gs:
                    s.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP, self._mreq(h, g))
        except BaseException:
            self.close()
            raise

    def _join_remote(self, host: str, groups: list[str]) -> Any:
        import sys

        return self.net.popen_ready(host, [sys.executable, "-c", JOINER,
                                           self.net.host_ip(host), *groups], "joined",
                                    f"joining {', '.join(groups)}")

    def _leave_remote(self, host: str) -> None:
        self.net.interrupt(self._procs.pop(host), wait=15)

    def _mreq(self, host: str, group: str) -> bytes:
        return socket.inet_aton(group) + socket.inet_aton(self.net.host_ip(host))

    def rejoin(self, lacking: dict[str, list[str]]) -> None:
        """Leave and join again where the switch lacks a membership: the host's kernel
        sends a new report (only while no other socket of the host holds the group)."""
        for h, gs in lacking.items():
            if h in self._procs:  # a new process, a new state-change report
                self._leave_remote(h)
                self._procs[h] = self._join_remote(h, self.groups[h])
                continue
            s = self._socks.get(h)
            for g in gs:
                if s is None or g not in self.groups.get(h, []):
                    continue
                s.setsockopt(socket.IPPROTO_IP, socket.IP_DROP_MEMBERSHIP, self._mreq(h, g))
                s.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP, self._mreq(h, g))

    def close(self) -> None:
        for s in self._socks.values():
            s.close()
        self._socks.clear()
        for h in list(self._procs):
            self._leave_remote(h)


def wait(net: Testbed, expected: dict[str, list[str]] | None, timeout: float,
         holder: Holder | None = None) -> dict[str, Any]:
    """Poll until every membership is in its snooping switch's table; with a `holder`,
    re-join the hosts still missing every REJOIN_AFTER_S. Raises ConvergenceError."""
    t0 = time.monotonic()
    deadline = t0 + timeout
    last_rejoin = t0
    lacking = missing(net, expected)
    while lacking:
        now = time.monotonic()
        if now >= deadline:
            raise ConvergenceError(
                f"memberships not learnt after {timeout:g} s: "
                + describe(lacking, len(net.hosts)))
        if holder is not None and now - last_rejoin >= REJOIN_AFTER_S:
            holder.rejoin(lacking)
            last_rejoin = now
        time.sleep(0.1)
        lacking = missing(net, expected)
    return {"memberships_s": round(time.monotonic() - t0, 3)}


def agent_groups(cfg: dict[str, Any], hosts: list[str]) -> dict[str, list[str]]:
    """{host: groups its agents will join for their whole run}: the SPDP discovery group on
    every agent host, unless discovery is fully unicast. (Data groups depend on each
    agent's readers and on the DDS implementation; they are left to the agents.)

    >>> agent_groups({"discovery": "multicast"}, ["h1", "h2"])
    {'h1': ['239.255.0.1'], 'h2': ['239.255.0.1']}
    >>> agent_groups({"discovery": "unicast-peers"}, ["h1"])
    {}
    """
    if cfg.get("discovery") == "unicast-peers":
        return {}
    return {h: [SPDP_GROUP] for h in hosts}
