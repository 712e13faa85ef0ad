"""Capture coverage against the run: pure logic, no root.

A tcpdump ring (``ring_files``) that wrapped keeps only the end of a run; every wire
figure must say so ("capture covers the last 41 s of 240 s").
"""

from __future__ import annotations

import math
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from captures import coverage
from captures.report import coverage_lines, print_wire

ROOT = Path(__file__).resolve().parents[2]


def write_pcap(path: Path, stamps: list[float], ns: bool = False, cut: bool = False) -> Path:
    """A classic pcap with one 60-byte frame per timestamp (``cut``: last record torn)."""
    magic = 0xA1B23C4D if ns else 0xA1B2C3D4
    div = 10**9 if ns else 10**6
    out = struct.pack("<IHHiIII", magic, 2, 4, 0, 0, 65535, 1)
    for ts in stamps:
        sec = int(ts)
        out += struct.pack("<IIII", sec, round((ts - sec) * div), 60, 60) + bytes(60)
    if cut:
        out = out[:-30]
    path.write_bytes(out)
    return path


def test_pcap_span_us_ns_and_torn_record(tmp_path: Path) -> None:
    p = write_pcap(tmp_path / "a.pcap", [1000.25, 1001.0, 1040.5])
    assert coverage.pcap_span(p) == (1000.25, 1040.5, 3)
    q = write_pcap(tmp_path / "b.pcap", [7.000000001, 9.5], ns=True)
    first, last, n = coverage.pcap_span(q) or (0, 0, 0)
    assert (first, last, n) == (pytest.approx(7.000000001, abs=1e-9), 9.5, 2)
    torn = write_pcap(tmp_path / "c.pcap", [1.0, 2.0, 3.0], cut=True)
    span = coverage.pcap_span(torn)
    assert span is not None and span[2] == 3  # header complete, payload torn: counted
    (tmp_path / "empty.pcap").write_bytes(b"")
    assert coverage.pcap_span(tmp_path / "empty.pcap") is None


def test_ring_files_of_a_point_together(tmp_path: Path) -> None:
    write_pcap(tmp_path / "h1-eth0.pcap0", [1200.0, 1210.0])
    write_pcap(tmp_path / "h1-eth0.pcap1", [1199.0, 1240.0])
    cov = coverage.of_run(tmp_path, {"start": 1000.0, "end": 1240.0})
    assert cov["h1-eth0"]["text"] == "capture covers the last 41 s of 240 s"
    assert cov["h1-eth0"]["missing_start_s"] == 199.0 and not cov["h1-eth0"]["whole"]


@pytest.mark.parametrize(("first", "last", "text"), [
    (999.0, 1240.5, "capture covers the whole run (240 s)"),
    (1000.8, 1239.5, "capture covers the whole run (240 s)"),  # within the tolerance
    (1199.0, 1240.0, "capture covers the last 41 s of 240 s"),
    (999.0, 1100.0, "capture covers the first 100 s of 240 s"),
    (1100.0, 1150.0, "capture covers 50 s of 240 s (from 100 s to 150 s)"),
    (None, None, "capture holds no packets of the run's 240 s"),
])
def test_texts(first: float | None, last: float | None, text: str) -> None:
    assert coverage.coverage(first, last, 1000.0, 1240.0)["text"] == text


def test_print_wire_puts_coverage_above_the_figures(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    cov = {"h1-eth0": coverage.coverage(1199.0, 1240.0, 1000.0, 1240.0)}
    summary = {"packets": 10, "coverage": cov}
    assert coverage_lines(summary) == ["h1-eth0: capture covers the last 41 s of 240 s"]
    print_wire(summary, tmp_path)
    out = capsys.readouterr().out
    assert out.index("covers the last 41 s of 240 s") < out.index("wire totals")
    assert coverage_lines({"packets": 10}) == []  # a lone pcap: the run is unknown


def test_report_wire_evidence_says_what_the_capture_covers() -> None:
    from analysis.analyse import Pair
    from analysis.load import _coverage_cols
    from analysis.verdicts import wire_cell

    wrapped = _coverage_cols({"h1-eth0": coverage.coverage(1199.0, 1240.0, 1000.0, 1240.0),
                              "h2-eth0": coverage.coverage(999.0, 1240.0, 1000.0, 1240.0)})
    whole = _coverage_cols({"h1-eth0": coverage.coverage(999.0, 1240.0, 1000.0, 1240.0)})
    assert wrapped["wire_capture_covered_s"] == 41.0  # the least-covered point
    base = {"wire_meta_share": 0.2}
    pair = Pair("g", 3, 3, "", {"unicast": ["u"], "multicast": ["m"]},
                wire={"unicast": {**base, **whole}, "multicast": {**base, **wrapped}})
    cell = wire_cell(pair)
    assert "multicast: capture covers the last 41 s of 240 s" in cell
    assert "unicast: capture" not in cell
    none = _coverage_cols(None)
    assert all(math.isnan(v) for v in none.values())


def test_analysis_and_captures_import_without_root_or_mininet() -> None:
    """As user nobody, with Mininet made unimportable."""
    code = ("import sys; sys.modules['mininet'] = None\n"
            "import analysis.report, analysis.verdicts, analysis.load, captures.coverage, "
            "captures.wire, captures.report, captures.capture, captures.minilab\n"
            "print('ok')")
    res = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                          sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, check=False, env={"PYTHONPATH": str(ROOT), "HOME": "/tmp"})
    assert res.returncode == 0 and res.stdout.strip() == "ok", res.stderr[-2000:]


def test_report_lists_runs_whose_capture_wrapped() -> None:
    import pandas as pd

    from analysis.load import _coverage_cols
    from analysis.report import coverage_notes

    rows = [{"run_id": "a-r1", **_coverage_cols(
                {"p": coverage.coverage(1199.0, 1240.0, 1000.0, 1240.0)})},
            {"run_id": "b-r1", **_coverage_cols(
                {"p": coverage.coverage(999.0, 1240.0, 1000.0, 1240.0)})},
            {"run_id": "c-r1", **_coverage_cols(None)}]
    notes = coverage_notes(pd.DataFrame(rows))
    assert "- `a-r1`: capture covers the last 41 s of 240 s" in notes
    assert "b-r1" not in notes and "c-r1" not in notes
    assert coverage_notes(pd.DataFrame(rows[1:])) == ""
