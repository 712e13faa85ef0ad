"""Ablations: which factor, switched alone, changes multicast's penalty.

A campaign whose matrix varies named factors — topology variants (e.g. IGMP snooping off),
placement variants (participants per host), reliability, the DDS implementation, the host
socket fan-out — answers "which mechanism makes multicast lose" by comparing, at each
participant count, the unicast-vs-multicast verdict with one factor at its baseline
("off") and switched ("on"), everything else equal. ``[matrix] design = "one-at-a-time"``
runs exactly those comparisons (experiments/matrix.py).

The baseline level of a factor is the one most matrix points use (in a one-at-a-time
design, every point but the factor's own), ties broken by the order of the runs.

Per cell (factor level, count, metric): both verdicts (runs as the unit, Holm over the
campaign, :mod:`analysis.modes`), multicast's change against unicast in both, and an
interaction test of whether switching the factor changes multicast's effect
(:func:`analysis.modes.effect_difference`, Holm over the table). Then what switching does
to multicast's penalty (the baseline verdict "unicast better"):

- ``reverses``: multicast better with the factor switched;
- ``removes``: the modes practically equal with it switched;
- ``reduces`` / ``worsens``: the interaction test shows the penalty shrink / grow;
- ``no change shown``: unicast still better and no difference of effect shown;
- ``cannot tell``: undecided with the factor switched and no difference of effect shown;
- ``creates a penalty``: no penalty at the baseline, unicast better with it switched;
- ``no penalty`` / ``no penalty shown``: multicast better or practically equal / undecided
  at the baseline, and unicast not better with the factor switched;
- ``testbed-bound``: some run of either side was host-bound: not evidence, never read;
- ``not compared``: a side has no verdict.

Example::

    >>> classify("unicast", "equal", None)
    'removes'
    >>> classify("unicast", "testbed", None)
    'testbed-bound'
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from analysis import modes
from analysis.analyse import METRICS, Analysis, Pair
from analysis.compare import _num, outcome
from analysis.testbed import advice, join, testbed_cause
from analysis.verdicts import fidelity_cell

# (column of the runs table, the factor's name, the mechanism it tests; for topology
# variants it depends on the parameters they change: _topology_mechanism)
FACTORS: tuple[tuple[str, str, str], ...] = (
    ("topology_variant", "topology", "the topology"),
    ("placement_variant", "placement", "participants per host (H-fanout)"),
    ("fanout", "fan-out", "host socket fan-out (H-fanout)"),
    ("same_host", "same-host transport", "same-host shared memory in unicast only (H-shm)"),
    ("heartbeat_timing", "heartbeat timing",
     "how often writers ask for acknowledgements (Perftest's 10 ms or the scaled 1-3 s)"),
    ("multicast_resend", "multicast resend",
     "when a repair goes to the group: from the second NACK (Connext) or the first"),
    ("receive_buffer", "receive buffer",
     "the UDP receive buffer: Perftest's 2 MiB or a stock kernel's 212,992 B"),
    ("reliable", "reliability", "reliability and repair (H-repair)"),
    ("agent", "implementation", "the DDS implementation (H-impl)"),
)
# what else a matrix point is; pairs are matched on it
_POINT = ("topology", "data_len", "latency_count", "pub_rate", "test")

REVERSES, REMOVES, REDUCES, WORSENS = "reverses", "removes", "reduces", "worsens"
NO_CHANGE, CANNOT_TELL, CREATES, NO_PENALTY = ("no change shown", "cannot tell",
                                                "creates a penalty", "no penalty")
NO_PENALTY_SHOWN = "no penalty shown"  # the baseline is undecided
TESTBED, NOT_COMPARED = "testbed-bound", "not compared"
SUPPORT = (REVERSES, REMOVES, REDUCES)  # the factor explains (part of) the penalty
_PARTICIPLE = {REVERSES: "reversed", REMOVES: "removed", REDUCES: "reduced"}


def classify(off: str, on: str, diff: modes.EffectDifference | None,
             lower_is_better: bool = True) -> str:
    """What switching a factor does to multicast's penalty, from the two outcomes
    (:func:`analysis.compare.outcome`) and the Holm-adjusted interaction test."""
    if "testbed" in (off, on):
        return TESTBED
    if "not compared" in (off, on):
        return NOT_COMPARED
    shown = diff is not None and diff.p_adj < diff.alpha
    if off != "unicast":
        if on == "unicast":
            return CREATES
        return NO_PENALTY_SHOWN if off == "undecided" else NO_PENALTY
    if on == "multicast":
        return REVERSES
    if on == "equal":
        return REMOVES
    if shown and diff is not None:
        # the ratio (multicast/unicast) falls with the factor on: for latency the penalty
        # shrinks, for throughput it grows
        falls = diff.change[0] < 0
        return REDUCES if falls == lower_is_better else WORSENS
    return NO_CHANGE if on == "unicast" else CANNOT_TELL


@dataclass
class AblationCell:
    factor: str  # FACTORS name
    column: str
    off: str  # the baseline level, shown
    on: str  # the switched level, shown
    participants: str
    metric: str
    groups: tuple[str, str]  # (baseline's group, switched group)
    outcomes: tuple[str, str]
    changes: tuple[float, float]  # multicast's median change vs unicast, % (off, on)
    verdicts: tuple[modes.ModeVerdict | None, modes.ModeVerdict | None]
    difference: modes.EffectDifference | None = None
    reasons: list[str] = field(default_factory=list)  # why testbed-bound
    changed_params: set[str] = field(default_factory=set)  # topology variants: what differs
    # each side's fidelity as the verdict table words it (verdicts.fidelity_cell)
    sides: tuple[str, str] = ("network-bound", "network-bound")

    @property
    def effect(self) -> str:
        return classify(*self.outcomes, self.difference, METRICS[self.metric][2])

    @property
    def fidelity(self) -> str:
        """Which side is testbed-bound (a host-bound run there); otherwise both sides'
        fidelity: network-bound, or faithful with saturated hosts (fixed-capacity hosts)."""
        bound = [side for side, o in zip(("baseline", "switched"), self.outcomes, strict=True)
                 if o == "testbed"]
        if bound:
            return f"testbed-bound ({' and '.join(bound)})"
        off, on = self.sides
        return off if off == on else f"baseline {off}; switched {on}"

    @property
    def switch(self) -> str:
        return f"{self.factor}: {self.off} → {self.on}"

    def as_dict(self) -> dict[str, Any]:
        d = self.difference
        return {
            "factor": self.factor, "baseline": self.off, "switched": self.on,
            "participants": self.participants, "metric": self.metric,
            "groups": list(self.groups),
            "verdicts": {"baseline": self.outcomes[0], "switched": self.outcomes[1]},
            "median_change_pct": {"baseline": _num(self.changes[0]),
                                  "switched": _num(self.changes[1])},
            "effect": self.effect,
            "fidelity": self.fidelity,
            "effect_difference": None if d is None else {
                "change_pct": [_num(x) for x in d.change], "df": _num(d.df), "p": _num(d.p),
                "p_holm": _num(d.p_adj), "family": d.family, "runs": d.runs},
            "testbed_reasons": self.reasons,
        }


def _show(column: str, value: Any) -> str:
    if column == "reliable":
        return "reliable" if bool(value) else "best-effort"
    return str(value) if value != "" else "(default)"


def _pair_attrs(runs: pd.DataFrame, pair: Pair) -> dict[str, Any]:
    row = _pair_row(runs, pair)
    cols = [c for c, _, _ in FACTORS] + list(_POINT)
    return {c: (row[c] if c in row.index else "") for c in cols}


def _changed_params(runs: pd.DataFrame, off: Pair, on: Pair) -> set[str]:
    """The topology parameters whose values differ between two pairs' runs."""
    if "topology_params" not in runs.columns:
        return set()
    a, b = (json.loads(_pair_row(runs, p)["topology_params"]) for p in (off, on))
    return {k for k in a.keys() | b.keys() if a.get(k) != b.get(k)}


def _pair_row(runs: pd.DataFrame, pair: Pair) -> pd.Series:
    first = next(r for mode_ids in pair.runs.values() for r in mode_ids)
    return runs.loc[runs["run_id"] == first].iloc[0]


def factors(analysis: Analysis) -> list[tuple[str, str, list[Any]]]:
    """(column, name, levels with the baseline first) of every factor with two or more
    levels among the campaign's matrix points."""
    runs = analysis.campaign.runs
    return _factors(runs, [_pair_attrs(runs, p) for p in analysis.pairs])


def _factors(runs: pd.DataFrame, attrs: list[dict[str, Any]]
             ) -> list[tuple[str, str, list[Any]]]:
    out = []
    for column, name, _ in FACTORS:
        if column not in runs.columns:
            continue
        order = list(dict.fromkeys(runs[column].tolist()))
        if len(order) < 2:
            continue
        uses = {lv: sum(a[column] == lv for a in attrs) for lv in order}
        base = max(order, key=lambda lv: (uses[lv], -order.index(lv)))
        out.append((column, name, [base] + [lv for lv in order if lv != base]))
    return out


def ablations(analysis: Analysis, alpha: float | None = None) -> list[AblationCell]:
    """One cell per (factor level, participant count, metric): the matrix point with the
    factor switched against the same point with it at its baseline. Empty without factors."""
    alpha = analysis.alpha if alpha is None else alpha
    runs = analysis.campaign.runs
    attrs = [(_pair_attrs(runs, p), p) for p in analysis.pairs]
    cells: list[AblationCell] = []
    for column, name, levels in _factors(runs, [a for a, _ in attrs]):
        base = levels[0]
        for a_on, p_on in attrs:
            if a_on[column] == base:
                continue
            want = {**a_on, column: base}
            p_off = next((p for a, p in attrs
                          if a == want and p.label == p_on.label), None)
            if p_off is None:
                continue
            for metric in METRICS:
                v_off, v_on = p_off.verdicts.get(metric), p_on.verdicts.get(metric)
                outs = (outcome(v_off), outcome(v_on))
                ok = (v_off is not None and v_on is not None
                      and modes.TESTBED_BOUND not in (v_off.outcome, v_on.outcome))
                diff = modes.effect_difference(v_off, v_on, alpha) if ok else None
                why = [join(v.testbed_reasons, prefix=f"{side}: ")
                       for side, v in (("baseline", v_off), ("switched", v_on))
                       if v is not None and v.outcome == modes.TESTBED_BOUND]
                cells.append(AblationCell(
                    name, column, _show(column, base), _show(column, a_on[column]),
                    p_on.label, metric, (p_off.group, p_on.group), outs,
                    (v_off.change[0] if v_off else math.nan,
                     v_on.change[0] if v_on else math.nan),
                    (v_off, v_on), diff, why, _changed_params(runs, p_off, p_on),
                    (fidelity_cell(p_off), fidelity_cell(p_on))))
    tested = [c.difference for c in cells if c.difference is not None]
    for d, adj in zip(tested, modes.holm([d.p for d in tested]), strict=True):
        d.p_adj, d.family = adj, len(tested)
    return cells


def _pct(x: float) -> str:
    return f"{round(x) + 0:+d}%" if math.isfinite(x) else "n/a"


def _difference_words(d: modes.EffectDifference | None) -> str:
    if d is None:
        return "no interaction test (fewer than 2 runs per mode on a side)"
    est, lo, hi = d.change
    p = "p<0.001" if d.p_adj < 0.001 else f"p={d.p_adj:.3f}"
    return (f"multicast/unicast ratio {_pct(est)} [{_pct(lo)}, {_pct(hi)}], Welch–"
            f"Satterthwaite t on log run medians ({d.runs} runs), Holm {p} of {d.family}")


def table(cells: list[AblationCell]) -> pd.DataFrame:
    """The ablation table: one row per cell."""
    rows = []
    for c in cells:
        d = c.difference
        rows.append({
            "participants": c.participants, "factor": c.switch, "metric": c.metric,
            "fidelity": c.fidelity,
            "baseline verdict": c.outcomes[0], "baseline change_pct": c.changes[0],
            "switched verdict": c.outcomes[1], "switched change_pct": c.changes[1],
            "effect on the penalty": c.effect,
            "ratio change_pct": d.change[0] if d else math.nan,
            "lo": d.change[1] if d else math.nan, "hi": d.change[2] if d else math.nan,
            "p_holm": d.p_adj if d else math.nan,
        })
    return pd.DataFrame(rows)


def paragraphs(cells: list[AblationCell]) -> list[str]:
    """One paragraph per participant count: which mechanism the data support and how
    strongly, or that they cannot tell and why."""
    out = []
    for label in dict.fromkeys(c.participants for c in cells):
        here = [c for c in cells if c.participants == label]
        out.append(_paragraph(label, here))
    return out


def _paragraph(label: str, cells: list[AblationCell]) -> str:
    head = f"At {label}"
    if all(c.effect == TESTBED for c in cells):
        # the first host-bound run's reasons, as an example
        why = next((r.split("; ")[0] for c in cells for r in c.reasons), "host-bound runs")
        reasons = [r for c in cells for r in c.reasons]
        return (f"{head} the data cannot tell: every ablation cell is testbed-bound "
                f"({testbed_cause(reasons)}, e.g. {why}); {advice(reasons)}.")
    parts = []
    for metric in METRICS:
        mc = [c for c in cells if c.metric == metric]
        if not mc:
            continue
        # the baseline's verdict is one per count and metric, whatever was switched
        base = [c for c in mc if c.outcomes[0] not in ("testbed", "not compared")]
        penalty = any(c.outcomes[0] == "unicast" for c in base)
        support = [c for c in mc if c.effect in SUPPORT]
        if not base:
            parts.append(f"{metric}: the baseline itself is testbed-bound or not compared, "
                         "so these data show no penalty to explain")
            continue
        if not penalty:
            first = base[0]
            runs = first.verdicts[0].runs if first.verdicts[0] is not None else {}
            per_mode = "+".join(str(n) for n in runs.values()) or "?"
            if first.outcomes[0] == "undecided":
                text = (f"{metric}: the baseline does not decide between the modes "
                        f"(multicast {_pct(first.changes[0])}, {per_mode} runs: the runs "
                        "spread more than the modes differ), so no penalty is shown to explain")
            else:
                text = (f"{metric}: no multicast penalty at the baseline "
                        f"({_OUTCOME_WORDS.get(first.outcomes[0], first.outcomes[0])}, "
                        f"multicast {_pct(first.changes[0])}), so nothing to explain")
            created = [c.switch for c in mc if c.effect == CREATES]
            if created:
                text += f"; switching {', '.join(created)} makes unicast better"
            text += _largest_interaction(mc)
            parts.append(text)
            continue
        base_change = next(c.changes[0] for c in base if c.outcomes[0] == "unicast")
        text = f"{metric}: multicast's penalty ({_pct(base_change)} at the baseline)"
        strong = [c for c in support if c.effect in (REVERSES, REMOVES)]
        weak = [c for c in support if c.effect == REDUCES]
        if strong or weak:
            named = [f"{_PARTICIPLE[c.effect]} by {c.switch} ({_difference_words(c.difference)})"
                     for c in strong + weak]
            text += " is " + "; ".join(named)
            text += (" — the data support " + ", ".join(_mechanism(c) for c in strong + weak)
                     + (" (strongly: the penalty goes away)" if strong
                        else " (partly: the penalty shrinks)"))
        else:
            text += " is not removed, reversed or reduced by any factor switched here"
        none = [c.switch for c in mc if c.effect == NO_CHANGE]
        unclear = [c.switch for c in mc if c.effect in (CANNOT_TELL, NOT_COMPARED)]
        bound = [c.switch for c in mc if c.effect == TESTBED]
        if none:
            text += f"; no change shown for {', '.join(none)}"
        if unclear:
            text += f"; cannot tell for {', '.join(unclear)}"
        if bound:
            text += f"; testbed-bound, not evidence: {', '.join(bound)}"
        parts.append(text)
    return f"{head}, " + ". ".join(parts) + "."


_OUTCOME_WORDS = {"equal": "practically equal", "multicast": "multicast better"}


def _largest_interaction(cells: list[AblationCell]) -> str:
    """The switch with the strongest evidence of changing multicast's effect, when its
    unadjusted test would pass but Holm's over the table does not: said, so a reader sees
    what a larger campaign could confirm."""
    tested = [c for c in cells if c.difference is not None]
    if not tested:
        return ""
    c = min(tested, key=lambda x: x.difference.p)  # type: ignore[union-attr]
    d = c.difference
    assert d is not None
    if d.p_adj < d.alpha or d.p >= d.alpha:
        return ""
    return (f"; the strongest hint is {c.switch} ({_difference_words(d)}; p={d.p:.3f} "
            "before Holm): not significant over the table")


_ROUTE_PARAMS = {"snooping", "querier", "mrouting", "spt", "rp", "rp_router", "shape",
                 "routers", "igmp_version", "switch"}
_CPU_PARAMS = {"cpu", "cpu_period_us", "cpu_period_step_us", "cpu_pin"}


def _topology_mechanism(changed: set[str]) -> str:
    """The mechanism a topology variant tests, from the parameters it changes."""
    if changed == {"hosts"}:
        return "participants per host (H-fanout)"
    if changed and changed <= _ROUTE_PARAMS:
        return f"the network's multicast handling (H-route: {', '.join(sorted(changed))})"
    if changed and changed <= _CPU_PARAMS:
        # a cpu sweep: a conclusion that holds at both scales does not hang on the scale
        return f"the hosts' capacity (the scale: {', '.join(sorted(changed))})"
    return f"the topology ({', '.join(sorted(changed)) or 'no parameter changed'})"


def _mechanism(c: AblationCell) -> str:
    if c.column == "topology_variant":
        return _topology_mechanism(c.changed_params)
    return next(m for col, _, m in FACTORS if col == c.column)
