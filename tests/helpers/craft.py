"""Crafting RTPS/IGMP/PIM packets with Scapy for the dissector's tests.

Scapy builds the Ethernet/IPv4/UDP/IGMP/PIM layers and fragments; RTPS submessages are
packed here with ``struct`` (explicit endianness per submessage) because Scapy's RTPS
layer leaves DATA_FRAG, GAP and NACK_FRAG uninterpreted.
"""

from __future__ import annotations

import struct
import warnings
from pathlib import Path

with warnings.catch_warnings():  # the contrib layers are deprecated but complete
    warnings.simplefilter("ignore", DeprecationWarning)
    from scapy.contrib.igmp import IGMP
    from scapy.contrib.igmpv3 import IGMPv3, IGMPv3mq
from scapy.contrib.pim import PIMv2Hdr, PIMv2Hello, PIMv2HelloHoldtime
from scapy.layers.inet import IP, UDP, fragment
from scapy.layers.l2 import Ether
from scapy.packet import Packet, Raw
from scapy.utils import PcapNgWriter, wrpcap

PREFIX_A = bytes.fromhex("0110aaaaaaaaaaaaaaaaaaaa")
PREFIX_B = bytes.fromhex("0110bbbbbbbbbbbbbbbbbbbb")
USER_WRITER = 0x00000102
USER_READER = 0x00000107
SPDP_WRITER = 0x000100C2
SEDP_PUB_WRITER = 0x000003C2


def rtps_header(prefix: bytes = PREFIX_A) -> bytes:
    return b"RTPS" + bytes([2, 1]) + b"\x01\x10" + prefix


def sm(sid: int, body: bytes, le: bool = True, flags: int = 0, length: int | None = None) -> bytes:
    """One submessage; ``length`` overrides octetsToNextHeader (malformed tests)."""
    fl = flags | (1 if le else 0)
    n = len(body) if length is None else length
    return struct.pack("<BBH" if le else ">BBH", sid, fl, n) + body


def _e(le: bool) -> str:
    return "<" if le else ">"


def sn(v: int, le: bool) -> bytes:
    return struct.pack(_e(le) + "iI", v >> 32, v & 0xFFFFFFFF)


def data(seq: int, payload: bytes, le: bool = True, writer: int = USER_WRITER,
         reader: int = 0) -> bytes:
    body = struct.pack(_e(le) + "HH", 0, 16) + struct.pack(">II", reader, writer) + sn(seq, le)
    body += b"\x00\x01\x00\x00" + payload  # CDR_LE encapsulation + data
    return sm(0x15, body, le, flags=0x04)


def data_frag(seq: int, start: int, nfrags: int, fragsize: int, sample: int, payload: bytes,
              le: bool = True) -> bytes:
    body = (struct.pack(_e(le) + "HH", 0, 28) + struct.pack(">II", 0, USER_WRITER) + sn(seq, le)
            + struct.pack(_e(le) + "IHHI", start, nfrags, fragsize, sample) + payload)
    return sm(0x16, body, le)


def heartbeat(first: int, last: int, count: int, le: bool = True) -> bytes:
    body = struct.pack(">II", 0, USER_WRITER) + sn(first, le) + sn(last, le)
    return sm(0x07, body + struct.pack(_e(le) + "I", count), le)


def acknack(base: int, nbits: int, bits: list[int], count: int, le: bool = True) -> bytes:
    words = [0] * ((nbits + 31) // 32)
    for b in bits:
        words[b // 32] |= 1 << (31 - b % 32)
    body = struct.pack(">II", USER_READER, USER_WRITER) + sn(base, le)
    body += struct.pack(_e(le) + "I", nbits) + b"".join(struct.pack(_e(le) + "I", w) for w in words)
    return sm(0x06, body + struct.pack(_e(le) + "I", count), le)


def nack_frag(seq: int, base: int, nbits: int, bits: list[int], le: bool = True) -> bytes:
    words = [0] * ((nbits + 31) // 32)
    for b in bits:
        words[b // 32] |= 1 << (31 - b % 32)
    body = struct.pack(">II", USER_READER, USER_WRITER) + sn(seq, le)
    body += struct.pack(_e(le) + "II", base, nbits)
    body += b"".join(struct.pack(_e(le) + "I", w) for w in words) + struct.pack(_e(le) + "I", 1)
    return sm(0x12, body, le)


def gap(start: int, base: int, le: bool = True) -> bytes:
    body = struct.pack(">II", 0, USER_WRITER) + sn(start, le) + sn(base, le)
    return sm(0x08, body + struct.pack(_e(le) + "I", 0), le)


def hb_frag(seq: int, last_frag: int, le: bool = True) -> bytes:
    body = (struct.pack(">II", 0, USER_WRITER) + sn(seq, le)
            + struct.pack(_e(le) + "II", last_frag, 1))
    return sm(0x13, body, le)


def info_ts(le: bool = True) -> bytes:
    return sm(0x09, struct.pack(_e(le) + "II", 1700000000, 0), le)


def info_dst(prefix: bytes = PREFIX_B, le: bool = True) -> bytes:
    return sm(0x0E, prefix, le)


def info_src(prefix: bytes = PREFIX_B, le: bool = True) -> bytes:
    return sm(0x0C, b"\x00" * 4 + b"\x02\x01\x01\x10" + prefix, le)


def info_reply(le: bool = True) -> bytes:
    return sm(0x0F, struct.pack(_e(le) + "I", 0), le)


def pad(n: int = 4, le: bool = True) -> bytes:
    return sm(0x01, b"\x00" * n, le)


def sedp_publication(topic: str, type_name: str, entity: int, le: bool = True) -> bytes:
    """A SEDP publication DATA announcing writer PREFIX_A:entity on `topic`."""
    def param(pid: int, value: bytes) -> bytes:
        value += b"\x00" * (-len(value) % 4)
        return struct.pack("<HH", pid, len(value)) + value

    def string(s: str) -> bytes:
        raw = s.encode() + b"\x00"
        return struct.pack("<I", len(raw)) + raw

    plist = (param(0x0005, string(topic)) + param(0x0007, string(type_name))
             + param(0x005A, PREFIX_A + struct.pack(">I", entity)) + struct.pack("<HH", 1, 0))
    body = struct.pack(_e(le) + "HH", 0, 16) + struct.pack(">II", 0, SEDP_PUB_WRITER) + sn(1, le)
    body += b"\x00\x03\x00\x00" + plist  # PL_CDR_LE
    return sm(0x15, body, le, flags=0x04)


def udp_frame(rtps: bytes, dst: str = "239.255.0.1", src: str = "10.0.0.1", ipid: int = 1,
              sport: int = 50000, dport: int = 7401) -> Packet:
    return (Ether(src="02:00:00:00:00:01", dst="01:00:5e:7f:00:01")
            / IP(src=src, dst=dst, id=ipid, ttl=32) / UDP(sport=sport, dport=dport) / Raw(rtps))


def igmp_frames(src: str = "10.0.0.2") -> list[Packet]:
    """v2 query, v3 query, v1/v2 report, leave, v3 report with two records."""
    eth = Ether(src="02:00:00:00:00:02", dst="01:00:5e:00:00:01")
    recs = bytes([4, 0, 0, 0, 239, 1, 1, 1]) + bytes([2, 0, 0, 0, 239, 1, 1, 2])
    v3_report = bytes([0x22, 0, 0, 0, 0, 0, 0, 2]) + recs  # two group records
    return [
        eth / IP(src=src, dst="224.0.0.1", ttl=1) / IGMP(type=0x11, mrcode=100, gaddr="0.0.0.0"),
        eth / IP(src=src, dst="224.0.0.1", ttl=1) / IGMPv3(type=0x11) / IGMPv3mq(),
        eth / IP(src=src, dst="239.1.1.1", ttl=1) / IGMP(type=0x16, gaddr="239.1.1.1"),
        eth / IP(src=src, dst="239.1.1.1", ttl=1) / IGMP(type=0x12, gaddr="239.1.1.1"),
        eth / IP(src=src, dst="224.0.0.2", ttl=1) / IGMP(type=0x17, gaddr="239.1.1.1"),
        eth / IP(src=src, dst="224.0.0.22", ttl=1, proto=2) / Raw(v3_report),
    ]


def pim_frames(inner: Packet | None = None) -> list[Packet]:
    """hello, register (with an inner packet), register-stop, join/prune, bootstrap,
    assert, candidate-RP: one each."""
    eth = Ether(src="02:00:00:00:00:03", dst="01:00:5e:00:00:0d")

    def ip(dst: str = "224.0.0.13") -> IP:
        return IP(src="10.0.12.1", dst=dst, proto=103, ttl=1)

    enc_group = bytes([1, 0, 0, 32]) + bytes([239, 1, 1, 1])
    enc_src = bytes([1, 0]) + bytes([10, 0, 1, 10])
    enc_src_set = bytes([1, 0, 4, 32]) + bytes([10, 0, 1, 10])
    jp = (bytes([1, 0]) + bytes([10, 0, 12, 2]) + b"\x00\x01" + b"\x00\xd2"
          + enc_group + b"\x00\x01\x00\x00" + enc_src_set)
    if inner is None:
        inner = IP(src="10.0.1.10", dst="239.1.1.1") / UDP() / Raw(b"x" * 20)
    return [
        eth / ip() / PIMv2Hdr(type=0) / PIMv2Hello(option=[PIMv2HelloHoldtime(holdtime=105)]),
        eth / ip("10.0.12.2") / PIMv2Hdr(type=1) / Raw(b"\x00\x00\x00\x00" + bytes(inner)),
        eth / ip("10.0.12.1") / PIMv2Hdr(type=2) / Raw(enc_group + enc_src),
        eth / ip() / PIMv2Hdr(type=3) / Raw(jp),
        eth / ip() / PIMv2Hdr(type=4) / Raw(b"\x00\x00\x1e\x00" + enc_src),
        eth / ip() / PIMv2Hdr(type=5) / Raw(enc_group + enc_src + b"\x00" * 8),
        eth / ip("10.0.12.2") / PIMv2Hdr(type=8) / Raw(b"\x00\x00\x00\x96" + enc_src),
    ]


def fragmented(pkt: Packet, size: int = 1480) -> list[Packet]:
    """Ethernet frames of the IPv4 fragments of `pkt` (fragment payloads of `size` bytes)."""
    eth = pkt[Ether]
    return [Ether(src=eth.src, dst=eth.dst) / f for f in fragment(pkt[IP], fragsize=size)]


def write_pcap(path: Path, frames: list[Packet], ng: bool = False) -> Path:
    if ng:
        with PcapNgWriter(str(path)) as w:
            for f in frames:
                w.write(f)
    else:
        wrpcap(str(path), frames)
    return path
