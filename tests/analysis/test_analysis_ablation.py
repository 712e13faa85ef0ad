"""Ablations: which factor, switched alone, changes multicast's penalty.

Pure logic first (what switching does to the penalty, from the two verdicts and the
interaction test), then the matrix's one-at-a-time design (baseline plus each factor
alone), then a synthetic two-implementation campaign with known answers by construction,
3 runs per mode, the implementation being the factor switched:

- 3×3: native unicast-better, fastdds multicast-better  → reverses
- 10×10: both unicast-better by the same amount         → no change shown
- 25×25: fastdds's runs host-bound                       → testbed-bound, not evidence
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

import topologies
from analysis import ablation, modes
from analysis.analyse import Analysis, analyse
from analysis.load import load_campaign
from analysis.report import write_report
from analysis.synthetic import write_campaign
from experiments import matrix
from experiments import scenario as scenario_mod
from experiments.scenario import ScenarioError


def _diff(change: float, p_adj: float) -> modes.EffectDifference:
    return modes.EffectDifference((change, change - 5, change + 5), 8.0, p_adj, "3+3 vs 3+3",
                                  p_adj=p_adj, family=4)


@pytest.mark.parametrize(("off", "on", "diff", "lower", "effect"), [
    ("unicast", "multicast", None, True, ablation.REVERSES),
    ("unicast", "equal", None, True, ablation.REMOVES),
    ("unicast", "unicast", _diff(-30, 0.01), True, ablation.REDUCES),  # latency ratio falls
    ("unicast", "unicast", _diff(-30, 0.01), False, ablation.WORSENS),  # throughput falls
    ("unicast", "unicast", _diff(+40, 0.01), False, ablation.REDUCES),
    ("unicast", "unicast", _diff(-30, 0.20), True, ablation.NO_CHANGE),
    ("unicast", "undecided", _diff(-30, 0.20), True, ablation.CANNOT_TELL),
    ("unicast", "undecided", None, True, ablation.CANNOT_TELL),
    ("equal", "unicast", None, True, ablation.CREATES),
    ("multicast", "multicast", None, True, ablation.NO_PENALTY),
    ("undecided", "equal", None, True, ablation.NO_PENALTY_SHOWN),
    ("undecided", "unicast", None, True, ablation.CREATES),
    ("unicast", "testbed", None, True, ablation.TESTBED),
    ("testbed", "multicast", None, True, ablation.TESTBED),
    ("unicast", "not compared", None, True, ablation.NOT_COMPARED),
])
def test_classify(off: str, on: str, diff: modes.EffectDifference | None, lower: bool,
                  effect: str) -> None:
    assert ablation.classify(off, on, diff, lower) == effect


# ---- the one-at-a-time design ------------------------------------------------------------

SCENARIO = """\
[campaign]
name = "abl"
[topology]
name = "lan"
params = {{ hosts = 4 }}
[topology.variants]
snoop = {{ snooping = true, querier = true }}
flood = {{ snooping = false }}
[matrix]
participants = [3]
modes = ["unicast", "multicast"]
reliability = ["reliable", "best-effort"]
fanout = ["kernel", "joined-only"]
execution_time = 5
{design}
"""


def _groups(tmp_path: Path, design: str) -> list[str]:
    path = tmp_path / "abl.toml"
    path.write_text(SCENARIO.format(design=design))
    sc, specs = scenario_mod.validate(path, check_machine=False)
    runs = matrix.expand(sc, {v: list(topologies.host_names(s)) for v, s in specs.items()})
    assert all(len([r for r in runs if r["group"] == g]) == 2 for g in {r["group"] for r in runs})
    return list(dict.fromkeys(r["group"] for r in runs))


def test_one_at_a_time_runs_the_baseline_and_each_factor_alone(tmp_path: Path) -> None:
    assert len(_groups(tmp_path, "")) == 8  # factorial: 2 x 2 x 2
    assert _groups(tmp_path, 'design = "one-at-a-time"') == [
        "lan-rel-100B-snoop-fanout-kernel",  # the baseline: every axis' first value
        "lan-rel-100B-snoop-fanout-joined-only",
        "lan-be-100B-snoop-fanout-kernel",
        "lan-rel-100B-flood-fanout-kernel",
    ]


def test_unknown_design_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "abl.toml"
    path.write_text(SCENARIO.format(design='design = "fractional"'))
    with pytest.raises(ScenarioError) as e:
        scenario_mod.validate(path, check_machine=False)
    assert "matrix.design" in str(e.value) and "one-at-a-time" in str(e.value)


# ---- a synthetic campaign ----------------------------------------------------------------

@pytest.fixture(scope="module")
def two_agents(tmp_path_factory: pytest.TempPathFactory) -> Analysis:
    out = write_campaign(
        tmp_path_factory.mktemp("abl") / "c", counts=(3, 10, 25), seconds=10, pings_per_s=50,
        repetitions=3, run_sd=0.05, campaign="abl",
        agents={"native": ("unicast-better",) * 3,
                "fastdds": ("multicast-better", "unicast-better", "same")},
        host_bound=(25,), host_bound_agents=("fastdds",))
    return analyse(load_campaign(out), n_boot=99)


def _cell(cells: list[ablation.AblationCell], label: str, metric: str) -> ablation.AblationCell:
    return next(c for c in cells if c.participants == label and c.metric == metric)


def test_factors_and_baseline(two_agents: Analysis) -> None:
    assert ablation.factors(two_agents) == [("agent", "implementation", ["native", "fastdds"])]


def test_known_answers(two_agents: Analysis) -> None:
    cells = ablation.ablations(two_agents)
    assert len(cells) == 6  # 3 counts x 2 metrics
    for metric in ("latency", "throughput"):
        c3 = _cell(cells, "3×3", metric)
        assert c3.outcomes == ("unicast", "multicast") and c3.effect == ablation.REVERSES
        assert c3.difference is not None and c3.difference.p_adj < 0.05
        assert c3.difference.family == 4  # the testbed-bound cells are not tested
        assert _cell(cells, "10×10", metric).effect == ablation.NO_CHANGE
        assert _cell(cells, "10×10", metric).fidelity == "network-bound"
        c25 = _cell(cells, "25×25", metric)
        assert c25.effect == ablation.TESTBED and c25.difference is None
        assert c25.fidelity == "testbed-bound (switched)"
        assert c25.reasons and all(r.startswith("switched: ") for r in c25.reasons)
    # the latency ratio falls, the throughput ratio rises: both are the penalty reversed
    assert _cell(cells, "3×3", "latency").difference.change[0] < 0  # type: ignore[union-attr]
    assert _cell(cells, "3×3", "throughput").difference.change[0] > 0  # type: ignore[union-attr]


def test_paragraphs_never_read_testbed_cells_as_evidence(two_agents: Analysis) -> None:
    paras = ablation.paragraphs(ablation.ablations(two_agents))
    assert len(paras) == 3
    assert paras[0].startswith("At 3×3, latency: multicast's penalty")
    assert "reversed by implementation: native → fastdds" in paras[0]
    assert "the data support the DDS implementation (H-impl) (strongly" in paras[0]
    assert "not removed, reversed or reduced by any factor" in paras[1]
    assert "no change shown for implementation: native → fastdds" in paras[1]
    assert paras[2].startswith("At 25×25 the data cannot tell: every ablation cell is "
                               "testbed-bound")
    assert "support" not in paras[2]


def test_report_and_json_carry_the_ablation(two_agents: Analysis, tmp_path: Path) -> None:
    res = write_report(two_agents, tmp_path / "report")
    md = res.report.read_text()
    assert "## Ablations: which factor changes multicast's penalty" in md
    assert "implementation: native → fastdds" in md
    rows = json.loads(json.dumps(res.summary))["ablations"]
    assert {(r["participants"], r["metric"], r["effect"]) for r in rows} >= {
        ("3×3", "latency", "reverses"), ("25×25", "throughput", "testbed-bound")}
    r3 = next(r for r in rows if r["participants"] == "3×3" and r["metric"] == "latency")
    assert r3["verdicts"] == {"baseline": "unicast", "switched": "multicast"}
    assert r3["fidelity"] == "network-bound"
    assert "| fidelity |" in md and "testbed-bound (switched)" in md
    assert r3["effect_difference"]["p_holm"] < 0.05
    assert not math.isnan(r3["median_change_pct"]["baseline"])
    assert len(res.summary["ablation_paragraphs"]) == 3
    tex = (tmp_path / "report" / "tables" / "ablation_paragraphs.tex").read_text()
    assert tex.startswith("\\begin{itemize}") and tex.count("\\item") == 3
    assert "tab:ablation" in (tmp_path / "report" / "tables" / "ablation.tex").read_text()


def test_same_host_switch_pairs_within_its_implementation(tmp_path: Path) -> None:
    """Same-host pairs: "shm" runs on Fast DDS only (the native agent has no shared memory),
    so the H-shm cell pairs Fast DDS's "shm" runs with Fast DDS's "udp" runs, and the
    implementation cell native with Fast DDS, both on "udp". Known answers: Fast DDS over
    UDP loses with multicast as the native agent does (no change shown), with shared memory
    multicast wins (the penalty reversed, H-shm)."""
    out = write_campaign(
        tmp_path / "c", counts=(3,), seconds=10, pings_per_s=50, repetitions=4,
        run_sd=0.02, campaign="shm",
        agents={"native": ("unicast-better",), "fastdds": ("unicast-better",),
                "fastdds-shm": ("multicast-better",)},
        config_extra={"fastdds-shm": {"agent": "fastdds", "same_host": "shm"}})
    an = analyse(load_campaign(out), n_boot=99)
    # each factor's baseline is its most used level: here Fast DDS (two groups)
    assert ablation.factors(an) == [("same_host", "same-host transport", ["udp", "shm"]),
                                    ("agent", "implementation", ["fastdds", "native"])]
    cells = [c for c in ablation.ablations(an) if c.metric == "latency"]
    by = {c.factor: c for c in cells}
    assert set(by) == {"same-host transport", "implementation"} and len(cells) == 2
    shm = by["same-host transport"]
    assert shm.groups == ("lan-rel-100B-fastdds", "lan-rel-100B-fastdds-shm")
    assert shm.outcomes == ("unicast", "multicast") and shm.effect == ablation.REVERSES
    impl = by["implementation"]
    assert impl.groups == ("lan-rel-100B-fastdds", "lan-rel-100B-native")
    assert impl.effect == ablation.NO_CHANGE
    (para,) = ablation.paragraphs(cells)
    assert "reversed by same-host transport: udp → shm" in para
    assert "same-host shared memory in unicast only (H-shm)" in para


def test_one_level_campaign_has_no_ablation(tmp_path: Path) -> None:
    out = write_campaign(tmp_path / "c", counts=(3,), seconds=5, pings_per_s=20,
                         repetitions=2)
    a = analyse(load_campaign(out), n_boot=49)
    assert ablation.ablations(a) == [] and ablation.factors(a) == []
    assert "## Ablations" not in write_report(a, tmp_path / "r").report.read_text()


@pytest.mark.parametrize(("changed", "words"), [
    ({"hosts"}, "participants per host (H-fanout)"),
    ({"snooping", "querier"}, "the network's multicast handling (H-route: querier, snooping)"),
    ({"spt"}, "the network's multicast handling (H-route: spt)"),
    ({"hosts", "snooping"}, "the topology (hosts, snooping)"),
    ({"cpu"}, "the hosts' capacity (the scale: cpu)"),
    ({"cpu", "snooping"}, "the topology (cpu, snooping)"),
])
def test_topology_variant_mechanism(changed: set[str], words: str) -> None:
    assert ablation._topology_mechanism(changed) == words


def _abl_cell(factor: str, outcomes: tuple[str, str], metric: str = "latency",
              diff: modes.EffectDifference | None = None) -> ablation.AblationCell:
    return ablation.AblationCell(factor, "fanout", "kernel", factor, "50×50", metric,
                                 ("g0", "g1"), outcomes, (40.0, 1.0), (None, None), diff,
                                 ["x: host-bound"] if "testbed" in outcomes else [])


def test_paragraph_keeps_the_baseline_penalty_when_every_switch_is_testbed_bound() -> None:
    para = ablation._paragraph("50×50", [_abl_cell("a", ("unicast", "testbed")),
                                         _abl_cell("b", ("unicast", "equal"))])
    assert "latency: multicast's penalty (+40% at the baseline) is removed by b: kernel → b" \
        in para
    assert "testbed-bound, not evidence: a: kernel → a" in para
    para = ablation._paragraph("50×50", [_abl_cell("a", ("testbed", "equal")),
                                         _abl_cell("b", ("testbed", "unicast"))])
    assert "every ablation cell is testbed-bound" in para
    assert "to measure the network instead: fewer participants per core" in para
    scaled = [_abl_cell("a", ("testbed", "equal")), _abl_cell("b", ("testbed", "unicast"))]
    for c in scaled:  # the emulator failed a CPU-limited host
        c.reasons = ["x: a host that always had work got less than its allocation"]
    para = ablation._paragraph("50×50", scaled)
    assert "the emulator did not keep its promise" in para
    assert "to make the emulation faithful: smaller or fewer hosts" in para
    para = ablation._paragraph("50×50", [_abl_cell("a", ("equal", "unicast")),
                                         _abl_cell("b", ("equal", "equal"))])
    assert "no multicast penalty at the baseline (practically equal, multicast +40%)" in para
    assert "switching a: kernel → a makes unicast better" in para
    para = ablation._paragraph("50×50", [_abl_cell("a", ("undecided", "undecided"))])
    assert "the baseline does not decide between the modes (multicast +40%" in para


def test_cell_fidelity_names_saturated_hosts_on_each_side() -> None:
    """On fixed-capacity hosts the cells are faithful with saturated hosts, not
    'network-bound'; a host-bound side still makes the cell testbed-bound."""
    sat = "faithful, hosts saturated (4 of 4 runs)"
    cell = _abl_cell("a", ("unicast", "equal"))
    cell.sides = (sat, sat)
    assert cell.fidelity == sat
    cell.sides = (sat, "network-bound")
    assert cell.fidelity == f"baseline {sat}; switched network-bound"
    bound = _abl_cell("a", ("unicast", "testbed"))
    bound.sides = (sat, "testbed-bound (1 of 4 runs host-bound)")
    assert bound.fidelity == "testbed-bound (switched)"
