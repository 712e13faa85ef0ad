"""Reproducibility as a result: the verdicts of several independent campaigns of one scenario.

``mcastlab compare RESULTS...`` analyses each campaign exactly as ``mcastlab report`` does
and, per matrix point and metric, lists every campaign's verdict and how they relate:

- ``agree``: every campaign reached the same network-bound verdict (a mode better, or
  practically equal);
- ``all undecided``: no campaign could decide (one run per mode, or too few runs);
- ``one says no difference``: a decided verdict beside undecided ones;
- ``contradict``: one campaign says unicast is better, another multicast, or one says a
  mode is better and another that the two are practically equal;
- ``testbed-bound``: the cell is testbed-bound in every campaign (no verdict anywhere);
- ``mixed fidelity``: testbed-bound in some campaigns only; the others are compared among
  themselves in ``network_agreement``.

Beside it the between-campaign spread of the effect (multicast's median change against
unicast, in %): min, max and standard deviation over campaigns.

Example::

    >>> agreement(["multicast", "multicast", "undecided"])
    'one says no difference'
    >>> agreement(["unicast", "multicast"])
    'contradict'
    >>> agreement(["equal", "unicast"])
    'contradict'

The verdicts are those of :mod:`analysis.modes` (runs as the unit, Holm over each
campaign's table), not the within-run distribution tests.

The same rules relate the DDS implementations of one campaign (``[matrix] agents``):
:func:`implementations` gives one :class:`ImplementationCell` per matrix point and metric
with each implementation's verdict, their agreement, an interaction test of multicast's
effect between them (:func:`analysis.modes.effect_difference`) and a generated sentence.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from analysis import modes, testbed
from analysis.analyse import METRICS, analyse
from analysis.load import (
    Campaign,
    ResultsError,
    load_campaign,
    require_distinct,
    require_distinct_folders,
    require_one_scenario,
)

AGREE = "agree"
UNDECIDED = "all undecided"
PARTLY = "one says no difference"
CONTRADICT = "contradict"
TESTBED = "testbed-bound"
MIXED = "mixed fidelity"


def outcome(verdict: modes.ModeVerdict | None) -> str:
    """A verdict as one word: unicast | multicast | equal | undecided | testbed |
    not compared."""
    if verdict is None:
        return "not compared"
    if verdict.outcome == modes.TESTBED_BOUND:
        return "testbed"
    if verdict.winner:
        return verdict.winner
    if verdict.outcome == modes.EQUAL:
        return "equal"
    return "undecided"


def agreement(outcomes: list[str]) -> str:
    """How network-bound outcomes of one cell relate (see the module docstring)."""
    real = [o for o in outcomes if o not in ("not compared",)]
    if not real:
        return "not compared"
    if all(o == "testbed" for o in real):
        return TESTBED
    net = [o for o in real if o != "testbed"]
    decided = {o for o in net if o != "undecided"}
    if len(decided) > 1:
        return CONTRADICT
    if not decided:
        return UNDECIDED
    if len(set(net)) == 1:
        return AGREE
    return PARTLY


@dataclass
class Cell:
    group: str
    participants: str
    metric: str
    outcomes: list[str]
    effects: list[float]  # multicast's median change vs unicast, % (NaN when not compared)
    reasons: list[str] = field(default_factory=list)  # why testbed-bound, per campaign

    @property
    def agreement(self) -> str:
        a = agreement(self.outcomes)
        if a not in (TESTBED, "not compared") and "testbed" in self.outcomes:
            return MIXED
        return a

    @property
    def network_agreement(self) -> str:
        return agreement([o for o in self.outcomes if o != "testbed"])

    def spread(self) -> dict[str, float]:
        vals = [e for e in self.effects if math.isfinite(e)]
        if not vals:
            return {"min": math.nan, "max": math.nan, "sd": math.nan}
        sd = statistics.stdev(vals) if len(vals) > 1 else math.nan
        return {"min": min(vals), "max": max(vals), "sd": sd}

    def as_dict(self, names: list[str]) -> dict[str, Any]:
        return {
            "group": self.group, "participants": self.participants, "metric": self.metric,
            "verdicts": dict(zip(names, self.outcomes, strict=True)),
            "median_change_pct": dict(zip(names, [_num(e) for e in self.effects], strict=True)),
            "agreement": self.agreement, "network_agreement": self.network_agreement,
            "spread_pct": {k: _num(v) for k, v in self.spread().items()},
            "testbed_reasons": self.reasons,
        }


def _num(v: float) -> float | None:
    return round(v, 3) if math.isfinite(v) else None


def compare(paths: list[str | Path], *, n_boot: int = 499, alpha: float = 0.05,
            margin: float = modes.EQUIVALENCE_MARGIN) -> tuple[list[str], list[Cell]]:
    """(campaign labels, one Cell per (group, count, metric)) over campaigns of one scenario."""
    if len(paths) < 2:
        raise ResultsError("compare needs at least two campaign directories")
    require_distinct_folders([Path(p) for p in paths], "compared")  # before loading them
    return compare_campaigns([load_campaign(p) for p in paths], n_boot=n_boot, alpha=alpha,
                             margin=margin)


def compare_campaigns(campaigns: list[Campaign], *, n_boot: int = 499, alpha: float = 0.05,
                      margin: float = modes.EQUIVALENCE_MARGIN
                      ) -> tuple[list[str], list[Cell]]:
    """:func:`compare` of campaigns already loaded: distinct ones (no directory twice, no
    run in two of them: a campaign agrees with its copy)."""
    require_distinct(campaigns, "compared")
    require_one_scenario(campaigns, "compared")  # before the analyses, which take time
    paths = [c.path for c in campaigns]
    analyses = [analyse(c, n_boot=n_boot, alpha=alpha, margin=margin) for c in campaigns]
    labels = [str(p) for p in paths]
    keys: list[tuple[str, str]] = []
    for a in analyses:
        for pair in a.pairs:
            if (pair.group, pair.label) not in keys:
                keys.append((pair.group, pair.label))
    cells = []
    for group, label in keys:
        for metric in METRICS:
            outs, effs, why = [], [], []
            for a in analyses:
                pair = next((p for p in a.pairs if (p.group, p.label) == (group, label)), None)
                verdict = pair.verdicts.get(metric) if pair else None
                outs.append(outcome(verdict))
                effs.append(verdict.change[0] if verdict else math.nan)
                if verdict is not None and verdict.outcome == modes.TESTBED_BOUND:
                    why.append(testbed.join(verdict.testbed_reasons))
            cells.append(Cell(group, label, metric, outs, effs, why))
    return labels, cells


def summary_counts(cells: list[Cell]) -> dict[str, int]:
    out: dict[str, int] = {}
    for c in cells:
        out[c.agreement] = out.get(c.agreement, 0) + 1
    return out


# ---- implementations: one campaign, several DDS implementations ([matrix] agents) --------

@dataclass
class ImplementationCell(Cell):
    """One matrix point and metric of a campaign run with several implementations: each
    implementation's verdict about the modes (``outcomes``, in ``agents`` order), how they
    relate (:func:`agreement`) and whether the modes' effect itself differs between the
    first implementation and each other one (:func:`analysis.modes.effect_difference`)."""

    agents: list[str] = field(default_factory=list)
    # per implementation after the first: the interaction test against the first, or None
    differences: list[modes.EffectDifference | None] = field(default_factory=list)

    def sentence(self) -> str:
        """Whether the unicast-vs-multicast verdicts agree across implementations."""
        named = [f"{a}: {_outcome_words(o)}" for a, o in zip(self.agents, self.outcomes,
                                                             strict=True)]
        listing = "; ".join(named)
        where = f"At {self.participants} ({self.group}), {self.metric}"
        a = self.agreement
        bound = [ag for ag, o in zip(self.agents, self.outcomes, strict=True) if o == "testbed"]
        if a == AGREE:
            text = (f"{where}: the implementations agree on the unicast-vs-multicast verdict "
                    f"({listing})")
        elif a == CONTRADICT:
            text = (f"{where}: the implementations contradict each other ({listing}): which "
                    "mode is better depends on the DDS implementation")
        elif a == PARTLY:
            text = (f"{where}: the verdicts neither agree nor contradict ({listing}): an "
                    "undecided implementation neither confirms nor refutes the decided one")
        elif a == UNDECIDED:
            text = (f"{where}: no implementation decides between the modes ({listing}), so "
                    "agreement cannot be judged")
        elif a == TESTBED and "not compared" in self.outcomes:
            text = (f"{where}: testbed-bound for {', '.join(bound)} and not compared for the "
                    f"others ({listing}), so there is no verdict to compare")
        elif a == TESTBED:
            text = (f"{where}: testbed-bound for every implementation ({listing}): "
                    f"{testbed.testbed_cause(self.reasons)}, so there is no verdict to compare")
        elif a == MIXED:
            text = (f"{where}: testbed-bound for {', '.join(bound)} ({listing}), so the "
                    "implementations' verdicts cannot be compared here"
                    + (f"; among the network-bound ones: {self.network_agreement}"
                       if len(self.agents) - len(bound) > 1 else ""))
        else:
            text = f"{where}: not compared ({listing})"
        clauses = [_difference_phrase(self.agents[0], ag, d)
                   for ag, d in zip(self.agents[1:], self.differences, strict=True)
                   if d is not None]
        if clauses:
            text += "; " + "; ".join(clauses)
        return text + "."

    def as_dict(self, names: list[str] | None = None) -> dict[str, Any]:
        out = super().as_dict(names or self.agents)
        out["sentence"] = self.sentence()
        out["effect_differences"] = {
            f"{ag} vs {self.agents[0]}": None if d is None else {
                "change_pct": [_num(x) for x in d.change], "df": _num(d.df),
                "p": _num(d.p), "p_holm": _num(d.p_adj), "family": d.family, "runs": d.runs}
            for ag, d in zip(self.agents[1:], self.differences, strict=True)}
        return out


def _outcome_words(o: str) -> str:
    return {"unicast": "unicast better", "multicast": "multicast better",
            "equal": "practically equal", "testbed": "testbed-bound"}.get(o, o)


def _difference_phrase(ref: str, other: str, d: modes.EffectDifference) -> str:
    def pct(x: float) -> str:
        return f"{round(x) + 0:+d}%"  # + 0: no "-0%"

    est, lo, hi = d.change
    shown = f"{pct(est)} [{pct(lo)}, {pct(hi)}]"
    p = "p<0.001" if d.p_adj < 0.001 else f"p={d.p_adj:.3f}"
    test = (f"Welch–Satterthwaite t on the log run medians, {d.runs} runs, "
            f"Holm-adjusted {p} in a family of {d.family}")
    if d.p_adj < d.alpha:
        return (f"multicast's effect differs between the implementations: {other}'s "
                f"multicast/unicast ratio differs from {ref}'s by {shown} ({test})")
    return (f"no difference of multicast's effect between {other} and {ref} is shown "
            f"({other}'s multicast/unicast ratio against {ref}'s {shown}; {test})")


def implementations(analysis: Any, alpha: float | None = None) -> list[ImplementationCell]:
    """One cell per (matrix point, metric) of a campaign with several implementations
    (``[matrix] agents``), pairing each agent's pair of runs by their group without the
    agent (:meth:`Analysis.base_group`); empty with one implementation.

    The verdicts are each implementation's own (runs as the unit, Holm over the whole
    campaign); the effect differences are Holm-adjusted over every tested cell here.
    """
    agents = analysis.agents
    if len(agents) < 2:
        return []
    alpha = analysis.alpha if alpha is None else alpha
    keys: list[tuple[str, str]] = []
    by: dict[tuple[str, str, str], Any] = {}
    for pair in analysis.pairs:
        key = (analysis.base_group(pair), pair.label)
        if key not in keys:
            keys.append(key)
        by[(*key, pair.agent)] = pair
    cells: list[ImplementationCell] = []
    for group, label in keys:
        for metric in METRICS:
            verdicts = [by[(group, label, a)].verdicts.get(metric)
                        if (group, label, a) in by else None for a in agents]
            outs = [outcome(v) for v in verdicts]
            if all(o == "not compared" for o in outs):
                continue  # a metric no implementation measured here (the RTT test's throughput)
            effs = [v.change[0] if v else math.nan for v in verdicts]
            why = [testbed.join(v.testbed_reasons) for v in verdicts
                   if v is not None and v.outcome == modes.TESTBED_BOUND]
            diffs = []
            for v in verdicts[1:]:
                ref = verdicts[0]
                ok = (ref is not None and v is not None
                      and modes.TESTBED_BOUND not in (ref.outcome, v.outcome))
                diffs.append(modes.effect_difference(ref, v, alpha) if ok else None)
            cells.append(ImplementationCell(group, label, metric, outs, effs, why,
                                            agents=list(agents), differences=diffs))
    tested = [d for c in cells for d in c.differences if d is not None]
    for d, adj in zip(tested, modes.holm([d.p for d in tested]), strict=True):
        d.p_adj, d.family = adj, len(tested)
    return cells
