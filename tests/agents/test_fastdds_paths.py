"""The Fast DDS agent's path counter reads RTPS as the specification says
(perftest-wrappers/fastdds/rtps_count.hpp, compiled here on its own with the sanitizers).

A submessage's octetsToNextHeader of 0 means "to the end of the message", except for PAD
and INFO_TS, where it means an empty submessage (RTPS 2.x, 9.4.5.1.3): an INFO_TS with
the invalidate flag has no body and is sent with length 0. Before, the counter read such
an INFO_TS as the rest of the message, so a DATA after it was never counted and the
same-host evidence (samehost.py) under-reported. The dissector (captures/native) already
read it right: the two are compared on the same messages.
"""

from __future__ import annotations

import struct
import subprocess
from pathlib import Path

import pytest

from captures import dissect as dz
from tests.helpers import craft as c

ROOT = Path(__file__).resolve().parents[2]
DRIVER = r"""
#include "rtps_count.hpp"
#include <cstdio>
#include <vector>
int main(int argc, char **argv)
{
  for (int i = 1; i < argc; i++) {
    FILE *f = std::fopen(argv[i], "rb");
    if (!f) return 2;
    std::vector<unsigned char> b(1 << 16);
    size_t n = std::fread(b.data(), 1, b.size(), f);
    std::fclose(f);
    std::printf("%u\n", perftest::user_data_submessages(b.data(), (uint32_t)n));
  }
  return 0;
}
"""


@pytest.fixture(scope="module")
def counter(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("rtps_count")
    (d / "driver.cpp").write_text(DRIVER)
    exe = d / "count"
    subprocess.run(["c++", "-std=c++17", "-Wall", "-Wextra", "-Werror", "-g",
                    "-fsanitize=address,undefined", "-fno-sanitize-recover=all",
                    "-I", str(ROOT / "perftest-wrappers" / "fastdds"), str(d / "driver.cpp"),
                    "-o", str(exe)], check=True, capture_output=True)
    return exe


def count(counter: Path, tmp_path: Path, msgs: list[bytes]) -> list[int]:
    files = []
    for i, m in enumerate(msgs):
        files.append(tmp_path / f"m{i}.bin")
        files[-1].write_bytes(m)
    out = subprocess.run([str(counter), *map(str, files)], capture_output=True, text=True,
                         check=True, timeout=30)
    return [int(x) for x in out.stdout.split()]


def dissector_count(msg: bytes) -> int:
    """User DATA submessages the dissector finds in the same message, sent in one frame."""
    d = dz.dissect_bytes(_pcap([c.udp_frame(msg)]))
    kind = d.subs["writer_eid"] & 0xFF  # entityKind: 0x02, 0x03 user; 0xC_ builtin
    user = d.subs[(d.subs["id"] == 0x15) & (d.subs["quoted"] == 0)
                  & ((kind == 0x02) | (kind == 0x03))]
    return len(user)


def _pcap(frames: list) -> bytes:
    import tempfile

    with tempfile.TemporaryDirectory() as t:
        return c.write_pcap(Path(t) / "p.pcap", frames).read_bytes()


def info_ts_invalid(le: bool = True) -> bytes:
    """INFO_TS with the invalidate flag (0x02): no timestamp, octetsToNextHeader 0."""
    return c.sm(0x09, b"", le, flags=0x02)


def data_to_the_end(seq: int) -> bytes:
    """A DATA whose octetsToNextHeader is 0: it runs to the end of the message."""
    body = c.data(seq, b"x" * 20)[4:]
    return struct.pack("<BBH", 0x15, 0x05, 0) + body


MESSAGES = {
    # name: (message, user DATA in it)
    "data": (c.rtps_header() + c.info_ts() + c.data(1, b"a" * 20), 1),
    "zero-length-info-ts-then-data": (c.rtps_header() + info_ts_invalid() + c.data(1, b"a"), 1),
    "zero-length-info-ts-big-endian": (c.rtps_header() + info_ts_invalid(le=False)
                                       + c.data(1, b"a", le=False), 1),
    "zero-length-pad-then-two-data": (c.rtps_header() + c.pad(0) + c.data(1, b"a")
                                      + c.info_ts() + c.data(2, b"b"), 2),
    "data-to-the-end": (c.rtps_header() + info_ts_invalid() + data_to_the_end(7), 1),
    # any other submessage with length 0 takes the rest: the DATA after it is inside it
    "zero-length-heartbeat-swallows-the-rest": (c.rtps_header() + c.sm(0x07, b"", length=0)
                                                + c.data(1, b"a"), 0),
    "builtin-writer-is-not-user-data": (c.rtps_header() + c.data(1, b"a", writer=c.SPDP_WRITER),
                                        0),
}


def test_user_data_after_zero_length_info_ts_and_pad_is_counted(counter: Path,
                                                                 tmp_path: Path) -> None:
    names = list(MESSAGES)
    got = count(counter, tmp_path, [MESSAGES[n][0] for n in names])
    assert dict(zip(names, got, strict=True)) == {n: MESSAGES[n][1] for n in names}


@pytest.mark.parametrize("name", list(MESSAGES))
def test_the_counter_agrees_with_the_dissector(counter: Path, tmp_path: Path, name: str) -> None:
    msg, _ = MESSAGES[name]
    assert count(counter, tmp_path, [msg]) == [dissector_count(msg)]
