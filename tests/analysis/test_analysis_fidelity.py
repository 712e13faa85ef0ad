"""A comparison that rests on a host-bound run is never reported as a verdict.

The synthetic campaign's 10x10 point is built so that multicast clearly dominates latency
(design "multicast-better": log-median 0.25 lower, 3 runs of ~3000 samples per mode); its
runs carry host-bound fidelity records. Every place that reports it must say testbed-bound instead.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
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


def test_drops_by_cpu_are_summed_over_runs() -> None:
    """The report names the CPU whose pinned hosts dropped the most, counted over the runs
    that could tell, with one run's figures; nothing when no run could tell."""
    def fid(cpu: str | None, text: str = "") -> dict[str, object]:
        rec: dict[str, object] = {"bound": "saturated", "reasons": []}
        if cpu:
            rec.update(most_drops_cpu=cpu, drops_by_cpu_text=text)
        return rec

    records = [fid("cpu0", "CPU 0 (h1, h3) 14.00%, CPU 1 (h2, h4) 0.40%"),
               fid("cpu1", "CPU 0 (h1, h3) 1.00%, CPU 1 (h2, h4) 2.00%"),
               fid("cpu0", "CPU 0 (h1, h3) 11.00%, CPU 1 (h2, h4) 0.30%"), fid(None)]
    runs = pd.DataFrame([{"run_id": f"r{i}", **load.fidelity_row(r)}
                         for i, r in enumerate(records)])
    text = report.drops_by_cpu_summary(runs)
    assert text.startswith("Socket drops by CPU: in 2 of 3 runs whose pinned hosts dropped "
                           "datagrams, the hosts on CPU 0 dropped the largest share "
                           "(CPU 1 in 1)"), text
    assert "r2: CPU 0 (h1, h3) 11.00%" in text  # the last such run's figures
    assert report.drops_by_cpu_summary(runs.iloc[3:]) == ""
    assert load.fidelity_row(None)["fidelity_drops_cpu"] == ""


def test_runs_taken_again_are_named_in_the_report(tmp_path: Path) -> None:
    """A run whose earlier attempt was unfaithful (moved to superseded/ by the runner) is
    counted by mode in the report's fidelity section, with the attempt's reason."""
    import json

    out = write_campaign(tmp_path / "re", counts=(3,), designs=("multicast-better",),
                         seconds=10, campaign="re", repetitions=2)
    run = next(d for d in sorted(out.iterdir()) if "multicast-r1" in d.name)
    man = json.loads((run / "manifest.json").read_text())
    man["retaken"] = [{"attempt": 1, "superseded": "20261203T051500Z",
                       "why": ["timer wake-up latency p99 outside the hosts: 5923 µs "
                               "(limit 5000 µs)"]}]
    (run / "manifest.json").write_text(json.dumps(man))
    a = analyse(load.load_campaign(out), n_boot=50)
    text = report.write_report(a, tmp_path / "report").report.read_text()
    line = next(ln for ln in text.splitlines() if ln.startswith("**Taken again"))
    assert line.startswith("**Taken again: 1 of 4 runs** (multicast 1)")
    assert (f"{run.name}: attempt 1 (superseded/20261203T051500Z): timer wake-up latency "
            "p99 outside the hosts: 5923 µs") in line


def test_an_unverified_run_gives_no_verdict_and_is_named(tmp_path: Path) -> None:
    """A run whose fidelity checks did not all run (a wake-up sampler gave nothing) is
    excluded from verdicts as a host-bound run is, and the report names it with what was
    not checked; its manifest still says network-bound."""
    import json

    out = write_campaign(tmp_path / "unv", counts=(3,), designs=("multicast-better",),
                         seconds=10, campaign="unv", repetitions=3)
    a = analyse(load.load_campaign(out), n_boot=50)
    assert a.pairs[0].verdicts["latency"].outcome == "multicast better"  # as measured
    run = next(d for d in sorted(out.iterdir()) if "multicast-r1" in d.name)
    man = json.loads((run / "manifest.json").read_text())
    man["fidelity"].update(verified=False,
                           unverified=["timer lateness in h1 (its sampler gave no data)"])
    (run / "manifest.json").write_text(json.dumps(man))
    camp = load.load_campaign(out)
    row = camp.runs.set_index("run_id").loc[run.name]
    assert row["fidelity_bound"] == "unverified"
    assert row["fidelity_reasons"] == ("unverified, not checked: timer lateness in h1 (its "
                                       "sampler gave no data)")
    a = analyse(camp, n_boot=50)
    pair = a.pairs[0]
    assert pair.testbed_bound
    assert pair.verdicts["latency"].outcome == "testbed-bound"
    assert pair.comparisons["latency"].verdict == dominance.TESTBED_BOUND
    row = verdicts.verdict_table(a).iloc[0]
    assert row["fidelity"] == "unverified (1 of 6 runs: fidelity checks did not all run)"
    assert row["latency test"].startswith("testbed-bound, no verdict: the fidelity checks "
                                          "did not all run")
    assert f"Unverified runs: {run.name}: unverified" in row["explanation"]
    text = report.write_report(a, tmp_path / "report").report.read_text()
    line = next(ln for ln in text.splitlines() if ln.startswith("**1 of 6 runs were unverified"))
    assert f"{run.name}: unverified, not checked: timer lateness in h1" in line
    assert "To verify the runs: a wake-up sampler that runs" in line
    assert "No run of the 6 was host-bound" in text


def test_records_without_verified_read_as_verified() -> None:
    assert load.fidelity_row({"bound": "network", "reasons": []})["fidelity_bound"] == "network"
    row = load.fidelity_row({"bound": "host", "reasons": ["socket drops"], "verified": False,
                             "unverified": ["the measurement window"]})
    assert row["fidelity_bound"] == "unverified"
    assert row["fidelity_reasons"] == ("unverified, not checked: the measurement window "
                                       "(and socket drops)")
