"""Sockets inside an emulated node's network namespace, opened by the mcastlab process itself.

A socket belongs for life to the network namespace it was created in; every later call on
it (bind to an interface name, join a group, send, receive) acts in that namespace, even
after the creating thread has switched back. So one process can hold a socket in each of
250 hosts — what the probe does instead of starting a process (or 249 pings) per host:
its work stays bounded (no process per host or per pair, a deadline) at any size.

    with in_netns(net.node("h3").pid):
        s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)

Only the calling thread changes namespace, and only for the with-block (``setns(2)``).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import socket
import struct
from collections.abc import Iterator

CLONE_NEWNET = 0x40000000


def _setns(fd: int) -> None:
    if hasattr(os, "setns"):  # Python 3.12+
        os.setns(fd, CLONE_NEWNET)
        return
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.setns(fd, CLONE_NEWNET) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"setns: {os.strerror(err)}")


@contextlib.contextmanager
def in_netns(pid: int) -> Iterator[None]:
    """Run the with-block in the network namespace of process `pid` (this thread only)."""
    own = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
    try:
        target = os.open(f"/proc/{pid}/ns/net", os.O_RDONLY)
        try:
            _setns(target)
        finally:
            os.close(target)
        try:
            yield
        finally:
            _setns(own)
    finally:
        os.close(own)


def socket_in(pid: int, family: int, kind: int, proto: int = 0) -> socket.socket:
    """A socket created in the network namespace of `pid`."""
    with in_netns(pid):
        return socket.socket(family, kind, proto)


# --- ICMP echo (what ping sends), for reachability from raw sockets ---------------------

def checksum(data: bytes) -> int:
    """The Internet checksum (RFC 1071).

    >>> hex(checksum(bytes.fromhex("0800000000010001")))
    '0xf7fd'
    """
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def echo_request(ident: int, seq: int, payload: bytes = b"mcastlab") -> bytes:
    """An ICMP echo request with identifier `ident` and sequence number `seq`.

    >>> req = echo_request(7, 9)
    >>> parse_echo_reply(bytes([0x45]) + bytes(19) + b"\\0\\0" + req[2:])  # the reply
    (7, 9)
    """
    head = struct.pack("!BBHHH", 8, 0, 0, ident & 0xFFFF, seq & 0xFFFF)
    return struct.pack("!BBHHH", 8, 0, checksum(head + payload), ident & 0xFFFF,
                       seq & 0xFFFF) + payload


def parse_echo_reply(packet: bytes) -> tuple[int, int] | None:
    """(identifier, sequence) of an ICMP echo reply as a raw socket reads it (with its IPv4
    header), None for anything else."""
    if len(packet) < 20 or packet[0] >> 4 != 4:
        return None
    ihl = (packet[0] & 0x0F) * 4
    if len(packet) < ihl + 8 or packet[ihl] != 0:  # type 0 = echo reply
        return None
    _t, _c, _sum, ident, seq = struct.unpack_from("!BBHHH", packet, ihl)
    return ident, seq
