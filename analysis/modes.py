"""Verdicts about the *modes*, with runs as the unit.

A verdict that multicast is better than unicast is a claim about the modes, so it must
hold against the run-to-run variation of the testbed, not only against the noise inside
one run. Two identical unpaced 1×1 campaigns on the project's machines gave multicast
median latencies of −34 % and +27 % against unicast, each "significant" inside its pair
of runs: the runs, not the modes, differed. So:

* each run is reduced to one number per metric (the median of publisher 0's latency,
  the median of the per-second throughput summed over subscribers), on a log scale so
  that a change reads as a ratio;
* with at least 2 runs per mode, Welch's t-test compares the two modes' run values (it
  does not assume equal variances or equal run counts); the interval of the change is
  the matching Welch t interval, back-transformed to a percentage;
* a pre-declared equivalence margin (default ±5 % of the median, ``[analysis]
  equivalence_margin`` in a scenario) gives a two one-sided tests (TOST) verdict of
  *practically equal*;
* Holm's step-down method controls the family-wise error over every compared cell of the
  campaign (counts × metrics × groups), separately for the difference and the
  equivalence tests; the adjusted p-values are reported and the family is named;
* with one run per mode the between-run variance is unknown and the verdict is
  *undecided*; the within-run distribution test (:mod:`analysis.dominance`) is still
  shown, labelled conditional on these runs.

Three honest outcomes remain where the testbed kept up: ``<mode> better``,
``practically equal`` and ``undecided``; ``testbed-bound`` where it did not.

scipy.stats supplies the t distribution; Holm's procedure (a few lines, not in scipy)
and the TOST are written here.

Example::

    >>> holm([0.01, 0.04, 0.03])
    [0.03, 0.06, 0.06]
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import stats as sps

from analysis import dominance, stats

EQUIVALENCE_MARGIN = 0.05  # ±5 % of the median: a change smaller than this does not matter
MIN_RUNS = 2  # per mode, for a verdict about the modes
EQUAL = "practically equal"
UNDECIDED = "undecided"
TESTBED_BOUND = dominance.TESTBED_BOUND  # one word for it, whichever test is reported
QUANTILE = {"median": 0.5, "p99": 0.99}
# Other per-run statistics (the views of analysis/views.py): jitter is the standard
# deviation of a run's round trips, as the round-trip studies define it.
RUN_STATISTICS = {"mean": np.mean, "std": lambda x: np.std(x, ddof=1)}
# A tail is compared only where each run has enough samples for its p99 to mean something.
MIN_SAMPLES_FOR_TAIL = 200


def better(mode: str) -> str:
    return f"{mode} better"


@dataclass
class ModeVerdict:
    """The verdict about the two modes for one metric of one matrix point (or about two
    levels of another axis, analysis/views.py: ``runs`` names them, reference first)."""

    metric: str
    outcome: str  # "<mode> better" | EQUAL | UNDECIDED | TESTBED_BOUND
    statistic: str  # each run's "median" or "p99"
    runs: dict[str, int]  # mode (level) -> runs compared; unicast (the reference) first
    run_values: dict[str, list[float]]  # mode -> each run's statistic (native unit)
    change: tuple[float, float, float]  # multicast vs unicast (second vs first), %: est, lo, hi
    df: float = math.nan
    p_difference: float = math.nan  # Welch, two-sided, unadjusted
    p_equivalence: float = math.nan  # TOST, unadjusted
    p_difference_adj: float = math.nan  # Holm over the family
    p_equivalence_adj: float = math.nan
    margin: float = EQUIVALENCE_MARGIN
    alpha: float = stats.ALPHA
    family: int = 0  # cells in the Holm family
    reason: str = ""  # why undecided or testbed-bound
    testbed_reasons: list[str] = field(default_factory=list)

    @property
    def winner(self) -> str | None:
        for mode in self.runs:
            if self.outcome == better(mode):
                return mode
        return None

    @property
    def testable(self) -> bool:
        return math.isfinite(self.p_difference)

    def qualifier(self) -> str:
        """The test behind the outcome, in one parenthesis-free phrase."""
        n = "+".join(str(self.runs[m]) for m in self.runs)
        if not self.testable:
            return self.reason
        est, lo, hi = self.change
        ref, other = self.runs
        return (f"Welch t on {n} run {self.statistic}s (log), "
                f"{other} {est:+.1f}% [{lo:+.1f}, {hi:+.1f}] vs {ref}; "
                f"difference p={self.p_difference:.3f}, Holm p={self.p_difference_adj:.3f}; "
                f"equivalence ±{self.margin:.0%} Holm p={self.p_equivalence_adj:.3f}; "
                f"family of {self.family}")


def run_statistic(sample: stats.Sample, statistic: str = "median") -> list[float]:
    """Each run's median or p99 (or mean, std: RUN_STATISTICS), the runs of ``sample`` in
    order."""
    out, start = [], 0
    for length in sample.run_lengths.tolist():
        x = sample.values[start : start + length]
        out.append(float(RUN_STATISTICS[statistic](x)) if statistic in RUN_STATISTICS
                   else float(np.quantile(x, QUANTILE[statistic])))
        start += length
    return out


def welch(a: list[float], b: list[float], alpha: float, margin: float
          ) -> tuple[float, float, float, float, float, float]:
    """Log-scale Welch test of b against a: (change %, CI lo %, CI hi %, df, p difference,
    p equivalence). Values must be positive."""
    la, lb = np.log(np.asarray(a)), np.log(np.asarray(b))
    d = float(lb.mean() - la.mean())
    va, vb = float(la.var(ddof=1)) / la.size, float(lb.var(ddof=1)) / lb.size
    se = math.sqrt(va + vb)
    delta = math.log1p(margin)
    if se == 0.0:  # identical runs in both modes: the difference is exact
        p_diff = 1.0 if d == 0.0 else 0.0
        p_eq = 0.0 if abs(d) < delta else 1.0
        pct = 100.0 * math.expm1(d)
        return pct, pct, pct, math.inf, p_diff, p_eq
    df = (va + vb) ** 2 / (va**2 / (la.size - 1) + vb**2 / (lb.size - 1))
    t = sps.t(df)
    p_diff = float(2.0 * t.sf(abs(d) / se))
    p_eq = float(max(t.sf((d + delta) / se), t.cdf((d - delta) / se)))
    half = float(t.ppf(1.0 - alpha / 2.0)) * se
    return (100.0 * math.expm1(d), 100.0 * math.expm1(d - half),
            100.0 * math.expm1(d + half), float(df), p_diff, p_eq)


@dataclass
class EffectDifference:
    """Whether two implementations' multicast-vs-unicast effects differ (one cell, one
    metric): the ratio of their changes, as a %, with its Welch–Satterthwaite t interval."""

    change: tuple[float, float, float]  # other's (multicast/unicast) over reference's, %
    df: float
    p: float  # two-sided, unadjusted
    runs: str  # "3+3 vs 3+3" (reference's unicast+multicast vs other's)
    p_adj: float = math.nan  # Holm over the table's effect differences
    family: int = 0
    alpha: float = stats.ALPHA


def effect_difference(ref: ModeVerdict, other: ModeVerdict, alpha: float = stats.ALPHA
                      ) -> EffectDifference | None:
    """Test whether multicast's change against unicast is the same for two implementations
    (an interaction test on the log run values): (log m₂ − log u₂) − (log m₁ − log u₁) over
    the four groups of runs, unequal variances (Welch–Satterthwaite degrees of freedom).

    None where a group has fewer than MIN_RUNS runs or a non-positive value.

    >>> a = ModeVerdict("latency", UNDECIDED, "median", {"unicast": 2, "multicast": 2},
    ...                 {"unicast": [100.0, 110.0], "multicast": [50.0, 55.0]}, (0, 0, 0))
    >>> b = ModeVerdict("latency", UNDECIDED, "median", {"unicast": 2, "multicast": 2},
    ...                 {"unicast": [100.0, 110.0], "multicast": [50.0, 55.0]}, (0, 0, 0))
    >>> round(effect_difference(a, b).change[0], 6), effect_difference(a, b).p
    (0.0, 1.0)
    """
    groups = [ref.run_values.get("unicast", []), ref.run_values.get("multicast", []),
              other.run_values.get("unicast", []), other.run_values.get("multicast", [])]
    if min(len(g) for g in groups) < MIN_RUNS or not all(x > 0 for g in groups for x in g):
        return None
    logs = [np.log(np.asarray(g, dtype=float)) for g in groups]
    means = [float(g.mean()) for g in logs]
    d = (means[3] - means[2]) - (means[1] - means[0])
    parts = [float(g.var(ddof=1)) / g.size for g in logs]
    se = math.sqrt(sum(parts))
    runs = f"{len(groups[0])}+{len(groups[1])} vs {len(groups[2])}+{len(groups[3])}"
    if se == 0.0:
        pct = 100.0 * math.expm1(d)
        return EffectDifference((pct, pct, pct), math.inf, 1.0 if d == 0.0 else 0.0, runs,
                                alpha=alpha)
    df = sum(parts) ** 2 / sum(v**2 / (g.size - 1) for v, g in zip(parts, logs, strict=True))
    t = sps.t(df)
    p = float(2.0 * t.sf(abs(d) / se))
    half = float(t.ppf(1.0 - alpha / 2.0)) * se
    return EffectDifference((100.0 * math.expm1(d), 100.0 * math.expm1(d - half),
                             100.0 * math.expm1(d + half)), float(df), p, runs, alpha=alpha)


def holm(p: list[float]) -> list[float]:
    """Holm's step-down adjusted p-values (family-wise error control), in input order."""
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    out = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        out[i] = round(running, 12)
    return out


def judge(
    samples: dict[str, stats.Sample],
    *,
    metric: str,
    statistic: str = "median",
    alpha: float = stats.ALPHA,
    margin: float = EQUIVALENCE_MARGIN,
) -> ModeVerdict:
    """One cell's unadjusted test; :func:`decide` sets the outcome after Holm."""
    values = {m: run_statistic(samples[m], statistic) for m in ("unicast", "multicast")}
    return judge_values(values, metric=metric, statistic=statistic, alpha=alpha, margin=margin)


def judge_values(
    values: dict[str, list[float]],
    *,
    metric: str,
    statistic: str = "median",
    alpha: float = stats.ALPHA,
    margin: float = EQUIVALENCE_MARGIN,
    compared: str = "the modes",
    per: str = "mode",
) -> ModeVerdict:
    """:func:`judge` on each run's value of two levels (the reference first): the modes, or
    two implementations, placements ... (``compared``, ``per`` name them in the reason)."""
    (ref, u), (other, mc) = values.items()
    runs = {m: len(x) for m, x in values.items()}
    v = ModeVerdict(metric=metric, outcome=UNDECIDED, statistic=statistic, runs=runs,
                    run_values=values, change=(math.nan, math.nan, math.nan), margin=margin,
                    alpha=alpha)
    if u and mc and all(x > 0 for x in u + mc):
        point = 100.0 * (float(np.exp(np.mean(np.log(mc)) - np.mean(np.log(u)))) - 1.0)
        v.change = (point, math.nan, math.nan)
    if min(runs.values()) < MIN_RUNS:
        v.reason = (f"undecided: {runs[ref]} {ref} and {runs[other]} {other} "
                    f"run(s); a verdict on {compared} needs ≥ {MIN_RUNS} runs per {per} "
                    "(run-to-run variation is not estimated from one run)")
        return v
    if not all(x > 0 for x in u + mc):
        v.reason = "undecided: a run's median is not positive (no log-scale comparison)"
        return v
    est, lo, hi, df, p_diff, p_eq = welch(u, mc, alpha, margin)
    v.change, v.df, v.p_difference, v.p_equivalence = (est, lo, hi), df, p_diff, p_eq
    return v


def decide(verdicts: list[ModeVerdict], lower_is_better: dict[str, bool]) -> None:
    """Holm over every testable, network-bound cell, then each cell's outcome."""
    family = [v for v in verdicts if v.testable and v.outcome != TESTBED_BOUND]
    adj_d = holm([v.p_difference for v in family])
    adj_e = holm([v.p_equivalence for v in family])
    for v, pd_, pe in zip(family, adj_d, adj_e, strict=True):
        v.p_difference_adj, v.p_equivalence_adj, v.family = pd_, pe, len(family)
        if pe < v.alpha:
            v.outcome = EQUAL
        elif pd_ < v.alpha:
            lower = lower_is_better[v.metric]
            ref, other = v.runs  # unicast, multicast for the modes
            other_smaller = v.change[0] < 0
            v.outcome = better(other if other_smaller == lower else ref)
        else:
            v.outcome = UNDECIDED
            v.reason = (f"undecided: neither a difference nor equivalence within "
                        f"±{v.margin:.0%} is shown at the family-wise α={v.alpha:g}")


def tail_reversal(median: ModeVerdict | None, tail: ModeVerdict | None) -> str | None:
    """The mode whose tail is significantly worse although its median is better, if any."""
    if median is None or tail is None or not median.winner or not tail.winner:
        return None
    return median.winner if tail.winner != median.winner else None


def mark_testbed_bound(v: ModeVerdict, reasons: list[str]) -> None:
    v.outcome = TESTBED_BOUND
    v.testbed_reasons = list(reasons)
    v.reason = "testbed-bound: a run was host-bound"


MAX_RUNS_ESTIMATE = 50  # beyond this a cell is called "not decidable by repetition alone"


def runs_to_decide(v: ModeVerdict) -> int | None:
    """Runs per mode that would decide an undecided cell if the modes' run values kept their
    observed mean and spread: the smallest n at which either the difference or the
    equivalence test would pass at α / family (Bonferroni: an upper bound for Holm). None
    when no n up to MAX_RUNS_ESTIMATE would (the change sits at the margin), or the cell
    has no two runs per mode to estimate the spread from.

    >>> v = ModeVerdict("latency", UNDECIDED, "median", {"unicast": 3, "multicast": 3},
    ...                 {"unicast": [100.0, 120.0, 80.0], "multicast": [85.0, 100.0, 70.0]},
    ...                 (0, 0, 0), family=1)
    >>> runs_to_decide(v)
    13
    """
    u, mc = v.run_values.get("unicast", []), v.run_values.get("multicast", [])
    if min(len(u), len(mc)) < MIN_RUNS or not all(x > 0 for x in u + mc):
        return None
    lu, lm = np.log(np.asarray(u, dtype=float)), np.log(np.asarray(mc, dtype=float))
    d = abs(float(lm.mean() - lu.mean()))
    va, vb = float(lu.var(ddof=1)), float(lm.var(ddof=1))
    delta = math.log1p(v.margin)
    alpha = v.alpha / max(v.family, 1)
    for n in range(max(len(u), len(mc), MIN_RUNS), MAX_RUNS_ESTIMATE + 1):
        se = math.sqrt((va + vb) / n)
        if se == 0.0:
            return n
        df = (va + vb) ** 2 / ((va**2 + vb**2) / (n - 1)) if va + vb > 0 else math.inf
        t = sps.t(df)
        if d / se > float(t.ppf(1.0 - alpha / 2.0)):
            return n  # the difference
        if d < delta and (delta - d) / se > float(t.ppf(1.0 - alpha)):
            return n  # the equivalence (TOST: both one-sided tests)
    return None
