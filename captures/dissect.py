"""Columnar dissection of one pcap/pcapng file by the C core (captures/native).

    >>> d = dissect("run/pcaps/h1-eth0.pcap")          # doctest: +SKIP
    >>> d.rtps_counts()                                  # doctest: +SKIP
    {'DATA': 79988, 'INFO_TS': 79988, 'HEARTBEAT': 3439, ...}

Arrays are numpy structured arrays mirroring the C structs in mcl_dissect.h; the library
is loaded with ctypes from captures/_native/ (built by setup.sh, or by hand with
``cmake -S captures/native -B build/captures_native && cmake --build build/captures_native``).
"""

from __future__ import annotations

import ctypes
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ABI_VERSION = 5
LIB_ENV = "MCASTLAB_DISSECT_LIB"

FRAME_DTYPE = np.dtype(
    [("ts", "f8"), ("wirelen", "u4"), ("caplen", "u4"), ("src", "u4"), ("dst", "u4"),
     ("sport", "u2"), ("dport", "u2"), ("l4len", "u4"), ("ipid", "u2"), ("nfrags", "u2"),
     ("proto", "u1"), ("flags", "u1"), ("kind", "u1"), ("bad", "u1"), ("ifindex", "u4")],
    align=True)
SUB_DTYPE = np.dtype(
    [("seq", "i8"), ("seq2", "i8"), ("frame", "u4"), ("writer_eid", "u4"), ("reader_eid", "u4"),
     ("aux1", "u4"), ("plen", "u4"), ("src_prefix", "u2"), ("dst_prefix", "u2"), ("aux2", "u2"),
     ("octets", "u2"), ("id", "u1"), ("flags", "u1"), ("cls", "u1"), ("quoted", "u1")],
    align=True)
CTL_DTYPE = np.dtype(
    [("frame", "u4"), ("group", "u4"), ("src", "u4"), ("nrec", "u2"), ("proto", "u1"),
     ("type", "u1"), ("version", "u1"), ("rec", "u1"), ("rtype", "u1"), ("pad", "u1")],
    align=True)
TOPIC_DTYPE = np.dtype(
    [("frame", "u4"), ("guid", "u1", (16,)), ("is_reader", "u1"), ("topic", "S128"),
     ("type", "S128"), ("pad", "u1", (3,))], align=True)

# frame flags / kinds / classes (mcl_dissect.h)
F_IPV4, F_FRAG, F_REASM, F_MCAST, F_SNAPCUT, F_BAD, F_PIMREG = 1, 2, 4, 8, 16, 32, 64
K_OTHER, K_RTPS, K_IGMP, K_PIM, K_UDP, K_NONIP, K_ICMP = range(7)
C_NONE, C_DISCOVERY, C_USER = range(3)
NO_PREFIX = 0xFFFF

# RTPS 2.x submessage ids -> specification names.
SUBMESSAGE_NAMES: dict[int, str] = {
    0x01: "PAD", 0x06: "ACKNACK", 0x07: "HEARTBEAT", 0x08: "GAP", 0x09: "INFO_TS",
    0x0C: "INFO_SRC", 0x0D: "INFO_REPLY_IP4", 0x0E: "INFO_DST", 0x0F: "INFO_REPLY",
    0x11: "RTPS_HE", 0x12: "NACK_FRAG", 0x13: "HEARTBEAT_FRAG", 0x15: "DATA",
    0x16: "DATA_FRAG", 0x18: "DATA_BATCH", 0x19: "HEARTBEAT_BATCH", 0x30: "SEC_BODY",
    0x31: "SEC_PREFIX", 0x32: "SEC_POSTFIX", 0x33: "SRTPS_PREFIX", 0x34: "SRTPS_POSTFIX",
}
IGMP_NAMES = {0x11: "query", 0x12: "report_v1", 0x16: "report_v2", 0x17: "leave",
              0x22: "report_v3"}
PIM_NAMES = {0: "hello", 1: "register", 2: "register_stop", 3: "join_prune", 4: "bootstrap",
             5: "assert", 6: "graft", 7: "graft_ack", 8: "candidate_rp"}


def submessage_name(sid: int) -> str:
    """Specification name of a submessage id; vendor-specific ids (0x80-0xff) are
    ``VENDOR_0xNN`` and anything else ``UNKNOWN_0xNN``."""
    if sid in SUBMESSAGE_NAMES:
        return SUBMESSAGE_NAMES[sid]
    return f"VENDOR_0x{sid:02x}" if sid >= 0x80 else f"UNKNOWN_0x{sid:02x}"


class DissectError(Exception):
    """The input is not a readable capture (one-line message naming the file)."""


class _Result(ctypes.Structure):
    _fields_ = [
        ("frames", ctypes.c_void_p), ("nframes", ctypes.c_size_t),
        ("subs", ctypes.c_void_p), ("nsubs", ctypes.c_size_t),
        ("ctls", ctypes.c_void_p), ("nctls", ctypes.c_size_t),
        ("topics", ctypes.c_void_p), ("ntopics", ctypes.c_size_t),
        ("prefixes", ctypes.c_void_p), ("nprefixes", ctypes.c_size_t),
        ("bad", ctypes.POINTER(ctypes.c_uint64)),
        ("linktype", ctypes.c_uint32), ("format", ctypes.c_uint32),
    ]


_LIB: ctypes.CDLL | None = None


def library_path() -> Path:
    env = os.environ.get(LIB_ENV)
    return Path(env) if env else Path(__file__).resolve().parent / "_native" / "libmcl_dissect.so"


def _lib() -> ctypes.CDLL:
    global _LIB
    if _LIB is not None:
        return _LIB
    path = library_path()
    if not path.exists():
        raise DissectError(
            f"{path}: dissector library not built; run ./setup.sh or `cmake -S captures/native "
            f"-B build/captures_native && cmake --build build/captures_native`")
    lib = ctypes.CDLL(str(path))
    lib.mcl_abi_version.restype = ctypes.c_int
    lib.mcl_reason_count.restype = ctypes.c_int
    lib.mcl_reason_name.restype = ctypes.c_char_p
    lib.mcl_reason_name.argtypes = [ctypes.c_int]
    lib.mcl_sizeof.restype = ctypes.c_size_t
    lib.mcl_sizeof.argtypes = [ctypes.c_int]
    lib.mcl_dissect_file.argtypes = [ctypes.c_char_p, ctypes.POINTER(_Result), ctypes.c_char_p,
                                     ctypes.c_size_t]
    lib.mcl_dissect_buffer.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.POINTER(_Result),
                                       ctypes.c_char_p, ctypes.c_size_t]
    lib.mcl_free.argtypes = [ctypes.POINTER(_Result)]
    if lib.mcl_abi_version() != ABI_VERSION:
        raise DissectError(f"{path}: ABI {lib.mcl_abi_version()} != {ABI_VERSION}; rebuild it")
    for i, dt in enumerate((FRAME_DTYPE, SUB_DTYPE, CTL_DTYPE, TOPIC_DTYPE)):
        if lib.mcl_sizeof(i) != dt.itemsize:
            raise DissectError(f"{path}: struct {i} size {lib.mcl_sizeof(i)} != {dt.itemsize}")
    _LIB = lib
    return lib


def reason_names() -> list[str]:
    lib = _lib()
    return [lib.mcl_reason_name(i).decode() for i in range(1, lib.mcl_reason_count())]


@dataclass
class Dissection:
    """Everything decoded from one capture file."""

    path: str
    frames: np.ndarray
    subs: np.ndarray
    ctls: np.ndarray
    topics: np.ndarray
    prefixes: np.ndarray  # (n, 12) uint8
    bad: dict[str, int] = field(default_factory=dict)
    linktype: int = 0
    format: str = "pcap"

    @property
    def packets(self) -> int:
        return len(self.frames)

    def rtps_counts(self, quoted: bool = True) -> dict[str, int]:
        """Submessages by specification name. ``quoted``: include those inside datagrams
        quoted by ICMP errors (not traffic, but tshark counts them)."""
        subs = self.subs if quoted else self.subs[self.subs["quoted"] == 0]
        ids, counts = np.unique(subs["id"], return_counts=True)
        return {submessage_name(int(i)): int(n) for i, n in zip(ids, counts, strict=True)}

    def igmp_counts(self) -> dict[str, int]:
        m = self.ctls[(self.ctls["proto"] == 2) & (self.ctls["rec"] == 0)]
        out: dict[str, int] = {}
        for t in m["type"]:
            name = IGMP_NAMES.get(int(t), f"type_0x{int(t):02x}")
            out[name] = out.get(name, 0) + 1
        return out

    def pim_counts(self) -> dict[str, int]:
        m = self.ctls[(self.ctls["proto"] == 103) & (self.ctls["rec"] == 0)]
        out: dict[str, int] = {}
        for t in m["type"]:
            name = PIM_NAMES.get(int(t), f"type_{int(t)}")
            out[name] = out.get(name, 0) + 1
        return out

    def fragment_frames(self) -> int:
        return int(np.count_nonzero(self.frames["flags"] & F_FRAG))

    def reassembled(self) -> int:
        return int(np.count_nonzero(self.frames["flags"] & F_REASM))

    def prefix_hex(self, idx: int) -> str:
        if idx == NO_PREFIX or idx >= len(self.prefixes):
            return ""
        return self.prefixes[idx].tobytes().hex()


class _Owner:
    """Owns one C result; frees it when the last array viewing its memory is gone."""

    def __init__(self, lib: ctypes.CDLL, res: _Result) -> None:
        self.lib, self.res = lib, res

    def __del__(self) -> None:
        self.lib.mcl_free(ctypes.byref(self.res))


def _view(owner: _Owner, ptr: int | None, n: int, dtype: np.dtype) -> np.ndarray:
    """Zero-copy numpy view of C memory; the view keeps the owner alive."""
    if not n or not ptr:
        return np.zeros(0, dtype=dtype)
    buf = (ctypes.c_char * (n * dtype.itemsize)).from_address(ptr)
    buf._owner = owner  # type: ignore[attr-defined]
    return np.frombuffer(buf, dtype=dtype, count=n)


def _collect(path: str, res: _Result, lib: ctypes.CDLL) -> Dissection:
    owner = _Owner(lib, res)
    names = [lib.mcl_reason_name(i).decode() for i in range(lib.mcl_reason_count())]
    bad = {names[i]: int(res.bad[i]) for i in range(1, len(names)) if res.bad[i]}
    prefixes = _view(owner, res.prefixes, res.nprefixes, np.dtype(("u1", (12,))))
    return Dissection(
        path=path,
        frames=_view(owner, res.frames, res.nframes, FRAME_DTYPE),
        subs=_view(owner, res.subs, res.nsubs, SUB_DTYPE),
        ctls=_view(owner, res.ctls, res.nctls, CTL_DTYPE),
        topics=_view(owner, res.topics, res.ntopics, TOPIC_DTYPE),
        prefixes=prefixes.reshape(-1, 12),
        bad=bad, linktype=int(res.linktype),
        format={1: "pcap", 2: "pcapng"}.get(int(res.format), "?"),
    )


def dissect(path: str | os.PathLike[str]) -> Dissection:
    """Dissect one capture file; raises DissectError if it is not a pcap/pcapng file."""
    lib = _lib()
    res = _Result()
    err = ctypes.create_string_buffer(512)
    if lib.mcl_dissect_file(os.fsencode(path), ctypes.byref(res), err, 512) != 0:
        raise DissectError(err.value.decode(errors="replace"))
    return _collect(str(path), res, lib)


def dissect_bytes(data: bytes, name: str = "<bytes>") -> Dissection:
    """Dissect a capture held in memory (tests, fuzzing)."""
    lib = _lib()
    res = _Result()
    err = ctypes.create_string_buffer(512)
    if lib.mcl_dissect_buffer(data, len(data), ctypes.byref(res), err, 512) != 0:
        raise DissectError(f"{name}: {err.value.decode(errors='replace')}")
    return _collect(name, res, lib)
