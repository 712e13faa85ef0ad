"""Pooling campaigns of one configuration (`mcastlab report A B C --out D`).

Known answers by construction: three synthetic campaigns of one scenario, 2 runs per mode,
a run effect (SD 0.1 on the log scale) comparable to the modes' difference. Alone each
campaign is undecided at 10×10; pooled (6 runs per mode) the verdict is multicast better,
as designed. Every pooled run's samples are exactly its campaign's.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from analysis.analyse import analyse
from analysis.load import ResultsError, load_campaign
from analysis.pool import pool
from analysis.report import generate
from analysis.synthetic import write_campaign
from mcastlab.cli import main


@pytest.fixture(scope="module")
def campaigns(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    root = tmp_path_factory.mktemp("pool")
    return [write_campaign(root / f"c{i}", counts=(3, 10), seconds=20, seed=70 + i,
                           designs=("same", "multicast-better"), campaign="poolable",
                           repetitions=2, run_sd=0.1)
            for i in range(3)]


def test_pooled_runs_are_the_campaigns_runs(campaigns: list[Path]) -> None:
    pooled = pool(campaigns)
    singles = [load_campaign(c) for c in campaigns]
    assert len(pooled.runs) == sum(len(c.runs) for c in singles) == 24
    assert [n for _, n in pooled.sources] == [8, 8, 8]
    for k, camp in enumerate(singles, start=1):
        for rid in camp.runs["run_id"]:
            assert np.array_equal(pooled.latency_of(f"{k}/{rid}"), camp.latency_of(rid))
            thr = pooled.throughput[pooled.throughput["run_id"] == f"{k}/{rid}"]
            assert len(thr) == (camp.throughput["run_id"] == rid).sum() > 0
    reps = pooled.runs.groupby(["publishers", "mode"])["repetition"].apply(sorted)
    assert all(r == [1, 2, 3, 4, 5, 6] for r in reps)


def _latency_outcome(campaign) -> str:
    pair = next(p for p in analyse(campaign, n_boot=99).pairs if p.publishers == 10)
    return pair.verdicts["latency"].outcome


def test_pooling_decides_what_each_campaign_alone_cannot(campaigns: list[Path]) -> None:
    alone = [_latency_outcome(load_campaign(c)) for c in campaigns]
    assert all("better" not in o for o in alone), alone
    assert _latency_outcome(pool(campaigns)) == "multicast better"


def test_refuses_another_configuration_naming_cell_key_and_values(
        campaigns: list[Path], tmp_path: Path) -> None:
    longer = write_campaign(tmp_path / "longer", counts=(3, 10), seconds=40, seed=9,
                            campaign="poolable", repetitions=2)
    with pytest.raises(ResultsError, match=r"3×3 unicast ran with execution_time = 40.*"
                                           r"with 20; only runs of one configuration"):
        pool([campaigns[0], longer])
    other = write_campaign(tmp_path / "other", counts=(3,), seconds=20, campaign="other")
    with pytest.raises(ResultsError, match="different scenarios cannot be pooled"):
        pool([campaigns[0], other])


def test_report_of_pooled_campaigns(campaigns: list[Path], tmp_path: Path,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", *map(str, campaigns), "--bootstrap", "99"]) == 2
    assert "needs an output directory (--out)" in capsys.readouterr().err
    out = tmp_path / "pooled"
    assert main(["report", *map(str, campaigns), "--out", str(out), "--bootstrap", "99",
                 "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [c["runs"] for c in data["pooled_from"]] == [8, 8, 8]
    verdict = next(v for v in data["verdicts"]
                   if v["participants"] == "10×10" and v["metric"] == "latency")
    assert verdict["verdict"] == "multicast better"
    text = (out / "report.md").read_text()
    assert "**Pooled from 3 campaigns**" in text and "(8 runs)" in text
    assert "Results: 3 campaigns pooled (below)" in text  # not the first one's path alone
    assert "No cell is contradicted" in text


def test_report_says_when_pooled_campaigns_contradict(tmp_path: Path) -> None:
    camps = [write_campaign(tmp_path / f"x{i}", counts=(10,), seconds=20, seed=80 + i,
                            designs=(design,), campaign="contra", repetitions=3)
             for i, design in enumerate(("multicast-better", "unicast-better"))]
    text = generate(camps, tmp_path / "out", n_boot=99).report.read_text()
    assert "contradict each other in" in text and "10×10 latency" in text
