"""Multicast probe sender and receiver, run inside a host's namespace by `mcastlab probe`.

    python -m multicast.probe_agent send --group 239.1.2.3 --port 5000 --count 1000 \
        --rate 500 --ttl 8 --iface h1-eth0 --run-id 42
    python -m multicast.probe_agent recv --group 239.1.2.3 --port 5000 --iface h2-eth0 \
        --run-id 42 [--join]

The receiver counts the stream twice: `wire` = frames of this run seen on the interface
(an AF_PACKET socket, so a non-member that merely gets flooded is counted too, although
its kernel would drop them) and `delivered` = datagrams the joined UDP socket got. It
prints ``ready`` once joined, ``primed`` when the first datagram of ``--primer-run-id``
arrives, and one JSON line when it gets SIGTERM/SIGINT.
"""

from __future__ import annotations

import argparse
import json
import select
import signal
import socket
import struct
import sys
import time

MAGIC = b"MCLP"
HEADER = struct.Struct("!4sQI")  # magic, run id, sequence number
ETH_P_IP = 0x0800
PACKET_OUTGOING = 4


def _iface_ip(iface: str) -> str:
    import fcntl

    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        packed = fcntl.ioctl(s.fileno(), 0x8915, struct.pack("256s", iface.encode()[:15]))
    finally:
        s.close()
    return socket.inet_ntoa(packed[20:24])


def send(args: argparse.Namespace) -> int:
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_UDP)
    sock.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, args.ttl)
    sock.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_LOOP, 0)
    sock.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF,
                    socket.inet_aton(_iface_ip(args.iface)))
    pad = b"\0" * max(0, args.size - HEADER.size)
    interval = 1.0 / args.rate if args.rate > 0 else 0.0
    start = time.monotonic()
    sent = 0
    for seq in range(args.count):
        if interval:
            delay = start + seq * interval - time.monotonic()
            if delay > 0:
                time.sleep(delay)
        sock.sendto(HEADER.pack(MAGIC, args.run_id, seq) + pad, (args.group, args.port))
        sent += 1
    print(json.dumps({"sent": sent, "duration_s": round(time.monotonic() - start, 3)}), flush=True)
    return 0


def udp_dport_and_payload(frame: bytes) -> tuple[str, int, bytes] | None:
    """(destination, UDP port, payload) of an IPv4/UDP packet, None otherwise."""
    if len(frame) < 20 or frame[0] >> 4 != 4 or frame[9] != 17:
        return None
    ihl = (frame[0] & 0x0F) * 4
    dst = socket.inet_ntoa(frame[16:20])
    dport = struct.unpack("!H", frame[ihl + 2 : ihl + 4])[0]
    return dst, dport, frame[ihl + 8 :]


def recv(args: argparse.Namespace) -> int:
    stop = {"now": False}

    def on_signal(_signo: int, _frame: object) -> None:
        stop["now"] = True

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    raw = socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM, socket.htons(ETH_P_IP))
    raw.bind((args.iface, ETH_P_IP))
    raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    udp = None
    if args.join:
        udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_UDP)
        udp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        udp.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        udp.bind((args.group, args.port))
        mreq = socket.inet_aton(args.group) + socket.inet_aton(_iface_ip(args.iface))
        udp.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP, mreq)
    print("ready", flush=True)
    wire: set[int] = set()
    delivered: set[int] = set()
    duplicates = 0
    primed = False
    socks = [raw] + ([udp] if udp else [])
    while not stop["now"]:
        try:
            ready, _, _ = select.select(socks, [], [], 0.2)
        except InterruptedError:
            continue
        for s in ready:
            if s is raw:
                data, addr = raw.recvfrom(65535)
                if addr[2] == PACKET_OUTGOING:
                    continue
                parsed = udp_dport_and_payload(data)
                if not parsed or parsed[0] != args.group or parsed[1] != args.port:
                    continue
                payload = parsed[2]
            else:
                payload = s.recv(65535)
            if len(payload) < HEADER.size:
                continue
            magic, run_id, seq = HEADER.unpack_from(payload)
            if (magic == MAGIC and s is not raw and args.primer_run_id is not None
                    and run_id == args.primer_run_id and not primed):
                primed = True
                print("primed", flush=True)  # the first primer datagram got through
            if magic != MAGIC or run_id != args.run_id:
                continue
            target = wire if s is raw else delivered
            if s is raw and seq in target:
                duplicates += 1
            target.add(seq)
    print(json.dumps({"wire": len(wire), "delivered": len(delivered), "duplicates": duplicates}),
          flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="probe_agent")
    sub = ap.add_subparsers(dest="role", required=True)
    for role in ("send", "recv"):
        p = sub.add_parser(role)
        p.add_argument("--group", required=True)
        p.add_argument("--port", type=int, default=5000)
        p.add_argument("--iface", required=True)
        p.add_argument("--run-id", type=int, required=True)
        if role == "send":
            p.add_argument("--count", type=int, default=1000)
            p.add_argument("--rate", type=float, default=500.0)
            p.add_argument("--ttl", type=int, default=8)
            p.add_argument("--size", type=int, default=100)
        else:
            p.add_argument("--join", action="store_true")
            p.add_argument("--primer-run-id", type=int,
                           help="print 'primed' when the first datagram of this run arrives")
    args = ap.parse_args(argv)
    return send(args) if args.role == "send" else recv(args)


if __name__ == "__main__":
    sys.exit(main())
