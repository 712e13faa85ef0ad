"""Truncated files, snap-cut packets, malformed RTPS/IGMP/PIM and random
bytes never crash or hang the dissector; bad packets are counted under named reasons.

Two bounded fuzzers: Hypothesis drives the Release library in-process (random bytes,
random truncations and byte edits of a valid capture, edits of whole frames from their
first byte), and the AddressSanitizer + UBSan build of the same C sources
(build/captures_native-asan/mcl_check --mutate / --mutate-frames) runs thousands of
mutations through both the row API and the aggregate API (what the wire tables use) and
aborts on any out-of-bounds access or UB.
"""

from __future__ import annotations

import json
import struct
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from captures import dissect as dz
from tests.helpers import craft as c

ROOT = Path(__file__).resolve().parents[2]
ASAN_DIR = ROOT / "build" / "captures_native-asan"


def corpus_frames() -> list:
    big = c.rtps_header() + b"".join(c.info_ts() + c.data(i, b"\x55" * 100) for i in range(40))
    msg = (c.rtps_header() + c.info_dst() + c.info_ts() + c.data(1, b"a" * 30)
           + c.data_frag(2, 1, 1, 64, 64, b"b" * 64) + c.heartbeat(1, 2, 1)
           + c.acknack(1, 64, [0, 63], 2) + c.nack_frag(2, 1, 8, [3]) + c.gap(1, 3)
           + c.hb_frag(2, 1) + c.info_src() + c.pad()
           + c.sedp_publication("T", "X", 0x102))
    return [c.udp_frame(msg, ipid=5), *c.fragmented(c.udp_frame(big, ipid=9)),
            *c.igmp_frames(), *c.pim_frames()]


@pytest.fixture(scope="module")
def seed_pcap(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return c.write_pcap(tmp_path_factory.mktemp("fuzz") / "seed.pcap", corpus_frames())


@pytest.fixture(scope="module")
def seed_bytes(seed_pcap: Path) -> bytes:
    return seed_pcap.read_bytes()


def check(d: dz.Dissection) -> None:
    """Invariants that hold for any input."""
    known = set(dz.reason_names())
    assert set(d.bad) <= known
    assert all(v > 0 for v in d.bad.values())
    if len(d.subs):
        assert int(d.subs["frame"].max()) < d.packets
    if len(d.ctls):
        assert int(d.ctls["frame"].max()) < d.packets


def test_seed_is_clean(seed_bytes: bytes) -> None:
    d = dz.dissect_bytes(seed_bytes)
    assert d.bad == {}
    assert d.rtps_counts()["DATA"] == 42  # 1 user + 1 SEDP in msg, 40 in the fragmented one


@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.binary(min_size=0, max_size=4096))
def test_random_bytes(data: bytes) -> None:
    pcap_header = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)
    for blob in (data, pcap_header + data):
        try:
            check(dz.dissect_bytes(blob))
        except dz.DissectError as exc:  # not a capture at all: a clean one-line error
            assert "not a pcap or pcapng file" in str(exc)


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(cut=st.integers(min_value=24, max_value=10**6),
       edits=st.lists(st.tuples(st.integers(min_value=24, max_value=10**6),
                                st.integers(min_value=0, max_value=255)), max_size=24))
def test_mutated_capture(seed_bytes: bytes, cut: int, edits: list[tuple[int, int]]) -> None:
    buf = bytearray(seed_bytes[: max(24, cut % (len(seed_bytes) + 1))])
    for pos, val in edits:
        if len(buf) > 24:
            buf[24 + pos % (len(buf) - 24)] = val
    check(dz.dissect_bytes(bytes(buf)))


def record_ends(pcap: bytes) -> set[int]:
    """Offsets where a classic little-endian pcap's records end."""
    ends, off = {24}, 24
    while off + 16 <= len(pcap):
        off += 16 + struct.unpack_from("<I", pcap, off + 8)[0]
        ends.add(off)
    return ends


def test_truncated_file_every_length(seed_bytes: bytes) -> None:
    """Every prefix of the capture: never an exception; a cut inside a record is
    counted as file_truncated, a cut between records is a shorter, clean capture."""
    ends = record_ends(seed_bytes)
    full = dz.dissect_bytes(seed_bytes)
    for n in range(24, len(seed_bytes) + 1, 5):
        d = dz.dissect_bytes(seed_bytes[:n])
        check(d)
        assert d.packets <= full.packets
        assert (d.bad.get("file_truncated", 0) == 0) == (n in ends), n


@pytest.fixture(scope="module")
def asan_check() -> Path:
    exe = ASAN_DIR / "mcl_check"
    if not exe.exists():  # setup.sh builds it; build it here when run from a bare checkout
        subprocess.run(["cmake", "-S", str(ROOT / "captures" / "native"), "-B", str(ASAN_DIR),
                        "-DCMAKE_BUILD_TYPE=Debug", "-DMCASTLAB_ASAN=ON"], check=True,
                       capture_output=True)
    # incremental: a build older than the sources is brought up to date
    subprocess.run(["cmake", "--build", str(ASAN_DIR)], check=True, capture_output=True)
    return exe


@pytest.mark.parametrize("ng", [False, True], ids=["pcap", "pcapng"])
def test_asan_mutations(asan_check: Path, seed_pcap: Path, ng: bool) -> None:
    seed = seed_pcap
    if ng:
        seed = c.write_pcap(seed_pcap.with_name("seed.pcapng"), corpus_frames(), ng=True)
    out = subprocess.run([str(asan_check), "--mutate", str(seed), "10000", "7"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    res = json.loads(out.stdout)
    assert res["mutations"] == 10000 and res["bad"] > 0  # the mutations did hit bad paths


def test_asan_agrees_with_release(asan_check: Path, seed_pcap: Path) -> None:
    out = subprocess.run([str(asan_check), str(seed_pcap)], capture_output=True, text=True,
                         timeout=60, check=True)
    res = json.loads(out.stdout)
    d = dz.dissect(seed_pcap)
    assert res["frames"] == d.packets
    assert {int(k): v for k, v in res["submessages"].items()} == {
        int(i): int((d.subs["id"] == i).sum()) for i in set(d.subs["id"].tolist())}


def frame_spans(pcap: bytes) -> list[tuple[int, int]]:
    """(offset of the record header, frame length) of each record of a classic pcap."""
    spans, off = [], 24
    while off + 16 <= len(pcap):
        n = struct.unpack_from("<I", pcap, off + 8)[0]
        spans.append((off, n))
        off += 16 + n
    return spans


def check_aggregate(blob: bytes) -> None:
    """The aggregate API sees the same frames and bad reasons as the row API."""
    try:
        rows = dz.dissect_bytes(blob)
    except dz.DissectError:
        with pytest.raises(dz.DissectError):
            dz.aggregate_bytes([blob], 0.0)
        return
    check(rows)
    agg = dz.aggregate_bytes([blob], 0.0)
    assert agg.nframes == rows.packets
    assert agg.bad == rows.bad
    assert int(agg.pkt["packets"].sum()) == rows.packets
    traffic = rows.subs[rows.subs["quoted"] == 0]
    assert int(agg.subcount.sum()) == len(traffic) == int(agg.sub["submessages"].sum())


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(edits=st.lists(st.tuples(st.integers(min_value=0, max_value=10**6),
                                st.integers(min_value=-16, max_value=63),
                                st.integers(min_value=0, max_value=255)), min_size=1, max_size=12))
def test_mutated_frames_from_first_byte(seed_bytes: bytes,
                                        edits: list[tuple[int, int, int]]) -> None:
    """Edits aimed at whole frames: a frame's first 64 bytes (link, IP, UDP, RTPS
    headers; offset 0 is its first link-layer byte) or its record header (negative
    offsets: lengths, timestamps)."""
    spans = frame_spans(seed_bytes)
    buf = bytearray(seed_bytes)
    for which, at, val in edits:
        hdr, n = spans[which % len(spans)]
        if at >= 0 and n:
            buf[hdr + 16 + at % min(n, 64)] = val
        elif at < 0:
            buf[hdr + 16 + at] = val
    check_aggregate(bytes(buf))


@pytest.mark.parametrize("ng", [False, True], ids=["pcap", "pcapng"])
def test_asan_frame_mutations(asan_check: Path, seed_pcap: Path, ng: bool) -> None:
    """Whole frames mutated from their first byte (link, IP, UDP, RTPS headers), their
    record headers, and whole records dropped, duplicated, swapped -- under ASan+UBSan,
    through the row API and the aggregate API."""
    seed = seed_pcap
    if ng:
        seed = c.write_pcap(seed_pcap.with_name("seed-frames.pcapng"), corpus_frames(), ng=True)
    out = subprocess.run([str(asan_check), "--mutate-frames", str(seed), "10000", "11"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    res = json.loads(out.stdout)
    assert res["mutations"] == 10000 and res["bad"] > 0
    assert res["records"] == len(corpus_frames())
    assert res["frame_head_edits"] > 10000 and res["record_header_edits"] > 1000
    assert ng or res["record_moves"] > 1000


def test_asan_build_checks_float_to_int_casts(asan_check: Path) -> None:
    """-fsanitize=undefined leaves float-cast-overflow out; the sanitizer build adds it, so
    the fuzzers above also catch a double converted to an int out of range (a timestamp
    into its second)."""
    flags = (ASAN_DIR / "CMakeFiles" / "mcl_check.dir" / "flags.make").read_text()
    assert "float-cast-overflow" in flags, flags


def test_timestamp_jumps(asan_check: Path, tmp_path: Path) -> None:
    """Records whose timestamps jump by ~3 x 10^9 s (past what an int32_t second holds,
    counted from t0 = 0) and back: no undefined behaviour under UBSan (before, the
    conversion of floor(ts - t0) aborted it), every frame counted, and the jumped ones in
    the last second the tables hold."""
    big = c.rtps_header() + b"".join(c.info_ts() + c.data(i, b"\x55" * 100) for i in range(20))
    frames = [c.udp_frame(c.rtps_header() + c.data(1, b"a" * 30), ipid=1),
              c.udp_frame(c.rtps_header() + c.data(2, b"b" * 30), ipid=2),
              *c.fragmented(c.udp_frame(big, ipid=3)),
              c.udp_frame(c.rtps_header() + c.data(3, b"c" * 30), ipid=4)]
    stamps = [1.0, 3.0e9, 4.0e9, 4.0e9, 0.5]
    for f, t in zip(frames, stamps, strict=True):
        f.time = t
    pcap = c.write_pcap(tmp_path / "jumps.pcap", frames)
    out = subprocess.run([str(asan_check), str(pcap)], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr[-2000:]
    assert json.loads(out.stdout)["frames"] == len(frames)
    agg = dz.aggregate([pcap], 0.0)
    assert agg.nframes == len(frames)
    seconds = sorted(set(agg.pkt["second"].tolist()))
    assert seconds == [0, 1, 2**31 - 1], seconds
