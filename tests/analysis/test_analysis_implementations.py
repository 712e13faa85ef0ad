"""Several DDS implementations in one campaign ([matrix] agents): verdicts per implementation
side by side, and whether they agree.

Pure logic on synthetic cells and verdicts first (agreement sentences, the interaction
test against scipy's Welch test), then one synthetic campaign written as the runner writes
a two-agent campaign (groups ``lan-rel-100B-native`` / ``lan-rel-100B-fastdds``) with known
answers by construction, 3 runs per mode:

- 3×3: both implementations multicast-better           → agree
- 10×10: native multicast-better, fastdds unicast-better → contradict
- 25×25: fastdds's runs host-bound, native's not        → mixed fidelity
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as sps

from analysis import modes
from analysis.analyse import Analysis, analyse
from analysis.compare import (
    AGREE,
    CONTRADICT,
    MIXED,
    PARTLY,
    TESTBED,
    UNDECIDED,
    ImplementationCell,
    implementations,
)
from analysis.load import load_campaign
from analysis.synthetic import write_campaign


def _verdict(u: list[float], m: list[float], outcome: str = modes.UNDECIDED
             ) -> modes.ModeVerdict:
    return modes.ModeVerdict("latency", outcome, "median",
                             {"unicast": len(u), "multicast": len(m)},
                             {"unicast": u, "multicast": m}, (math.nan,) * 3)


@pytest.mark.parametrize(("outcomes", "agreement", "words"), [
    (["multicast", "multicast"], AGREE, ["agree on the unicast-vs-multicast verdict",
                                         "native: multicast better", "fastdds: multicast better"]),
    (["multicast", "unicast"], CONTRADICT, ["contradict", "depends on the DDS implementation"]),
    (["equal", "unicast"], CONTRADICT, ["native: practically equal", "fastdds: unicast better"]),
    (["multicast", "undecided"], PARTLY, ["neither agree nor contradict"]),
    (["undecided", "undecided"], UNDECIDED, ["no implementation decides"]),
    (["testbed", "testbed"], TESTBED, ["testbed-bound for every implementation"]),
    (["testbed", "not compared"], TESTBED, ["testbed-bound for native and not compared for",
                                            "fastdds: not compared"]),
    (["multicast", "testbed"], MIXED, ["testbed-bound for fastdds", "cannot be compared"]),
])
def test_agreement_sentence(outcomes: list[str], agreement: str, words: list[str]) -> None:
    cell = ImplementationCell("lan-rel-100B", "10×10", "latency", outcomes, [math.nan] * 2,
                              agents=["native", "fastdds"], differences=[None])
    assert cell.agreement == agreement
    text = cell.sentence()
    assert text.startswith("At 10×10 (lan-rel-100B), latency: ")
    for w in words:
        assert w in text, text
    d = cell.as_dict()
    assert d["verdicts"] == {"native": outcomes[0], "fastdds": outcomes[1]}
    assert d["agreement"] == agreement and d["sentence"] == text
    assert d["effect_differences"] == {"fastdds vs native": None}


@pytest.mark.parametrize(("reasons", "words", "not_words"), [
    (["pub0 host 18% socket drops"], "the hosts' CPUs, not the network, limited a run",
     "emulator"),
    (["h1 got 13.1% less than its allocation while it had work"],
     "the emulator did not keep its promise", "the hosts' CPUs"),
])
def test_testbed_bound_everywhere_names_what_bound_it(reasons: list[str], words: str,
                                                      not_words: str) -> None:
    """Testbed-bound for every implementation: unlimited hosts' own load, or the emulator
    failing CPU-limited hosts, in the words that fit (as the report says it)."""
    cell = ImplementationCell("lan-rel-100B", "75×75", "latency", ["testbed", "testbed"],
                              [math.nan] * 2, reasons * 2, agents=["native", "fastdds"],
                              differences=[None])
    text = cell.sentence()
    assert words in text and not_words not in text, text
    assert text.endswith("so there is no verdict to compare."), text


def test_effect_difference_equals_welch_when_the_reference_has_no_effect() -> None:
    """Reference runs identical in both modes (no effect, no variance): the interaction
    test reduces to Welch's t-test of the other implementation's modes on the log scale."""
    ref = _verdict([100.0] * 3, [100.0] * 3)
    u, m = [100.0, 120.0, 95.0], [60.0, 75.0, 58.0, 66.0]
    d = modes.effect_difference(ref, _verdict(u, m))
    assert d is not None
    welch = sps.ttest_ind(np.log(m), np.log(u), equal_var=False)
    assert d.p == pytest.approx(welch.pvalue, rel=1e-9)
    ratio = math.exp(np.mean(np.log(m)) - np.mean(np.log(u)))
    assert d.change[0] == pytest.approx(100 * (ratio - 1))
    assert d.change[1] < d.change[0] < d.change[2] < 0
    assert d.runs == "3+3 vs 3+4"


def test_effect_difference_same_effect_and_opposite_effects() -> None:
    rng = np.random.default_rng(5)

    def runs(level: float) -> list[float]:
        return list(level * np.exp(rng.normal(0, 0.05, 4)))

    a = _verdict(runs(100), runs(50))   # multicast halves the latency
    b = _verdict(runs(300), runs(150))  # the same effect at another level
    c = _verdict(runs(100), runs(200))  # multicast doubles it
    same, opposite = modes.effect_difference(a, b), modes.effect_difference(a, c)
    assert same is not None and opposite is not None
    assert same.change[1] < 0 < same.change[2] and same.p > 0.05
    assert opposite.p < 0.001 and opposite.change[0] == pytest.approx(300, rel=0.2)
    assert modes.effect_difference(a, _verdict([100.0], [50.0])) is None  # one run per mode
    assert modes.effect_difference(a, _verdict([100.0, 0.0], [50.0, 60.0])) is None


@pytest.fixture(scope="module")
def two_agents(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_campaign(
        tmp_path_factory.mktemp("impl") / "c", counts=(3, 10, 25), seconds=20,
        pings_per_s=50, repetitions=3, seed=13, campaign="impl", host_bound=(25,),
        host_bound_agents=("fastdds",),
        agents={"native": ("multicast-better",) * 3,
                "fastdds": ("multicast-better", "unicast-better", "multicast-better")})


@pytest.fixture(scope="module")
def analysis(two_agents: Path) -> Analysis:
    return analyse(load_campaign(two_agents), n_boot=99)


def test_pairs_are_grouped_by_agent(analysis: Analysis) -> None:
    assert analysis.agents == ["native", "fastdds"]
    assert {(p.group, p.agent) for p in analysis.pairs} == {
        ("lan-rel-100B-native", "native"), ("lan-rel-100B-fastdds", "fastdds")}
    assert {analysis.base_group(p) for p in analysis.pairs} == {"lan-rel-100B"}
    for p in analysis.pairs:
        runs = analysis.campaign.runs.set_index("run_id")
        ids = [r for ids in p.runs.values() for r in ids]
        assert len(ids) == 6 and set(runs.loc[ids, "agent"]) == {p.agent}


def test_known_agreements_across_implementations(analysis: Analysis) -> None:
    cells = {(c.participants, c.metric): c for c in implementations(analysis)}
    assert len(cells) == 6
    for metric in ("latency", "throughput"):
        assert cells[("3×3", metric)].outcomes == ["multicast", "multicast"]
        assert cells[("3×3", metric)].agreement == AGREE
        assert cells[("10×10", metric)].outcomes == ["multicast", "unicast"]
        assert cells[("10×10", metric)].agreement == CONTRADICT
        assert cells[("25×25", metric)].outcomes == ["multicast", "testbed"]
        assert cells[("25×25", metric)].agreement == MIXED
    # the interaction test: the same effect at 3x3, opposite effects at 10x10, none where
    # an implementation is testbed-bound
    same, opposite = cells[("3×3", "latency")], cells[("10×10", "latency")]
    assert same.differences[0] is not None and opposite.differences[0] is not None
    assert same.differences[0].p_adj > 0.05
    assert opposite.differences[0].p_adj < 0.05 and opposite.differences[0].change[0] > 0
    assert "multicast's effect differs between the implementations" in opposite.sentence()
    assert cells[("25×25", "latency")].differences == [None]
    family = {d.family for c in cells.values() for d in c.differences if d is not None}
    assert family == {4}


def test_one_implementation_has_no_side_by_side(tmp_path: Path) -> None:
    from analysis.tables import all_tables

    one = write_campaign(tmp_path / "one", counts=(3,), seconds=10, pings_per_s=50,
                         repetitions=2)
    a = analyse(load_campaign(one), n_boot=99)
    assert a.agents == ["synthetic"] and implementations(a) == []
    assert "implementations" not in all_tables(a)


def test_report_and_json(two_agents: Path, tmp_path: Path,
                         capsys: pytest.CaptureFixture[str]) -> None:
    from mcastlab.cli import main

    out = tmp_path / "report"
    assert main(["report", str(two_agents), "--out", str(out), "--bootstrap", "99",
                 "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["agents"] == ["native", "fastdds"]
    cell = next(c for c in data["implementations"]
                if c["participants"] == "10×10" and c["metric"] == "throughput")
    assert cell["agreement"] == CONTRADICT
    assert cell["verdicts"] == {"native": "multicast", "fastdds": "unicast"}
    assert {v["agent"] for v in data["verdicts"]} == {"native", "fastdds"}
    bound = [v for v in data["verdicts"] if v["participants"] == "25×25"]
    assert {(v["agent"], v["verdict"]) for v in bound} == {
        ("native", "multicast better"), ("fastdds", "testbed-bound")}
    md = (out / "report.md").read_text()
    assert "## Implementations side by side: native, fastdds" in md
    assert "the implementations contradict each other" in md
    # the fidelity summary names the implementation whose runs were host-bound
    assert "never as a verdict: 25×25 fastdds." in md
    side = (out / "tables" / "implementations.csv").read_text().splitlines()
    assert side[0].startswith("group,participants,native fidelity,native runs per mode,"
                              "fastdds fidelity,fastdds runs per mode,native latency,")
    row25 = next(r for r in side if ",25×25," in r)
    assert "testbed-bound (6 of 6 runs host-bound)" in row25 and "mixed fidelity" in row25
    assert (out / "tables" / "implementation_agreement.csv").exists()
    tex = (out / "tables" / "implementation_sentences.tex").read_text()
    assert tex.startswith("\\begin{itemize}") and tex.count("\\item ") == 6
