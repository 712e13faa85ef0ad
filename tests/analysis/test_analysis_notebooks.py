"""Notebooks run headless against the fixture campaign and write their figures (acceptance 3)."""

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
