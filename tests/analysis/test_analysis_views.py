"""The views a campaign's matrix asks for (analysis/views.py), on synthetic campaigns with
known answers (analysis.synthetic.write_views_campaign): a size effect (the round trip grows
with the message size, samples/s fall), an implementation or mode effect (one level 1.5× or
2× slower), and none (levels identical). Each test checks the verdicts and that the sections
which do not apply are absent from the report."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis.report import generate
from analysis.synthetic import write_views_campaign

NEUTRAL = ("undecided", "practically equal")
BOOT = 99  # the views' verdicts are run-level tests: the bootstrap only feeds the ECDFs


def _absent(text: str, *phrases: str) -> None:
    for p in phrases:
        assert p not in text, p


@pytest.fixture(scope="module")
def rtt_report(tmp_path_factory) -> Path:
    """seed004's shape: RTT test, 3 sizes, two implementations (fastdds 1.5× slower), two
    placements (identical), one mode, 3 runs each."""
    d = tmp_path_factory.mktemp("rtt")
    camp = write_views_campaign(d / "c", placements=("same-host", "two-hosts"),
                                effects={"fastdds": 1.5})
    return generate(camp, d / "out", n_boot=BOOT).out_dir


def test_rtt_verdicts_about_implementations_and_placements(rtt_report: Path) -> None:
    impl = pd.read_csv(rtt_report / "tables" / "implementation_verdicts.csv")
    assert len(impl) == 6  # 3 sizes × 2 placements
    for col in ("RTT median", "RTT p99", "jitter (RTT std)"):
        assert impl[col].str.startswith("native better (+").all(), impl[col].tolist()
    place = pd.read_csv(rtt_report / "tables" / "placement_verdicts.csv")
    assert len(place) == 6 and set(place["compared"]) == {"two-hosts vs same-host"}
    for col in ("RTT median", "RTT p99", "jitter (RTT std)"):
        assert place[col].str.startswith(NEUTRAL).all(), place[col].tolist()
    tests = pd.read_csv(rtt_report / "tables" / "implementation_verdict_tests.csv")
    assert (tests["family"] == 6).all()  # Holm over the table, one family per metric
    assert tests["change_pct"].between(30, 70).all()  # the known +50%


def test_rtt_curves_against_size(rtt_report: Path) -> None:
    curves = pd.read_csv(rtt_report / "tables" / "curves.csv")
    assert set(curves["curve"]) == {"native, same-host", "native, two-hosts",
                                    "fastdds, same-host", "fastdds, two-hosts"}
    for _, g in curves.groupby("curve"):
        g = g.sort_values("data_len")
        med = g["latency_median"].to_numpy()
        assert np.all(np.diff(med) > 0)  # the size effect: RTT grows with the size
        # the round trip, not the one-way value the agents store: 40 µs + size / 50 MB/s
        expect = 40 + g["data_len"].to_numpy() / 50
        factor = 1.5 if g["curve"].iloc[0].startswith("fastdds") else 1.0
        assert np.allclose(med / (expect * factor), 1, atol=0.12), med
        assert (g["latency_median_lo"] < med).all() and (med < g["latency_median_hi"]).all()
    assert (curves["cpu publisher"] == 50).all() and (curves["cpu subscriber 0"] == 20).all()


def test_rtt_report_has_its_views_and_no_inapplicable_section(rtt_report: Path) -> None:
    text = (rtt_report / "report.md").read_text()
    assert "## What this report answers" in text
    assert "Compared: implementation, placement." in text
    assert "## RTT test: latency and jitter against message size" in text
    assert "## Verdicts about the implementations, per message size" in text
    assert "## Verdicts about the placements, per message size" in text
    assert "## Resource cost per role" in text
    for stem in ("rtt_vs_size", "resources_rtt_vs_size"):
        assert f"figures/{stem}.png" in text
        assert (rtt_report / "figures" / f"{stem}.png").stat().st_size > 5000
    _absent(text, "not compared", "subscriber-seconds", "How to read this report",
            "Ablations", "Implementations side by side", ": verdicts\n", "ECDF",
            "wire metrics", "Verdicts about the modes")
    assert not list((rtt_report / "figures").glob("ecdf_*"))
    assert not (rtt_report / "tables" / "ablation.csv").exists()
    # the paper's inputs too: no mode verdict table or sentence of a one-mode campaign
    for path in (rtt_report / "tables").glob("*.tex"):
        assert "not compared" not in path.read_text(), path.name
    assert r"\item" not in (rtt_report / "tables" / "sentences.tex").read_text()


def test_stress_test_modes_and_implementations_by_size(tmp_path: Path) -> None:
    """seed001's shape: stress test, 3 subscribers, 3 sizes, both modes (unicast's samples/s
    halved) and two implementations (identical)."""
    camp = write_views_campaign(tmp_path / "c", sizes=(1024, 16384, 131072), test="throughput",
                                modes=("unicast", "multicast"), subscribers=3,
                                effects={"unicast": 2.0})
    out = generate(camp, tmp_path / "out", n_boot=BOOT).out_dir
    modes_t = pd.read_csv(out / "tables" / "mode_verdicts_by_size.csv")
    assert len(modes_t) == 6 and modes_t["samples/s"].str.startswith("multicast better").all()
    impl = pd.read_csv(out / "tables" / "implementation_verdicts.csv")
    assert impl["samples/s"].str.startswith(NEUTRAL).all(), impl["samples/s"].tolist()
    curves = pd.read_csv(out / "tables" / "curves.csv")
    for _, g in curves.groupby("curve"):
        g = g.sort_values("data_len")
        assert np.all(np.diff(g["samples_per_s"]) < 0)  # samples/s fall with the size
        assert np.all(np.diff(g["mbps"]) > 0)  # while Mbit/s rise (2e5/(1 + s/2 KB) · s)
    text = (out / "report.md").read_text()
    assert "How do samples/s and Mbit/s change with message size" in text
    assert "Compared: mode, implementation." in text
    assert "## Verdicts about the modes, per message size" in text
    assert "figures/throughput_vs_size.png" in text
    assert "figures/resources_throughput_vs_size.png" in text
    assert "(DATA_FRAG)" in text  # 128 KB lies beyond the largest datagram: marked
    _absent(text, "not compared", "## RTT test", "Ablations", "Verdicts about the placements")


# A latency test has no throughput: its summary panel says so instead of drawing an
# empty legend (matplotlib's "No artists with labels" warning).
@pytest.mark.filterwarnings("error::UserWarning")
def test_nothing_compared_leaves_out_every_comparison(tmp_path: Path) -> None:
    """One size, one implementation, one mode: a description, no verdicts."""
    camp = write_views_campaign(tmp_path / "c", sizes=(1052,), agents=("native",),
                                repetitions=2)
    out = generate(camp, tmp_path / "out", n_boot=BOOT).out_dir
    text = (out / "report.md").read_text()
    assert "Nothing is compared level against level" in text
    assert "figures/ecdf_latency.png" in text  # the distribution is still drawn
    _absent(text, "not compared", "How to read this report", ": verdicts\n", "Verdicts about",
            ": throughput\n", "Ablations", "subscriber-seconds")
