"""Notebooks run headless against the fixture campaign and write their figures."""

from __future__ import annotations

from pathlib import Path

import pytest

NOTEBOOKS = Path(__file__).resolve().parents[2] / "analysis" / "notebooks"
EXPECTED = {
    "report.ipynb": ("ecdf_latency", "ecdf_throughput", "ecdf_throughput_per_subscriber",
                     "difference_latency", "difference_throughput", "summary", "wire_metrics"),
    "time_series.ipynb": ("latency_timeseries",),
}


def test_every_notebook_is_covered():
    assert {p.name for p in NOTEBOOKS.glob("*.ipynb")} == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_notebook_executes_and_writes_figures(name: str, campaign_dir: Path, tmp_path: Path):
    papermill = pytest.importorskip("papermill")
    out_dir = tmp_path / "out"
    papermill.execute_notebook(
        str(NOTEBOOKS / name), str(tmp_path / name),
        parameters={"results_dir": str(campaign_dir), "out_dir": str(out_dir), "n_boot": 199},
        cwd=str(NOTEBOOKS), kernel_name="python3", progress_bar=False,
    )
    for stem in EXPECTED[name]:
        for ext in ("pdf", "png"):
            assert (out_dir / "figures" / f"{stem}.{ext}").stat().st_size > 5000


def test_report_notebook_draws_the_views_against_message_size(tmp_path: Path):
    """On a campaign across message sizes (two implementations, the RTT test) the notebook
    draws the same views as `mcastlab report`."""
    papermill = pytest.importorskip("papermill")
    from analysis.synthetic import write_views_campaign

    camp = write_views_campaign(tmp_path / "c", sizes=(32, 16412), repetitions=2)
    out_dir = tmp_path / "out"
    papermill.execute_notebook(
        str(NOTEBOOKS / "report.ipynb"), str(tmp_path / "report.ipynb"),
        parameters={"results_dir": str(camp), "out_dir": str(out_dir), "n_boot": 99},
        cwd=str(NOTEBOOKS), kernel_name="python3", progress_bar=False,
    )
    for stem in ("rtt_vs_size", "resources_rtt_vs_size"):
        assert (out_dir / "figures" / f"{stem}.png").stat().st_size > 5000
    assert (out_dir / "tables" / "implementation_verdicts.csv").exists()
