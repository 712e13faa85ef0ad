"""`mcastlab report` on the fixture campaign."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from analysis.report import generate
from analysis.synthetic import write_campaign
from tests.helpers.analysis_testlib import has_wire, synthetic_designs

FIGURES = ("ecdf_latency", "ecdf_throughput", "ecdf_throughput_per_subscriber",
           "difference_latency", "difference_throughput", "wire_metrics", "summary")
TABLES = ("verdicts", "mode_verdicts", "summary", "statistics", "comparisons", "wire")
REPO = Path(__file__).resolve().parents[2]


# Verdicts about the modes (3 runs per mode) on a synthetic design: the run medians. "same"
# may be practically equal or undecided (3 runs rarely prove equivalence), never a mode
# better; "crossing" has multicast's median lower (its tail is heavier: the ECDF test shows
# the crossing). (latency verdicts, throughput verdicts) allowed per design.
NEUTRAL = {"practically equal", "undecided"}
EXPECTED_VERDICTS = {
    "same": (NEUTRAL, NEUTRAL),
    "multicast-better": ({"multicast better"}, {"multicast better"}),
    "unicast-better": ({"unicast better"}, {"unicast better"}),
    "crossing": ({"multicast better"}, NEUTRAL),
}


@pytest.fixture(scope="session")
def report(any_campaign: Path, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("report")
    proc = subprocess.run(
        [sys.executable, "-m", "mcastlab.cli", "report", str(any_campaign), "--out", str(out),
         "--bootstrap", "199"],
        capture_output=True, text=True, timeout=600, check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "report:" in proc.stdout
    return out


def test_every_figure_and_table_is_written(report: Path):
    for stem in FIGURES:
        for ext in ("pdf", "png"):
            path = report / "figures" / f"{stem}.{ext}"
            assert path.stat().st_size > 5000, path
    for name in TABLES:
        for ext in ("csv", "md", "tex"):
            assert (report / "tables" / f"{name}.{ext}").stat().st_size > 0
    text = (report / "report.md").read_text()
    for stem in FIGURES:
        assert f"figures/{stem}.png" in text


def test_verdict_table_has_every_count_qualified_with_wire_evidence(report, any_campaign):
    verdicts = pd.read_csv(report / "tables" / "verdicts.csv")
    runs = pd.read_json(any_campaign / "campaign.json", typ="series")["runs"]
    wire = has_wire(any_campaign)
    counts = {f"{r['config']['publishers']}×{r['config']['subscribers']}" for r in runs}
    assert set(verdicts["participants"]) == counts
    for _, row in verdicts.iterrows():
        for col in ("latency test", "throughput test"):
            assert "block-permutation and per-mode block-bootstrap test" in row[col]
            assert "median" in row[col]
        assert row["explanation"].startswith(f"At {row['participants']},")
        if wire:
            assert "(unicast → multicast)" in row["wire evidence"]
            # "differs", never "the largest difference" (metrics differ by design) or a cause
            assert "On the wire the modes differ" in row["explanation"]
            assert "largest difference" not in row["explanation"]
            assert "explain" not in row["explanation"]
        else:
            assert row["wire evidence"] == "no capture"
            assert row["explanation"].endswith("No capture, so no wire evidence.")


def test_known_answers_on_the_synthetic_fixture(report, any_campaign):
    designs = synthetic_designs(any_campaign)
    if designs is None:
        pytest.skip("real campaign: no known answers")
    verdicts = pd.read_csv(report / "tables" / "verdicts.csv").set_index("participants")
    for n, design in designs.items():
        lat, thr = EXPECTED_VERDICTS[design]
        row = verdicts.loc[f"{n}×{n}"]
        assert row["latency verdict"] in lat, (n, design)
        assert row["throughput verdict"] in thr, (n, design)
        if design == "multicast-better":
            assert ("multicast has lower latency than unicast (run medians: multicast -"
                    in row["explanation"])
        if design == "crossing":
            assert "the ECDF test" not in row["explanation"]  # decided on the runs
            assert "crossing" in row["latency test"]
    latex = (report / "tables" / "verdicts.tex").read_text()
    assert r"\begin{tabular}" in latex and "$\\times$" in latex


def test_study_matrix_verdict_table(tmp_path: Path):
    """seed003-quick's shape (1 to 75 participants, both modes) gives one qualified row per
    count, with its wire evidence (on a synthetic stand-in for that campaign)."""
    counts = (1, 3, 10, 25, 50, 75)
    camp = write_campaign(tmp_path / "seed003-like", counts=counts, seconds=20, pings_per_s=50,
                          repetitions=3, run_sd=0.03)
    res = generate(camp, tmp_path / "out", n_boot=199)
    verdicts = pd.read_csv(res.out_dir / "tables" / "verdicts.csv")
    assert list(verdicts["participants"]) == [f"{n}×{n}" for n in counts]
    designs = synthetic_designs(camp)
    assert designs is not None and set(designs) == set(counts)
    # The known answer of each count's design. With 3 runs per mode and a Holm family of 12,
    # a true 30% difference is sometimes left undecided (3×3 throughput: p=0.011, Holm
    # p=0.078); it is never called the wrong way, and at least half of them are found.
    decided = found = 0
    for n, design in designs.items():
        row = verdicts.set_index("participants").loc[f"{n}×{n}"]
        for got, allowed in zip((row["latency verdict"], row["throughput verdict"]),
                                EXPECTED_VERDICTS[design], strict=True):
            if allowed == NEUTRAL:
                assert got in NEUTRAL, (n, design, got)
                continue
            assert got in allowed | {"undecided"}, (n, design, got)
            decided += 1
            found += got in allowed
    assert decided >= 4 and 2 * found >= decided, (found, decided)
    assert (verdicts["runs per mode"] == "3/3").all()
    text = res.report.read_text()
    assert "Holm" in text and "family" in text
    assert "Verdicts rest on 3 runs per mode at 1×1" in text
    assert verdicts["wire evidence"].str.contains("ACKNACKs per reader per s").all()


SEED003 = REPO / "results" / "seed003-scaled-quick"  # `make run`


@pytest.mark.skipif(not (SEED003 / "campaign.json").exists(), reason="no make run results")
def test_make_run_verdict_table(tmp_path: Path):
    """The same verdict table on the real campaign, when `make run` has produced it."""
    res = generate(SEED003, tmp_path / "out")
    verdicts = pd.read_csv(res.out_dir / "tables" / "verdicts.csv")
    assert {"1×1", "3×3", "10×10", "25×25", "50×50", "75×75"} <= set(verdicts["participants"])
    # Network-bound cells carry verdicts; host-bound ones are testbed-bound (their latency
    # may also lack samples: publisher 0 pings rarely on an overloaded testbed).
    net = verdicts[verdicts["fidelity"].eq("network-bound")]
    assert not net["latency verdict"].eq("not compared").any()
    host = verdicts[verdicts["fidelity"].str.startswith("testbed-bound")]
    assert host["throughput verdict"].eq("testbed-bound").all()
    assert not verdicts["latency verdict"].str.contains("dominates").where(
        verdicts["fidelity"].str.startswith("testbed-bound"), False).any()
    assert not verdicts["wire evidence"].eq("no capture").any()


def test_bad_results_directory_exit_2(tmp_path: Path):
    proc = subprocess.run(
        [sys.executable, "-m", "mcastlab.cli", "report", str(tmp_path / "missing")],
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0
    assert "missing: not a directory" in proc.stderr


def test_the_report_says_what_more_runs_would_decide(tmp_path: Path):
    """Each undecided cell with its runs per mode, the runs to add over the campaign and
    their time at the runs' own durations; the cells no run count decides apart."""
    from analysis import modes
    from analysis.analyse import analyse
    from analysis.load import load_campaign
    from analysis.report import more_runs_plan

    camp = write_campaign(tmp_path / "c", counts=(1, 3, 10, 25), seconds=10,
                          pings_per_s=20, repetitions=3, run_sd=0.2)
    analysis = analyse(load_campaign(camp), n_boot=99)
    text = more_runs_plan(analysis)
    added, decidable, at_margin = 0, 0, 0
    for p in analysis.pairs:
        need = 0
        for metric, v in p.verdicts.items():
            if v.outcome != modes.UNDECIDED:
                continue
            n = modes.runs_to_decide(v)
            if n is None:
                at_margin += 1
                assert f"{p.label} {metric}" in text.split("No run count")[1]
            else:
                decidable += 1
                need = max(need, n)
                assert f"{p.label} {metric} ({n})" in text
        added += sum(max(0, need - 3) for _ in ("unicast", "multicast")) if need else 0
    assert decidable, text  # the campaign leaves something to decide
    # every synthetic run takes 10 s + 5 s
    assert f"That is {added} more runs, about " in text
    minutes = added * 15 / 60
    when = f"{minutes:.0f} min" if added * 15 >= 90 else f"{added * 15} s"
    assert f"about {when} at this campaign's run durations" in text
    assert ("No run count up to 50 per mode decides" in text) == bool(at_margin)


def test_more_runs_name_the_group_when_cells_share_a_count(tmp_path: Path):
    """An ablation's groups have the same counts: each undecided cell is named with its
    group, or "50×50 latency (8)" could be any of them."""
    from analysis.analyse import analyse
    from analysis.load import load_campaign
    from analysis.report import more_runs_plan

    camp = write_campaign(tmp_path / "c", counts=(3,), seconds=10, pings_per_s=20,
                          repetitions=3, run_sd=0.4,
                          agents={"native": ("same",), "fanout": ("same",)},
                          config_extra={"fanout": {"agent": "native",
                                                   "fanout": "joined-only"}})
    analysis = analyse(load_campaign(camp), n_boot=99)
    assert len(analysis.groups) == 2
    text = more_runs_plan(analysis)
    before = re.findall(r"(\S+) 3×3 (?:latency|throughput)", text)
    assert before, text  # something is left to decide
    assert set(before) <= set(analysis.groups), text
    assert "`baseline_repetitions_by_count`" in text
