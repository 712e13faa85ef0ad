"""UDP counters of each emulated host, read from its own ``/proc/net/snmp``.

A run records how many datagrams each host's sockets received and how many the kernel
dropped because a socket's receive buffer was full (``RcvbufErrors``). Those drops are not
network loss: they happen when the agents' receive threads wait for a CPU, and DDS then
repairs them like losses. A verdict that rests on repair traffic must be read against
them, so they go into the manifest.

Example::

    >>> parse_snmp_udp("Udp: InDatagrams RcvbufErrors\\nUdp: 10 2\\n")
    {'InDatagrams': 10, 'RcvbufErrors': 2}
"""

from __future__ import annotations

from collections.abc import Iterable

from mcastlab.testbed import Testbed

FIELDS = ("InDatagrams", "NoPorts", "InErrors", "OutDatagrams", "RcvbufErrors",
          "SndbufErrors")


def parse_snmp_udp(text: str) -> dict[str, int]:
    """The ``Udp:`` counters of a ``/proc/net/snmp`` text (header line, then values)."""
    rows = [line.split()[1:] for line in text.splitlines() if line.startswith("Udp:")]
    if len(rows) < 2 or len(rows[0]) != len(rows[1]):
        return {}
    return {k: int(v) for k, v in zip(rows[0], rows[1], strict=True) if v.lstrip("-").isdigit()}


def read(net: Testbed, hosts: Iterable[str]) -> dict[str, dict[str, int]]:
    """Counters of each host now (hosts whose file cannot be read are left out)."""
    out = {}
    for h in hosts:
        p = net.run(h, ["cat", "/proc/net/snmp"], timeout=10)
        counters = parse_snmp_udp(p.stdout) if p.returncode == 0 else {}
        if counters:
            out[h] = counters
    return out


def delta(before: dict[str, dict[str, int]], after: dict[str, dict[str, int]]
          ) -> dict[str, dict[str, int]]:
    """Per host, the change of each of FIELDS between two readings."""
    return {h: {k: after[h].get(k, 0) - before[h].get(k, 0) for k in FIELDS}
            for h in after if h in before}


def parse_netdev(text: str) -> dict[str, int]:
    """Received packets of a ``/proc/net/dev`` text: ``lo`` (same-host unicast: a namespace
    sends to its own address over lo) and ``links`` (every other interface: the emulated
    network). Multicast the host looped back to itself is in neither.

    >>> parse_netdev("Inter-|x\\n face |y\\n    lo: 10 2 0 0 0 0 0 0 10 2\\n  h1-eth0: 99 7 0 0\\n")
    {'lo': 2, 'links': 7}
    """
    out = {"lo": 0, "links": 0}
    for line in text.splitlines():
        name, sep, rest = line.partition(":")
        fields = rest.split()
        if not sep or "|" in line or len(fields) < 2 or not fields[1].isdigit():
            continue
        out["lo" if name.strip() == "lo" else "links"] += int(fields[1])
    return out


def read_snmp(net: Testbed, hosts: Iterable[str]) -> dict[str, dict[str, dict[str, int]]]:
    """Every ``/proc/net/snmp`` section of each host now (experiments.sockstats.parse_snmp),
    plus ``NetDev``: its received packets on lo and on its links (:func:`parse_netdev`);
    hosts whose file cannot be read are left out."""
    from experiments.sockstats import parse_snmp

    out = {}
    for h in hosts:
        p = net.run(h, ["sh", "-c", "cat /proc/net/snmp; echo '#netdev'; cat /proc/net/dev"],
                    timeout=10)
        snmp, _, dev = p.stdout.partition("#netdev")
        sections = parse_snmp(snmp) if p.returncode == 0 else {}
        if sections.get("Udp"):
            sections["NetDev"] = parse_netdev(dev)
            out[h] = sections
    return out
