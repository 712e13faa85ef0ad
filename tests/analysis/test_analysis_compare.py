"""`mcastlab compare` on synthetic campaigns whose agreement is known by construction.

Three campaigns of one scenario ("synth"), different random seeds, 3 runs per mode. At
3x3 the latency design is multicast-better in the first two and unicast-better in the
third: a contradiction. At 10x10 every campaign is multicast-better: they agree. At 25x25
the runs are host-bound in every campaign: testbed-bound, whatever the test would say.

With one run per mode and a run effect as large as the modes' difference, the same
within-run tests would contradict each other; the verdicts about the modes are
undecided instead.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from analysis.compare import AGREE, CONTRADICT, TESTBED, UNDECIDED, agreement, compare, outcome
from analysis.load import ResultsError
from analysis.synthetic import write_campaign
from mcastlab.cli import main


@pytest.fixture(scope="module")
def campaigns(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    root = tmp_path_factory.mktemp("cmp")
    out = []
    for i, first in enumerate(("multicast-better", "multicast-better", "unicast-better")):
        out.append(write_campaign(
            root / f"c{i}", counts=(3, 10, 25),
            designs=(first, "multicast-better", "multicast-better"), seconds=30, seed=10 + i,
            campaign="synth", host_bound=(25,), repetitions=3))
    return out


def test_known_agreements(campaigns: list[Path]) -> None:
    _, cells = compare(campaigns, n_boot=199)
    by = {(c.participants, c.metric): c for c in cells}
    assert by[("3×3", "latency")].agreement == CONTRADICT
    assert by[("3×3", "latency")].outcomes == ["multicast", "multicast", "unicast"]
    assert by[("10×10", "latency")].agreement == AGREE
    assert by[("25×25", "latency")].agreement == TESTBED
    assert by[("25×25", "throughput")].agreement == TESTBED
    sp = by[("10×10", "latency")].spread()
    assert sp["min"] < 0 and sp["max"] < 0 and sp["sd"] >= 0


def test_cli_json(campaigns: list[Path], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", *map(str, campaigns), "--json", "--bootstrap", "199"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert len(data["campaigns"]) == 3
    cell = next(c for c in data["cells"]
                if c["participants"] == "3×3" and c["metric"] == "latency")
    assert cell["agreement"] == CONTRADICT
    assert set(cell["verdicts"].values()) == {"multicast", "unicast"}
    assert data["summary"][CONTRADICT] >= 1


def test_refuses_other_scenarios(campaigns: list[Path], tmp_path: Path) -> None:
    other = write_campaign(tmp_path / "o", counts=(3,), seconds=10, campaign="other")
    with pytest.raises(ResultsError, match="different scenarios"):
        compare([campaigns[0], other], n_boot=99)


def test_single_runs_with_run_effects_are_undecided_not_contradicting(tmp_path: Path) -> None:
    """One run per mode, identical modes, a run effect of SD 0.3 on the log scale: the
    within-run tests call directions (they compare runs), the mode verdicts do not."""
    camps = [write_campaign(tmp_path / f"s{i}", counts=(1, 3, 10), designs=("same",) * 3,
                            seconds=30, seed=40 + i, campaign="single", run_sd=0.3)
             for i in range(3)]
    _, cells = compare(camps, n_boot=199)
    assert {c.agreement for c in cells} == {UNDECIDED}
    from analysis.analyse import analyse
    from analysis.load import load_campaign
    within = [p.comparisons[m].verdict for c in camps
              for p in analyse(load_campaign(c), n_boot=199).pairs for m in p.comparisons]
    assert any(v.endswith("dominates") for v in within), within  # what the old verdict said


def test_agreement_rules() -> None:
    assert agreement(["undecided", "undecided"]) == UNDECIDED
    assert agreement(["equal", "equal", "undecided"]) == "one says no difference"
    assert agreement(["equal", "multicast"]) == CONTRADICT
    assert agreement(["testbed", "testbed"]) == TESTBED
    assert outcome(None) == "not compared"
