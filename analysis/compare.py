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
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from analysis import modes
from analysis.analyse import METRICS, analyse
from analysis.load import ResultsError, load_campaign

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
    analyses = []
    for p in paths:
        analyses.append(analyse(load_campaign(p), n_boot=n_boot, alpha=alpha, margin=margin))
    names = [a.campaign.name for a in analyses]
    if len(set(names)) != 1:
        listing = ", ".join(f"{p} ({n})" for p, n in zip(paths, names, strict=True))
        raise ResultsError(f"campaigns of different scenarios cannot be compared: {listing}")
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
                    why.append("; ".join(verdict.testbed_reasons))
            cells.append(Cell(group, label, metric, outs, effs, why))
    return labels, cells


def summary_counts(cells: list[Cell]) -> dict[str, int]:
    out: dict[str, int] = {}
    for c in cells:
        out[c.agreement] = out.get(c.agreement, 0) + 1
    return out
