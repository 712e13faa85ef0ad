"""A comparison that rests on a host-bound run is never reported as a verdict.

The synthetic campaign's 10x10 point is built so that multicast clearly dominates latency
(design "multicast-better": log-median 0.25 lower, 3 runs of ~3000 samples per mode); its
runs carry host-bound fidelity records. Every place that reports it must say testbed-bound instead.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from analysis import dominance, load, report, verdicts
from analysis.analyse import analyse
from analysis.synthetic import write_campaign


@pytest.fixture(scope="module")
def bound_campaign(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("fid") / "fid"
    return write_campaign(out, counts=(3, 10), designs=("multicast-better", "multicast-better"),
                          seconds=30, campaign="fid", host_bound=(10,), repetitions=3)


def test_network_bound_pair_keeps_its_verdict(bound_campaign: Path) -> None:
    a = analyse(load.load_campaign(bound_campaign), n_boot=200)
    p3 = next(p for p in a.pairs if p.publishers == 3)
    assert not p3.testbed_bound
    assert p3.comparisons["latency"].verdict == dominance.dominates("multicast")
    assert p3.verdicts["latency"].outcome == "multicast better"
    assert p3.verdicts["latency"].family == 2  # 3x3 latency and throughput; 10x10 is out


def test_host_bound_pair_is_never_dominance(bound_campaign: Path, tmp_path: Path) -> None:
    a = analyse(load.load_campaign(bound_campaign), n_boot=200)
    p10 = next(p for p in a.pairs if p.publishers == 10)
    assert p10.testbed_bound
    comp = p10.comparisons["latency"]
    # the test itself would have said dominance: that is exactly what must not be reported
    assert comp.test_outcome == dominance.dominates("multicast")
    assert comp.verdict == dominance.TESTBED_BOUND and comp.winner is None
    assert p10.verdicts["latency"].outcome == "testbed-bound"
    assert p10.verdicts["latency"].winner is None
    row = verdicts.verdict_table(a).set_index("participants").loc["10×10"]
    assert row["fidelity"].startswith("testbed-bound")
    for col in ("latency verdict", "latency test", "throughput verdict", "throughput test",
                "explanation"):
        assert "dominat" not in row[col], (col, row[col])
        assert "better" not in row[col].split("On the wire")[0], (col, row[col])
    assert "testbed-bound" in row["latency test"]
    assert "20.0%" in row["explanation"]
    res = report.write_report(a, tmp_path / "report")
    text = res.report.read_text()
    assert "**6 of 12 runs were host-bound**" in text
    # unlimited hosts bound them: the advice is to measure the network instead
    assert "To measure the network instead: fewer participants per core" in text
    line = next(ln for ln in text.splitlines() if ln.startswith("| 10×10"))
    assert "dominat" not in line and "testbed-bound" in line
    paper = (tmp_path / "report" / "tables")
    for tex in paper.glob("*.tex"):
        for ln in tex.read_text().splitlines():
            if ln.startswith("10"):
                assert "dominat" not in ln and "better" not in ln, (tex.name, ln)


def test_unknown_fidelity_is_not_network(bound_campaign: Path) -> None:
    assert load.fidelity_row(None)["fidelity_bound"] == "unknown"
    assert load.fidelity_row(None)["fidelity_reasons"] == ""
    assert load.fidelity_row({"bound": "host", "reasons": ["x"]})["fidelity_bound"] == "host"
    assert load.fidelity_row({"bound": "odd"})["fidelity_bound"] == "unknown"
