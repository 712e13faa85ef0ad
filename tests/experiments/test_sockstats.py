"""experiments.sockstats: /proc/net/udp and /proc/net/snmp parsing (no root needed).

The parsers are checked against the kernel's own files: a socket this test binds shows up
with its port, inode, queued bytes and drops, and the process's fds map to its inode.
"""

from __future__ import annotations

import doctest
import os
import socket
from pathlib import Path

from experiments import sockstats
from topologies.net import wait_for


def test_doctests() -> None:
    res = doctest.testmod(sockstats)
    assert res.attempted >= 5 and res.failed == 0, res


def _row(inode: int) -> sockstats.UdpSocket | None:
    rows = sockstats.parse_proc_net_udp(Path("/proc/net/udp").read_text())
    return next((s for s in rows if s.inode == inode), None)


def test_own_socket_queue_and_drops_read_from_proc_net_udp() -> None:
    """A socket with the smallest receive buffer, 50 datagrams sent to it and none read:
    /proc/net/udp shows its port and inode, bytes queued, and the rest as drops."""
    rx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    tx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        rx.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1)
        rx.bind(("127.0.0.1", 0))
        port = rx.getsockname()[1]
        inode = os.fstat(rx.fileno()).st_ino
        assert inode in sockstats.socket_inodes(os.getpid())
        row = _row(inode)
        assert row is not None and (row.local_address, row.local_port) == ("127.0.0.1", port)
        assert (row.rx_queue, row.drops) == (0, 0)
        for _ in range(50):
            tx.sendto(b"x" * 64, ("127.0.0.1", port))
        assert wait_for(lambda: (r := _row(inode)) is not None and r.drops > 0, 5)
        row = _row(inode)
        assert row is not None and row.rx_queue > 0
        rx.setblocking(False)
        read = 0
        while True:
            try:
                rx.recv(100)
            except BlockingIOError:
                break
            read += 1
        assert read + row.drops == 50, (read, row)
        after = _row(inode)
        assert after is not None and after.rx_queue == 0
    finally:
        rx.close()
        tx.close()


def test_snmp_of_this_machine_has_the_fanout_inputs() -> None:
    snmp = sockstats.parse_snmp(Path("/proc/net/snmp").read_text())
    for section, key in (("Ip", "InDelivers"), ("Icmp", "InMsgs"), ("Tcp", "InSegs"),
                         ("Udp", "InDatagrams"), ("Udp", "RcvbufErrors")):
        assert key in snmp[section], (section, key)
    same = sockstats.fanout(snmp, snmp)
    assert same["udp_arrived"] == 0 and same["factor"] is None


def test_drops_by_owner_sums_unknown_sockets_as_other() -> None:
    s = [sockstats.UdpSocket("0.0.0.0", 7400, "0.0.0.0", 0, 0, 10, 0, 9, 3)]
    assert sockstats.drops_by_owner(s, {}) == {"other": {"sockets": 1, "drops": 3,
                                                         "rx_queue": 10}}


def test_socket_sampler_attributes_drops_to_the_process_role() -> None:
    """The sampler maps this process's socket to "sub0" (a subscriber on host h1) through
    /proc/<pid>/fd and reads its drops from /proc/<pid>/net/udp."""
    rx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    tx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        rx.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1)
        rx.bind(("127.0.0.1", 0))
        for _ in range(50):
            tx.sendto(b"x" * 64, rx.getsockname())
        inode = os.fstat(rx.fileno()).st_ino
        assert wait_for(lambda: (r := _row(inode)) is not None and r.drops > 0, 5)
        want = _row(inode)
        s = sockstats.SocketSampler({"sub0": (os.getpid(), "h1")})
        s.sample()
        res = s.result()
        sub = res["hosts"]["h1"]["subscriber"]
        assert want is not None and sub["drops"] >= want.drops > 0
        assert sub["sockets"] >= 2  # rx and tx (and any other UDP socket of this process)
        assert res["processes"]["sub0"] == sub["drops"] and res["samples"] == 1
    finally:
        rx.close()
        tx.close()
