"""The C dissector's shared library through ctypes only (no numpy): loading it, and the
aggregate pass that captures/fold.py runs in threads before numpy and pandas are even
imported. captures/dissect.py builds numpy views on what it returns.
"""

from __future__ import annotations

import ctypes
import os
from pathlib import Path

ABI_VERSION = 6
LIB_ENV = "MCASTLAB_DISSECT_LIB"


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
        ("repair", ctypes.c_void_p),
    ]


class _AggResult(ctypes.Structure):
    _fields_ = [
        *[(f"{n}{s}", t) for n in ("pkt", "sub", "guid", "flood", "frag", "ctl", "topic", "nack")
          for s, t in (("", ctypes.c_void_p), ("_n", ctypes.c_size_t))],
        ("prefixes", ctypes.c_void_p), ("nprefixes", ctypes.c_size_t),
        ("subcount", ctypes.POINTER(ctypes.c_uint64)), ("quoted", ctypes.POINTER(ctypes.c_uint64)),
        ("bad", ctypes.POINTER(ctypes.c_uint64)),
        ("nframes", ctypes.c_uint64), ("frag_frames", ctypes.c_uint64),
        ("rtps_bytes", ctypes.c_uint64), ("repair_generations", ctypes.c_uint64),
        ("tmin", ctypes.c_double), ("tmax", ctypes.c_double),
    ]


_LIB: ctypes.CDLL | None = None


def library_path() -> Path:
    env = os.environ.get(LIB_ENV)
    return Path(env) if env else Path(__file__).resolve().parent / "_native" / "libmcl_dissect.so"


def load() -> ctypes.CDLL:
    """The library with every function's signature set; its ABI checked."""
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
    lib.mcl_dissect_file_max.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.POINTER(_Result),
                                         ctypes.c_char_p, ctypes.c_size_t]
    lib.mcl_dissect_buffer_max.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_size_t,
                                           ctypes.POINTER(_Result), ctypes.c_char_p,
                                           ctypes.c_size_t]
    lib.mcl_scan_file.argtypes = [ctypes.c_char_p, ctypes.c_uint64, ctypes.POINTER(ctypes.c_double),
                                  ctypes.POINTER(ctypes.c_double), ctypes.POINTER(ctypes.c_uint64),
                                  ctypes.c_char_p, ctypes.c_size_t]
    lib.mcl_agg_new.restype = ctypes.c_void_p
    lib.mcl_agg_new.argtypes = [ctypes.c_double]
    lib.mcl_agg_file.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t]
    lib.mcl_agg_buffer.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t,
                                   ctypes.c_char_p, ctypes.c_size_t]
    lib.mcl_agg_result_get.argtypes = [ctypes.c_void_p, ctypes.POINTER(_AggResult)]
    lib.mcl_agg_free.argtypes = [ctypes.c_void_p]
    if lib.mcl_abi_version() != ABI_VERSION:
        raise DissectError(f"{path}: ABI {lib.mcl_abi_version()} != {ABI_VERSION}; rebuild it")
    _LIB = lib
    return lib


def scan(path: str | os.PathLike[str], limit: int = 0) -> tuple[float, float, int]:
    """(first timestamp, last timestamp, frames) of a capture file's first ``limit`` frames
    (0: all): a pass over the record headers only."""
    lib = load()
    t0, t1, n = ctypes.c_double(), ctypes.c_double(), ctypes.c_uint64()
    err = ctypes.create_string_buffer(512)
    if lib.mcl_scan_file(os.fsencode(path), limit, ctypes.byref(t0), ctypes.byref(t1),
                         ctypes.byref(n), err, 512) != 0:
        raise DissectError(err.value.decode(errors="replace"))
    return t0.value, t1.value, int(n.value)


class AggHandle:
    """One C aggregate (mcl_agg): files folded into it in order; freed with the object
    (numpy views made from it keep it alive)."""

    def __init__(self, t0: float) -> None:
        self.lib = load()
        self.handle = self.lib.mcl_agg_new(t0)
        if not self.handle:
            raise DissectError("out of memory")

    def feed(self, name: str, data: bytes | None = None) -> None:
        """Fold a capture file (``data`` None) or a capture held in memory."""
        err = ctypes.create_string_buffer(512)
        rc = (self.lib.mcl_agg_file(self.handle, os.fsencode(name), err, 512) if data is None
              else self.lib.mcl_agg_buffer(self.handle, data, len(data), err, 512))
        if rc != 0:
            msg = err.value.decode(errors="replace")
            raise DissectError(msg if data is None else f"{name}: {msg}")

    def result(self) -> _AggResult:
        r = _AggResult()
        self.lib.mcl_agg_result_get(self.handle, ctypes.byref(r))
        return r

    def __del__(self) -> None:
        if getattr(self, "handle", None):
            self.lib.mcl_agg_free(self.handle)


def fold_files(paths: list[str | os.PathLike[str]], t0: float) -> AggHandle:
    """Fold one capture point's files, in order (releases the GIL while in C)."""
    h = AggHandle(t0)
    for p in paths:
        h.feed(os.fsdecode(p))
    return h
