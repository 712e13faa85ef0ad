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

import numpy as np

from captures import cnative
from captures.cnative import (  # noqa: F401 - ABI_VERSION, LIB_ENV: re-exported
    ABI_VERSION,
    LIB_ENV,
    DissectError,
    _AggResult,
    _Result,
    library_path,
)

ROWS_LIMIT_ENV = "MCASTLAB_DISSECT_MAX_MB"  # the row API's memory bound, MiB
ROWS_LIMIT_MB = 4096  # default: ~9 M packets of real DDS traffic (captures/README.md)

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

# aggregate mode (mcl_dissect.h): small tables folded in C while the file is decoded
AGG_PKT_DTYPE = np.dtype(
    [("src", "u4"), ("second", "i4"), ("cast", "u1"), ("payload", "u1"), ("pad", "u1", (6,)),
     ("packets", "i8"), ("bytes", "i8"), ("fragments", "i8")], align=True)
AGG_SUB_DTYPE = np.dtype(
    [("src", "u4"), ("second", "i4"), ("id", "u1"), ("cast", "u1"), ("cls", "u1"),
     ("pad", "u1", (5,)), ("submessages", "i8"), ("bytes", "i8"), ("payload_bytes", "i8")],
    align=True)
AGG_GUID_DTYPE = np.dtype(
    [("eid", "u4"), ("pfx", "u2"), ("pad", "u2"), ("first_data", "i8"), ("repair_data", "i8"),
     ("first_bytes", "i8"), ("repair_bytes", "i8"), ("acknacks_with_nacks", "i8"),
     ("nacked_sns", "i8"), ("heartbeats", "i8"), ("acknacks", "i8")], align=True)
AGG_FLOOD_DTYPE = np.dtype([("src", "u4"), ("group", "u4"), ("frames", "i8"), ("bytes", "i8")],
                           align=True)
AGG_FRAG_DTYPE = np.dtype([("nfrags", "u4"), ("pad", "u4"), ("datagrams", "i8")], align=True)
AGG_CTL_DTYPE = np.dtype(
    [("src", "u4"), ("group", "u4"), ("proto", "u1"), ("type", "u1"), ("version", "u1"),
     ("rec", "u1"), ("rtype", "u1"), ("pad", "u1", (3,)), ("messages", "i8"), ("bytes", "i8")],
    align=True)
NACK_DTYPE = np.dtype(
    [("ts", "f8"), ("first_sn", "i8"), ("last_sn", "i8"), ("src", "u4"), ("reader_eid", "u4"),
     ("writer_eid", "u4"), ("nacked", "u4"), ("rpfx", "u2"), ("wpfx", "u2"), ("id", "u1"),
     ("pad", "u1", (3,))], align=True)
P_FRAGMENT_INCOMPLETE = 7  # payload code of fragments whose datagram never completed

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


def _lib() -> ctypes.CDLL:
    """The library (captures/cnative.py), its structs checked against these dtypes."""
    global _CHECKED
    lib = cnative.load()
    if _CHECKED:
        return lib
    sizes = {0: FRAME_DTYPE.itemsize, 1: SUB_DTYPE.itemsize, 2: CTL_DTYPE.itemsize,
             3: TOPIC_DTYPE.itemsize, 5: AGG_PKT_DTYPE.itemsize, 6: AGG_SUB_DTYPE.itemsize,
             7: AGG_GUID_DTYPE.itemsize, 8: AGG_FLOOD_DTYPE.itemsize, 9: AGG_FRAG_DTYPE.itemsize,
             10: AGG_CTL_DTYPE.itemsize, 11: NACK_DTYPE.itemsize, 12: ctypes.sizeof(_AggResult)}
    for i, size in sizes.items():
        if lib.mcl_sizeof(i) != size:
            raise DissectError(f"{library_path()}: struct {i} size {lib.mcl_sizeof(i)} != {size}")
    _CHECKED = True
    return lib


_CHECKED = False


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
    # per submessage: a repair (user DATA/DATA_FRAG already sent to that destination or to
    # a multicast group at this point); the C core owns that definition (data_is_repair)
    repair: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))

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


def _view(owner: object, ptr: int | None, n: int, dtype: np.dtype) -> np.ndarray:
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
        repair=_view(owner, res.repair, res.nsubs, np.dtype("u1")).view(bool),
    )


def rows_limit() -> int:
    """Bytes of per-packet rows the row API may hold (``MCASTLAB_DISSECT_MAX_MB``; 0: none)."""
    try:
        return int(float(os.environ.get(ROWS_LIMIT_ENV, ROWS_LIMIT_MB)) * 2**20)
    except ValueError as exc:
        raise DissectError(f"{ROWS_LIMIT_ENV}={os.environ[ROWS_LIMIT_ENV]!r}: expected MiB "
                           "(a number, 0 for no limit)") from exc


def dissect(path: str | os.PathLike[str]) -> Dissection:
    """Dissect one capture file into per-packet rows (48 bytes per frame and per
    submessage, bounded by ``rows_limit()``); raises DissectError if it is not a pcap/pcapng
    file or holds more rows than that. The wire tables use ``aggregate`` instead."""
    lib = _lib()
    res = _Result()
    err = ctypes.create_string_buffer(512)
    if lib.mcl_dissect_file_max(os.fsencode(path), rows_limit(), ctypes.byref(res), err,
                                512) != 0:
        raise DissectError(err.value.decode(errors="replace"))
    return _collect(str(path), res, lib)


def dissect_bytes(data: bytes, name: str = "<bytes>") -> Dissection:
    """Dissect a capture held in memory (tests, fuzzing)."""
    lib = _lib()
    res = _Result()
    err = ctypes.create_string_buffer(512)
    if lib.mcl_dissect_buffer_max(data, len(data), rows_limit(), ctypes.byref(res), err,
                                  512) != 0:
        raise DissectError(f"{name}: {err.value.decode(errors='replace')}")
    return _collect(name, res, lib)


# ---- aggregate mode ----------------------------------------------------------------------
def scan(path: str | os.PathLike[str], limit: int = 0) -> tuple[float, float, int]:
    """(first timestamp, last timestamp, frames) of a capture file's first ``limit`` frames
    (0: all): a pass over the record headers only."""
    return cnative.scan(path, limit)


@dataclass
class Aggregate:
    """One capture point's files folded by the C core into small tables (mcl_dissect.h,
    ``mcl_agg_*``): what captures/wire.py turns into the wire tables."""

    pkt: np.ndarray
    sub: np.ndarray
    guid: np.ndarray
    flood: np.ndarray
    frag: np.ndarray
    ctl: np.ndarray
    topics: np.ndarray
    nacks: np.ndarray
    prefixes: np.ndarray  # (n, 12) uint8
    subcount: np.ndarray  # (256,) submessages by id (traffic)
    quoted: np.ndarray  # (256,) submessages by id quoted inside ICMP errors
    bad: dict[str, int]
    nframes: int
    frag_frames: int
    rtps_bytes: int
    repair_generations: int
    tmin: float  # first and last timestamp (0 without frames)
    tmax: float


def from_handle(h: cnative.AggHandle) -> Aggregate:
    """numpy views (zero copy) on a C aggregate; they keep it alive."""
    lib = _lib()
    r = h.result()
    names = [lib.mcl_reason_name(i).decode() for i in range(lib.mcl_reason_count())]
    return Aggregate(
        pkt=_view(h, r.pkt, r.pkt_n, AGG_PKT_DTYPE),
        sub=_view(h, r.sub, r.sub_n, AGG_SUB_DTYPE),
        guid=_view(h, r.guid, r.guid_n, AGG_GUID_DTYPE),
        flood=_view(h, r.flood, r.flood_n, AGG_FLOOD_DTYPE),
        frag=_view(h, r.frag, r.frag_n, AGG_FRAG_DTYPE),
        ctl=_view(h, r.ctl, r.ctl_n, AGG_CTL_DTYPE),
        topics=_view(h, r.topic, r.topic_n, TOPIC_DTYPE),
        nacks=_view(h, r.nack, r.nack_n, NACK_DTYPE),
        prefixes=_view(h, r.prefixes, r.nprefixes, np.dtype(("u1", (12,)))).reshape(-1, 12),
        subcount=np.ctypeslib.as_array(r.subcount, (256,)).copy(),
        quoted=np.ctypeslib.as_array(r.quoted, (256,)).copy(),
        bad={names[i]: int(r.bad[i]) for i in range(1, len(names)) if r.bad[i]},
        nframes=int(r.nframes), frag_frames=int(r.frag_frames), rtps_bytes=int(r.rtps_bytes),
        repair_generations=int(r.repair_generations), tmin=float(r.tmin), tmax=float(r.tmax),
    )


def aggregate(paths: list[str | os.PathLike[str]], t0: float) -> Aggregate:
    """Fold one capture point's files (in order) into small tables; ``t0`` is the origin
    of the ``second`` keys (the run's first timestamp). Releases the GIL: points can be
    folded in parallel threads."""
    _lib()
    return from_handle(cnative.fold_files(paths, t0))


def aggregate_bytes(blobs: list[bytes], t0: float, name: str = "<bytes>") -> Aggregate:
    """``aggregate`` on captures held in memory (tests, fuzzing)."""
    _lib()
    h = cnative.AggHandle(t0)
    for b in blobs:
        h.feed(name, b)
    return from_handle(h)
