"""The study's statistics beside the verdicts (analysis.tables.study_table): means as the
study reported them, checked against a hand computation from the runs' tables, and the
seconds that make them differ from the verdicts' medians."""

from __future__ import annotations

import math
import statistics
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis.analyse import analyse
from analysis.load import load_campaign
from analysis.report import write_report
from analysis.synthetic import write_campaign
from analysis.tables import study_table
from tests.helpers.analysis_testlib import FIXTURE_CAMPAIGN

MBIT_PER_SAMPLE = 100 * 8 / 1e6  # -dataLen 100 (28 of them Perftest's overhead), in Mbit


def hand(run_dir: Path) -> dict[str, float]:
    """One run's figures by hand: publisher 0's mean and median latency; per second, the
    Mbit/s summed over the subscribers that reported; the study's mean over every such
    second, the verdict's median over those in which every subscriber reported."""
    lat = pd.read_parquet(run_dir / "tables" / "latency.parquet")["latency_us"].tolist()
    thr = pd.read_parquet(run_dir / "tables" / "throughput.parquet")
    subs = set(thr["subscriber"])
    by_second: dict[int, list[float]] = {}
    for sub, sec, sps in zip(thr["subscriber"], thr["second"], thr["samples_per_s"],
                             strict=True):
        assert sub in subs
        by_second.setdefault(int(sec), []).append(float(sps))
    sums = {s: sum(v) * MBIT_PER_SAMPLE for s, v in by_second.items()}
    kept = [sums[s] for s, v in by_second.items() if len(v) == len(subs)]
    return {"lat_mean": statistics.fmean(lat), "lat_median": statistics.median(lat),
            "mbit_mean": statistics.fmean(sums.values()), "mbit_median": statistics.median(kept)}


def geomean(values: list[float]) -> float:
    return math.exp(statistics.fmean(math.log(v) for v in values))


def edit_throughput(path: Path, edit) -> None:
    thr = pd.read_parquet(path)
    edit(thr).to_parquet(path, index=False)


@pytest.fixture(scope="module")
def damaged(tmp_path_factory) -> Path:
    """A 3×3 cell with 2 runs per mode: unicast r0 has subscriber 1 stalled in second 3 and
    subscriber 2 silent in second 6; multicast r1's subscriber 2 never reported."""
    out = write_campaign(tmp_path_factory.mktemp("study") / "c", counts=(3,), seconds=6,
                         pings_per_s=20, repetitions=2, designs=("same",))

    def stall_and_gap(thr: pd.DataFrame) -> pd.DataFrame:
        stall = (thr["subscriber"] == 1) & (thr["second"] == 3)
        thr.loc[stall, ["samples", "samples_per_s", "mbps"]] = 0
        return thr[~((thr["subscriber"] == 2) & (thr["second"] == 6))]

    edit_throughput(out / "lan-rel-100B-3x3-unicast-r0/tables/throughput.parquet", stall_and_gap)
    edit_throughput(out / "lan-rel-100B-3x3-multicast-r1/tables/throughput.parquet",
                    lambda thr: thr[thr["subscriber"] != 2])
    return out


def test_study_statistics_match_a_hand_computation(damaged: Path):
    analysis = analyse(load_campaign(damaged), n_boot=99)
    table = study_table(analysis).set_index("mode")
    pair = analysis.pairs[0]
    for mode in ("unicast", "multicast"):
        runs = [hand(damaged / f"lan-rel-100B-3x3-{mode}-r{r}") for r in (0, 1)]
        row = table.loc[mode]
        assert row["runs"] == 2
        # the study: means over runs of each run's mean
        assert row["latency mean µs (study)"] == pytest.approx(
            statistics.fmean(r["lat_mean"] for r in runs), rel=1e-12)
        assert row["Mbit/s mean (study)"] == pytest.approx(
            statistics.fmean(r["mbit_mean"] for r in runs), rel=1e-12)
        # the verdict: geometric mean of the run medians, the very values it compared
        lat_median = geomean([r["lat_median"] for r in runs])
        mbit_median = geomean([r["mbit_median"] for r in runs])
        assert row["latency median µs (verdict)"] == pytest.approx(lat_median, rel=1e-12)
        assert row["Mbit/s median second (verdict)"] == pytest.approx(mbit_median, rel=1e-12)
        verdict = pair.verdicts
        assert geomean(verdict["latency"].run_values[mode]) == pytest.approx(lat_median)
        assert geomean(verdict["throughput"].run_values[mode]) * MBIT_PER_SAMPLE == (
            pytest.approx(mbit_median))
        assert row["latency verdict"].startswith(verdict["latency"].outcome)
        assert row["throughput verdict"].startswith(verdict["throughput"].outcome)
    # the stalled second pulls unicast's mean down: below its median second
    assert table.loc["unicast", "Mbit/s mean (study)"] < table.loc[
        "unicast", "Mbit/s median second (verdict)"]


def test_the_explanation_counts_stalled_missing_and_left_out_seconds(damaged: Path):
    table = study_table(analyse(load_campaign(damaged), n_boot=99)).set_index("mode")
    uni, multi = table.loc["unicast"], table.loc["multicast"]
    # unicast: 6 + 6 seconds; r0's second 6 lacks subscriber 2 (left out by the verdict,
    # a missing-subscriber second); r0's second 3 has subscriber 1 at 0 samples/s
    assert (uni["seconds"], uni["seconds kept"], uni["seconds left out"],
            uni["stalled seconds"], uni["missing-subscriber seconds"]) == (12, 11, 1, 1, 1)
    why = uni["why they differ"]
    assert "1 second left out by the verdict" in why
    assert "1 stalled second " in why
    assert "1 missing-subscriber second " in why
    assert "never reporting" not in why
    # multicast: r1's subscriber 2 never reported: each of its 6 seconds misses it, yet the
    # verdict keeps them (every subscriber that reported did), so none is left out
    assert (multi["seconds"], multi["seconds kept"], multi["seconds left out"],
            multi["stalled seconds"], multi["missing-subscriber seconds"]) == (12, 12, 0, 0, 6)
    why = multi["why they differ"]
    assert "6 missing-subscriber seconds" in why
    assert "never reporting: lan-rel-100B-3x3-multicast-r1 1 of 3" in why
    assert "left out" not in why and "stalled" not in why
    assert "Multicast against unicast: latency mean" in why


def test_smoke_fixture_study_section(tmp_path: Path):
    """The real smoke run: its 3×3 multicast run has one second (the 10th) that only
    subscriber 2 reported; the report gives the table, in tables/ and in report.md."""
    analysis = analyse(load_campaign(FIXTURE_CAMPAIGN), n_boot=99)
    result = write_report(analysis, tmp_path / "report")
    table = pd.read_csv(tmp_path / "report" / "tables" / "study.csv")
    row = table[(table["participants"] == "3×3") & (table["mode"] == "multicast")].iloc[0]
    figures = hand(FIXTURE_CAMPAIGN / "lan-rel-100B-3x3-multicast-r1")
    assert row["Mbit/s mean (study)"] == pytest.approx(figures["mbit_mean"], rel=1e-9)
    assert row["Mbit/s median second (verdict)"] == pytest.approx(figures["mbit_median"],
                                                                  rel=1e-9)
    assert row["latency mean µs (study)"] == pytest.approx(figures["lat_mean"], rel=1e-9)
    assert (row["seconds"], row["seconds left out"], row["stalled seconds"],
            row["missing-subscriber seconds"]) == (10, 1, 0, 1)
    others = table.drop(index=row.name)
    assert (others["seconds left out"] == 0).all() and np.isfinite(
        others["Mbit/s mean (study)"]).all()
    text = result.report.read_text()
    assert "## The study's statistics beside the verdicts" in text
    assert "- 3×3 multicast: latency: the mean is" in text
    assert (tmp_path / "report" / "tables" / "study.tex").read_text().startswith(
        r"\begin{table}")
