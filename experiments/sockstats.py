"""Receive evidence per socket and per host, from ``/proc/net/udp`` and ``/proc/net/snmp``.

Host socket fan-out: every DDS participant of a host binds the same RTPS multicast port, and
with ``IP_MULTICAST_ALL`` at its default (1) the kernel queues a copy of each multicast
datagram on every socket bound to that port once any socket of the host joined the group.
Two views of it, both from the host's own kernel:

- per host, the **fan-out factor**: socket deliveries per UDP datagram arriving at the host
  (:func:`fanout`), from two readings of the namespace's ``/proc/net/snmp``;
- per socket, the ``drops`` and ``rx_queue`` columns of ``/proc/net/udp``
  (:func:`parse_proc_net_udp`), mapped to processes by socket inode
  (:func:`socket_inodes`) and so to roles (:func:`drops_by_owner`).

Everything here is pure parsing except :func:`socket_inodes`, which reads ``/proc/<pid>/fd``;
importing the module needs neither root nor Mininet.

Example::

    >>> text = ('  sl  local_address rem_address   st tx_queue rx_queue tr tm->when '
    ...         'retrnsmt   uid  timeout inode ref pointer drops\\n'
    ...         ' 1234: 00000000:1CE9 00000000:0000 07 00000000:00000300 00:00000000 '
    ...         '00000000     0        0 56789 2 0000000000000000 42\\n')
    >>> s = parse_proc_net_udp(text)[0]
    >>> s.local_port, s.rx_queue, s.inode, s.drops
    (7401, 768, 56789, 42)
"""

from __future__ import annotations

import os
import socket
import struct
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class UdpSocket:
    """One row of ``/proc/net/udp`` (the kernel's ``udp4_format_sock``)."""

    local_address: str
    local_port: int
    remote_address: str
    remote_port: int
    tx_queue: int  # bytes of send buffer in use (sk_wmem_alloc)
    rx_queue: int  # bytes of receive buffer in use (sk_rmem_alloc): datagrams not read yet
    uid: int
    inode: int
    drops: int  # datagrams this socket dropped (sk_drops: full buffer, filters, checksum)


def _addr(hexaddr: str) -> tuple[str, int]:
    """``0100007F:1CE9`` → ``("127.0.0.1", 7401)``: the kernel prints the address as a
    host-order 32-bit word, i.e. the network-order bytes reversed on little-endian CPUs."""
    ip_hex, port_hex = hexaddr.split(":")
    raw = struct.pack("=I", int(ip_hex, 16))
    return socket.inet_ntoa(raw), int(port_hex, 16)


def parse_proc_net_udp(text: str) -> list[UdpSocket]:
    """Every socket row of a ``/proc/net/udp`` text (the header line is skipped).

    Rows with fewer than 13 fields (a truncated read) are left out.
    """
    out: list[UdpSocket] = []
    for line in text.splitlines()[1:]:
        f = line.split()
        if len(f) < 13:
            continue
        local, lport = _addr(f[1])
        remote, rport = _addr(f[2])
        tx, rx = (int(x, 16) for x in f[4].split(":"))
        out.append(UdpSocket(local, lport, remote, rport, tx, rx, int(f[7]), int(f[9]),
                             int(f[12])))
    return out


def socket_inodes(pid: int, proc: str = "/proc") -> set[int]:
    """Inodes of the sockets process ``pid`` holds open (``/proc/<pid>/fd/* -> socket:[N]``).

    A process that exited (or an fd closed while reading) gives what could be read.
    """
    out: set[int] = set()
    fd_dir = f"{proc}/{pid}/fd"
    try:
        fds = os.listdir(fd_dir)
    except OSError:
        return out
    for fd in fds:
        try:
            target = os.readlink(f"{fd_dir}/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            out.add(int(target[8:-1]))
    return out


def drops_by_owner(sockets: Iterable[UdpSocket], owner_of_inode: Mapping[int, str]
                   ) -> dict[str, dict[str, int]]:
    """Per owner (a role, a process name...): its sockets, their drops and queued bytes.

    Sockets whose inode has no owner are summed under ``"other"``.

    >>> socks = [UdpSocket("0.0.0.0", 7401, "0.0.0.0", 0, 0, 0, 0, 1, 5),
    ...          UdpSocket("0.0.0.0", 7401, "0.0.0.0", 0, 0, 768, 0, 2, 0),
    ...          UdpSocket("0.0.0.0", 7400, "0.0.0.0", 0, 0, 0, 0, 3, 1)]
    >>> drops_by_owner(socks, {1: "publisher", 2: "subscriber"})["publisher"]
    {'sockets': 1, 'drops': 5, 'rx_queue': 0}
    """
    out: dict[str, dict[str, int]] = {}
    for s in sockets:
        row = out.setdefault(owner_of_inode.get(s.inode, "other"),
                             {"sockets": 0, "drops": 0, "rx_queue": 0})
        row["sockets"] += 1
        row["drops"] += s.drops
        row["rx_queue"] += s.rx_queue
    return out


def parse_snmp(text: str) -> dict[str, dict[str, int]]:
    """Every section of a ``/proc/net/snmp`` text: ``{"Ip": {...}, "Udp": {...}, ...}``.

    >>> parse_snmp("Ip: InDelivers\\nIp: 7\\nUdp: InDatagrams RcvbufErrors\\nUdp: 12 2\\n")
    {'Ip': {'InDelivers': 7}, 'Udp': {'InDatagrams': 12, 'RcvbufErrors': 2}}
    """
    heads: dict[str, list[str]] = {}
    out: dict[str, dict[str, int]] = {}
    for line in text.splitlines():
        name, _, rest = line.partition(":")
        fields = rest.split()
        if name not in heads:
            heads[name] = fields
        elif len(fields) == len(heads[name]):
            out[name] = {k: int(v) for k, v in zip(heads[name], fields, strict=True)
                         if v.lstrip("-").isdigit()}
    return out


def _get(snmp: Mapping[str, Mapping[str, int]], section: str, key: str) -> int:
    return int(snmp.get(section, {}).get(key, 0))


def fanout(before: Mapping[str, Mapping[str, int]], after: Mapping[str, Mapping[str, int]]
           ) -> dict[str, Any]:
    """A host's socket fan-out between two ``/proc/net/snmp`` readings (:func:`parse_snmp`).

    - ``udp_arrived``: UDP datagrams the host's IP layer handed to UDP, counted once per
      datagram whatever the number of sockets: ``Ip InDelivers`` (after reassembly, so an
      IP-fragmented 14 KB Cyclone datagram counts once; interface packet counters would
      count its fragments) minus the other protocols it delivered, ``Icmp InMsgs`` and
      ``Tcp InSegs``. IGMP has no counter in this file: the few queries and reports a host
      receives per run are counted as arrivals (the factor is then slightly low). Multicast
      the host sent itself and looped back (``IP_MULTICAST_LOOP``) arrives here too, and is
      what its other participants receive.
    - ``socket_deliveries``: copies the host's UDP sockets took: ``Udp InDatagrams`` (read
      by an application; the kernel counts it in recvmsg) plus ``RcvbufErrors`` (dropped at
      a full receive buffer). Copies still queued when a socket closed are in neither.
    - ``factor`` = socket_deliveries / udp_arrived: 1 for unicast, the number of sockets on
      the port for multicast with ``IP_MULTICAST_ALL`` 1, the number of sockets that joined
      the datagram's group with 0 (None when nothing arrived).

    >>> b = {"Ip": {"InDelivers": 10}, "Icmp": {"InMsgs": 0}, "Tcp": {"InSegs": 0},
    ...      "Udp": {"InDatagrams": 0, "RcvbufErrors": 0}}
    >>> a = {"Ip": {"InDelivers": 110}, "Icmp": {"InMsgs": 0}, "Tcp": {"InSegs": 0},
    ...      "Udp": {"InDatagrams": 750, "RcvbufErrors": 50}}
    >>> fanout(b, a)["factor"]
    8.0
    """
    def d(section: str, key: str) -> int:
        return _get(after, section, key) - _get(before, section, key)

    arrived = d("Ip", "InDelivers") - d("Icmp", "InMsgs") - d("Tcp", "InSegs")
    deliveries = d("Udp", "InDatagrams") + d("Udp", "RcvbufErrors")
    return {
        "udp_arrived": arrived,
        "socket_deliveries": deliveries,
        "factor": round(deliveries / arrived, 3) if arrived > 0 else None,
        "udp_no_socket": d("Udp", "NoPorts") + d("Udp", "IgnoredMulti"),
        "rcvbuf_errors": d("Udp", "RcvbufErrors"),
    }


def role_of(name: str) -> str:
    """``pub3`` → ``publisher``, ``sub0`` → ``subscriber``, anything else itself."""
    return {"pub": "publisher", "sub": "subscriber"}.get(name[:3], name)


class SocketSampler:
    """Per-socket receive drops of running agents, by process and by role, per host.

    Every ``interval`` seconds (a daemon thread) it maps each agent's sockets to it
    (``/proc/<pid>/fd``) and reads its host's ``/proc/<pid>/net/udp`` (the file shows the
    network namespace of ``pid``, so one live agent per host is enough). A socket's
    ``drops`` only grow, so the last reading of each socket is kept; drops in the last
    interval before a socket closed are missed (the figures are lower bounds).

    ``agents``: ``{name: (pid, host)}``; :meth:`result` gives
    ``{"interval_s", "samples", "hosts": {host: {role: {sockets, drops, rx_queue}}},
    "processes": {name: drops}}`` (``rx_queue``: bytes queued at the last reading).
    """

    def __init__(self, agents: Mapping[str, tuple[int, str]], interval: float = 2.0,
                 proc: str = "/proc") -> None:
        import threading

        self.agents = dict(agents)
        self.interval = interval
        self.proc = proc
        self.samples = 0
        self._owner: dict[tuple[str, int], str] = {}  # (host, inode) -> agent name
        self._last: dict[tuple[str, int], UdpSocket] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True, name="sockstats")

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=10)

    def _loop(self) -> None:
        while not self._stop.is_set():
            self.sample()
            self._stop.wait(self.interval)

    def sample(self) -> None:
        """One reading of every live agent's sockets."""
        readers: dict[str, int] = {}
        for name, (pid, host) in self.agents.items():
            inodes = socket_inodes(pid, self.proc)
            if inodes:
                readers.setdefault(host, pid)
            for ino in inodes:
                self._owner[(host, ino)] = name
        for host, pid in readers.items():
            try:
                with open(f"{self.proc}/{pid}/net/udp") as f:
                    rows = parse_proc_net_udp(f.read())
            except OSError:
                continue
            for s in rows:
                if (host, s.inode) in self._owner:
                    self._last[(host, s.inode)] = s
        self.samples += 1

    def result(self) -> dict[str, Any]:
        hosts: dict[str, dict[str, dict[str, int]]] = {}
        processes: dict[str, int] = {}
        for (host, ino), s in self._last.items():
            name = self._owner[(host, ino)]
            processes[name] = processes.get(name, 0) + s.drops
            row = hosts.setdefault(host, {}).setdefault(
                role_of(name), {"sockets": 0, "drops": 0, "rx_queue": 0})
            row["sockets"] += 1
            row["drops"] += s.drops
            row["rx_queue"] += s.rx_queue
        return {"interval_s": self.interval, "samples": self.samples,
                "hosts": hosts, "processes": dict(sorted(processes.items()))}
