"""First-order stochastic dominance between two modes, with a test behind the verdict.

The test works on the difference of the two ECDFs, ``D(x) = F_a(x) - F_b(x)``, and its
statistic is ``sup_x |D(x)|``; ``c`` is the threshold it exceeds with probability at most
alpha under identical distributions, and every x with ``|D(x)| > c`` is significant with
family-wise error rate alpha. Where D > c, mode ``a`` has significantly more mass below
x (its values are smaller there); where D < -c, mode ``b``. ``c`` is the larger of two
null critical values, so a difference is called only where both tests call it:

* block permutation: the resampling units of both modes (blocks of one length, or whole
  runs when there are enough repetitions) are permuted between the modes (a block
  version of the permutation Kolmogorov-Smirnov test; every split is enumerated when
  there are few, and it is then exact). Exact when the units are exchangeable, but it
  pools the modes' variances, so with unequal n and unequal autocorrelation it is not
  even asymptotically valid (Chung & Romano): unicast 25k samples with AR(1) φ = 0.995
  against multicast 100k with φ = 0.9, identical distributions, gave 37% false verdicts.
* per-mode block bootstrap (:func:`bootstrap_null`): each mode is resampled on its own,
  with blocks of its own length, centred at its own ECDF, and the critical value is
  widened to a t quantile for the few degrees of freedom a long-run variance has in a
  short, persistent series. Valid for unequal n and unequal autocorrelation (10 of 200
  false verdicts in that case, tests/analysis); with few units only approximate, and
  then conservative through the t correction.

Rejecting only when both reject keeps the error rate of whichever is valid. The price is
power where blocks are few: on identical 30-sample series (4 blocks per mode) false
verdicts fell from 11 to 3 of 200, so a true difference needs to be larger there to be
called; with thousands of samples per mode the power tests of tests/analysis still pass.

* neither anywhere: "no significant difference";
* one sign only: that mode dominates (for latency the smaller one is better, for
  throughput the larger one, so the direction is translated before naming the winner);
* both signs: "crossing", with a crossover between every pair of opposite significant
  regions (all of them are reported): the interval in which it must lie, each mode's
  ECDF at both ends of that interval, and a point estimate only where the estimated D
  changes sign exactly once inside the interval (never the last sign change of a noisy
  estimate).

"Dominates" is a claim about the whole distribution, and the sup test sees little of the
tails (|ΔF| there is at most the tail's mass, a few hundredths, below c on a few thousand
samples). So a one-sign outcome is named "dominates" only where the worse tail agrees
(:func:`tail_check`: p99 and p99.9 for latency, p1 and p0.1 for throughput, with block-
bootstrap intervals of their change): where that tail of the mode better in the body is
significantly worse (either quantile), the outcome is a *tail reversal*; where its p99 (p1)
estimate is worse but not significantly, *<mode> better in the body* (dominance is not
shown; the p99.9 and p0.1 estimates rest on a handful of samples, so only their significant
reversal counts). A known answer
(tests/analysis): multicast median −18%, p99 2.8× higher, five runs per mode, where the
sup test alone found "multicast dominates".

Because the band is simultaneous, identical distributions give any non-null verdict
with probability at most about ``alpha`` (tests/analysis check the rate over repeated
draws).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
from scipy.special import ndtr
from scipy.stats import ks_2samp
from scipy.stats import t as sps_t

from analysis import stats

NO_DIFFERENCE = "no significant difference"
CROSSING = "crossing"
# A comparison with a run whose emulator could not keep up (experiments/fidelity.py): the
# hosts' CPUs, not the network, shaped its figures, so it is no verdict on the modes.
TESTBED_BOUND = "testbed-bound"
# How the report names the test (the qualifier of every within-run verdict).
TEST_NAME = "block-permutation and per-mode block-bootstrap test"
# The bootstrap test's blocks lose at most this share of the long-run variance (by the
# estimate of stats.bias_block_length): a quarter of the intervals' BLOCK_BIAS, see
# bootstrap_units.
TEST_BLOCK_BIAS = 0.025


TAIL_REVERSAL = "tail reversal"
# The worse tail that a "dominates" must not contradict: upper quantiles where lower values
# are better (latency), lower ones where higher values are better (throughput).
WORSE_TAIL = {True: {"p99": 0.99, "p99.9": 0.999}, False: {"p1": 0.01, "p0.1": 0.001}}


def dominates(mode: str) -> str:
    return f"{mode} dominates"


def better_in_body(mode: str) -> str:
    return f"{mode} better in the body"


@dataclass
class Crossover:
    """A change of the better mode between two significant regions of opposite sign.

    The interval [lo, hi] runs from the last point of one significant region to the first
    point of the next: with the simultaneous band, the true ΔF changes sign somewhere in it
    (family-wise confidence 1 − α). ``x`` is a point estimate only where the estimated ΔF
    changes sign exactly once inside the interval; where the noisy estimate changes sign
    several times, no point is claimed (``x`` is NaN) and only the interval is reported.
    ``ends`` holds each mode's ECDF at both ends of the interval: the mass below the
    crossover lies between the two values.
    """

    x: float  # estimated crossover point, NaN when the estimate changes sign more than once
    lo: float  # it lies between the last point of one significant region ...
    hi: float  # ... and the first point of the next
    below: str  # mode that is better below the interval
    above: str  # mode that is better above it
    mass_below: dict[str, float] = field(default_factory=dict)  # F_mode(x) (NaN without x)
    ends: dict[str, tuple[float, float]] = field(default_factory=dict)  # F_mode(lo), F_mode(hi)
    sign_changes: int = 1  # sign changes of the estimated ΔF inside [lo, hi]

    @property
    def located(self) -> bool:
        return bool(np.isfinite(self.x))


@dataclass
class Comparison:
    """Everything the report says about one metric of one unicast/multicast pair."""

    metric: str
    names: tuple[str, str]
    lower_is_better: bool
    verdict: str
    p_value: float  # the larger of the two tests' p-values
    sup_d: float  # max |D| on the grid
    critical: float  # c: |D(x)| > c is significant (family-wise); the larger of the two
    alpha: float
    n_boot: int
    permutations: int  # splits evaluated for the permutation null distribution
    exact: bool  # every split enumerated
    p_permutation: float
    p_bootstrap: float
    critical_permutation: float
    critical_bootstrap: float
    ks_d: float  # scipy.stats.ks_2samp statistic on the raw samples
    ks_p_iid: float  # its p-value *if* the samples were independent (for contrast)
    crossovers: list[Crossover]
    effects: dict[str, tuple[float, float, float]]  # % change b vs a: est, lo, hi
    prob_a_lower: float  # P(X_a < X_b) + P(=)/2 from the binned distributions
    summaries: dict[str, stats.Summary]
    grid: np.ndarray
    cdfs: dict[str, np.ndarray]
    diff: np.ndarray
    area: dict[str, float]  # integral of the better mode's advantage, per mode
    # The test's own outcome, kept when `verdict` became TESTBED_BOUND (never reported as
    # a verdict); and why the testbed bound the comparison.
    test_outcome: str = ""
    testbed_reasons: list[str] = field(default_factory=list)
    # The worse tail's change (b vs a, %: est, lo, hi) per quantile, and the mode that is
    # better in the body where that tail goes the other way (tail_check)
    tails: dict[str, tuple[float, float, float]] = field(default_factory=dict)
    body_better: str = ""

    def tail_phrase(self) -> str:
        """'p99 +232% [+150, +330], p99.9 +400% [...] for multicast against unicast'."""
        parts = [f"{k} {est:+.0f}% [{lo:+.0f}, {hi:+.0f}]"
                 for k, (est, lo, hi) in self.tails.items() if math.isfinite(est)]
        return f"{', '.join(parts)} for {self.names[1]} against {self.names[0]}"

    def mark_testbed_bound(self, reasons: list[str]) -> None:
        """No verdict: one of the compared runs was host-bound."""
        self.test_outcome = self.test_outcome or self.verdict
        self.verdict = TESTBED_BOUND
        self.testbed_reasons = list(reasons)

    @property
    def testbed_bound(self) -> bool:
        return self.verdict == TESTBED_BOUND

    @property
    def winner(self) -> str | None:
        for name in self.names:
            if self.verdict == dominates(name):
                return name
        return None

    def qualifier(self) -> str:
        """Short description of the test behind the verdict."""
        # the smallest resampling p-value is 1/(B+1): say "at most", not "equal"
        floor = self.p_value <= 1.0 / (self.n_boot + 1) + 1e-12
        p = f"p≤{self.p_value:.3f}" if floor else f"p={self.p_value:.3f}"
        rel = ">" if self.sup_d > self.critical else "≤"
        kind = f"permutation exact over {self.permutations} splits, " if self.exact else ""
        return (f"{TEST_NAME}, {kind}{p}, "
                f"sup|ΔF|={self.sup_d:.3f} {rel} c={self.critical:.3f}")


@dataclass
class _Mode:
    """One mode's sample with its grid cells and its own units (runs when both modes have
    enough of them, else blocks of the length its own autocorrelation asks for)."""

    sample: stats.Sample
    idx: np.ndarray
    own: stats.Binned

    @classmethod
    def bin(cls, sample: stats.Sample, grid: np.ndarray, reps: bool) -> _Mode:
        idx = stats.grid_index(sample, grid)
        return cls(sample, idx, stats.bin_sample(sample, grid, repetitions_as_units=reps,
                                                 idx=idx))

    def blocks(self, grid: np.ndarray, length: int, *known: stats.Binned) -> stats.Binned:
        """Blocks of ``length``, reusing a binning of that length if there is one."""
        for binned in (self.own, *known):
            if binned.unit == "blocks" and binned.block_len == length:
                return binned
        return stats.bin_sample(self.sample, grid, block_len=length,
                                repetitions_as_units=False, idx=self.idx)


def _bin_exchangeable(
    ma: _Mode, mb: _Mode, grid: np.ndarray
) -> tuple[stats.Binned, stats.Binned]:
    """Bin both samples with the same kind and length of unit, so units can be permuted."""
    ba, bb = ma.own, mb.own
    if ba.unit == "repetitions" or ba.block_len == bb.block_len:
        return ba, bb
    shortest = int(min(ma.sample.run_lengths.min(), mb.sample.run_lengths.min()))
    length = max(1, min(max(ba.block_len, bb.block_len), shortest // stats.MIN_BLOCKS_PER_RUN))
    return ma.blocks(grid, length), mb.blocks(grid, length)


def permutation_null(
    ba: stats.Binned, bb: stats.Binned, n_perm: int, rng: np.random.Generator
) -> tuple[np.ndarray, bool]:
    """Null distribution of sup|F_a - F_b| when units (blocks or runs) are exchangeable
    between the two modes. Enumerates every split when there are at most ``n_perm``
    (then the test is exact); returns (statistics, exact)."""
    counts = np.vstack([ba.counts, bb.counts])
    sizes = np.concatenate([ba.sizes, bb.sizes])
    n_a, n_units = ba.sizes.size, sizes.size
    exact = math.comb(n_units, n_a) <= n_perm
    if exact:
        chosen = np.array(list(itertools.combinations(range(n_units), n_a)))
    else:
        order = rng.permuted(np.tile(np.arange(n_units), (n_perm, 1)), axis=1)
        chosen = order[:, :n_a]
    sel = np.zeros((chosen.shape[0], n_units))
    np.put_along_axis(sel, chosen, 1.0, axis=1)
    part = sel @ counts
    n_part = sel @ sizes
    f_a = np.cumsum(part, axis=1) / n_part[:, None]
    f_b = np.cumsum(counts.sum(axis=0) - part, axis=1) / (sizes.sum() - n_part)[:, None]
    return np.abs(f_a - f_b).max(axis=1), exact


def bootstrap_units(mode: _Mode, grid: np.ndarray, *known: stats.Binned) -> stats.Binned:
    """Units of the bootstrap test: runs when runs are the units, else blocks that lose at
    most ``TEST_BLOCK_BIAS`` of the long-run variance by the BLOCK_BIAS rule's estimate.

    Longer than the intervals' blocks on purpose: with the t correction of
    :func:`bootstrap_null` a longer block costs only degrees of freedom, which are
    accounted for, while a block too short for a very persistent series loses variance,
    which is not (the fixed-b argument of Sun, Phillips & Jin, 2008)."""
    own = mode.own
    if own.unit == "repetitions" or not np.isfinite(own.need):
        return own
    length = stats.clamp_block_length(own.need * stats.BLOCK_BIAS / TEST_BLOCK_BIAS,
                                      mode.sample.run_lengths)
    return mode.blocks(grid, length, *known)


def bootstrap_null(
    ta: stats.Binned, tb: stats.Binned, ra: stats.Replicates, rb: stats.Replicates,
    alpha: float,
) -> tuple[np.ndarray, float]:
    """Null distribution of sup|ΔF| from each mode's own block bootstrap, and the factor
    that turns its quantiles into fixed-b t quantiles.

    Each replicate is ``(F*_a − F_a) − (F*_b − F_b)``: centred at the observed ECDFs, so it
    holds under the null and the alternative alike, and each mode carries its own variance
    (the permutation pools them: Chung & Romano). Deviations get the k/(k − 1) factor of a
    variance over k units. The bootstrap treats the long-run variance as known, but with
    few blocks it is estimated on few degrees of freedom; the factor maps the critical
    value, read as z at the point of largest variance, to the Student t quantile with
    the same tail on Welch–Satterthwaite degrees of freedom (units − 1 per mode).
    """
    ka, kb = ta.sizes.size, tb.sizes.size
    da = np.sqrt(ka / max(ka - 1, 1)) * (ra.cdf - ta.cdf)
    db = np.sqrt(kb / max(kb - 1, 1)) * (rb.cdf - tb.cdf)
    t_boot = np.abs(da - db).max(axis=1)
    va, vb = np.mean(da**2, axis=0), np.mean(db**2, axis=0)
    j = int(np.argmax(va + vb))
    sd = float(np.sqrt(va[j] + vb[j]))
    crit = float(np.quantile(t_boot, 1 - alpha, method="higher"))
    if sd == 0.0 or crit == 0.0:
        return t_boot, 1.0
    df = (va[j] + vb[j]) ** 2 / (va[j] ** 2 / max(ka - 1, 1) + vb[j] ** 2 / max(kb - 1, 1))
    z = crit / sd
    return t_boot, float(sps_t.isf(ndtr(-z), df) / z)


def _regions(sig: np.ndarray) -> list[tuple[int, int, int]]:
    """Maximal runs of equal non-zero sign: (sign, first index, last index)."""
    out: list[tuple[int, int, int]] = []
    nz = np.flatnonzero(sig)
    if nz.size == 0:
        return out
    start = prev = int(nz[0])
    for i in nz[1:].tolist():
        if sig[i] != sig[start]:
            out.append((int(sig[start]), start, prev))
            start = i
        prev = i
    out.append((int(sig[start]), start, prev))
    return out


def _interp(grid: np.ndarray, f: np.ndarray, x: float) -> float:
    return float(np.interp(x, grid, f))


def compare(
    a: stats.Sample,
    b: stats.Sample,
    *,
    metric: str,
    lower_is_better: bool,
    names: tuple[str, str] = ("unicast", "multicast"),
    alpha: float = stats.ALPHA,
    n_boot: int = stats.N_BOOT,
    rng: np.random.Generator | None = None,
    ks: bool = True,
) -> Comparison:
    """Compare ``a`` and ``b`` (e.g. unicast and multicast latency of one participant count)."""
    if a.n < 2 or b.n < 2:
        raise ValueError(f"{metric}: need at least 2 samples per mode, got {a.n} and {b.n}")
    rng = rng if rng is not None else np.random.default_rng(20261121)
    grid = stats.make_grid([a, b])
    reps = min(a.run_lengths.size, b.run_lengths.size) >= stats.MIN_REPETITIONS_AS_UNITS
    ma, mb = _Mode.bin(a, grid, reps), _Mode.bin(b, grid, reps)
    ba, bb = _bin_exchangeable(ma, mb, grid)
    ra, rb = stats.replicate(ba, n_boot, rng), stats.replicate(bb, n_boot, rng)
    diff = ba.cdf - bb.cdf
    sup_d = float(np.abs(diff).max())
    null = _nulls(ma, mb, ba, bb, ra, rb, grid, sup_d, alpha, n_boot, rng)
    crit, p_value = max(null.crit_perm, null.crit_boot), max(null.p_perm, null.p_boot)
    sig = np.where(diff - crit > 0, 1, np.where(diff + crit < 0, -1, 0))
    # D > 0: mode a has more mass below x, i.e. smaller values there.
    smaller = {1: names[0], -1: names[1]}
    better = smaller if lower_is_better else {1: names[1], -1: names[0]}
    regions = _regions(sig)
    verdict = (NO_DIFFERENCE if not regions
               else dominates(better[regions[0][0]]) if len({r[0] for r in regions}) == 1
               else CROSSING)
    crossovers = _crossovers(regions, diff, grid, better, {names[0]: ba, names[1]: bb})
    # Area between the curves where each mode is better: integral of |D| over those x.
    widths, seg_d = np.diff(grid), diff[:-1]
    area = {better[1]: float(np.sum(np.clip(seg_d, 0, None) * widths)),
            better[-1]: float(np.sum(np.clip(-seg_d, 0, None) * widths))}
    sa = stats.summarize(a, ba, ra, grid, alpha)
    sb = stats.summarize(b, bb, rb, grid, alpha)
    qa, qb = stats.quantile_replicates(ra, grid), stats.quantile_replicates(rb, grid)
    effects = _effects(sa, sb, qa, qb, alpha)
    tails = {name: _change((ba, ra), (bb, rb), grid, p, alpha)
             for name, p in WORSE_TAIL[lower_is_better].items()}
    body = verdict.removesuffix(" dominates") if verdict.endswith(" dominates") else ""
    verdict = tail_check(verdict, tails, names, lower_is_better)
    prob_a_lower = _prob_lower(ba, bb)
    ks_d, ks_p = _ks(a, b) if ks else (np.nan, np.nan)
    return Comparison(
        metric=metric,
        names=names,
        lower_is_better=lower_is_better,
        verdict=verdict,
        p_value=p_value,
        sup_d=sup_d,
        critical=crit,
        alpha=alpha,
        n_boot=n_boot,
        permutations=null.permutations,
        exact=null.exact,
        p_permutation=null.p_perm,
        p_bootstrap=null.p_boot,
        critical_permutation=null.crit_perm,
        critical_bootstrap=null.crit_boot,
        ks_d=ks_d,
        ks_p_iid=ks_p,
        crossovers=crossovers,
        effects=effects,
        prob_a_lower=prob_a_lower,
        summaries={names[0]: sa, names[1]: sb},
        grid=grid,
        cdfs={names[0]: ba.cdf, names[1]: bb.cdf},
        diff=diff,
        area=area,
        tails=tails,
        body_better=body if verdict != dominates(body) else "",
    )


def _ks(a: stats.Sample, b: stats.Sample) -> tuple[float, float]:
    """scipy's two-sample KS statistic and p-value on the raw samples (p assumes
    independent samples: reported, never the test)."""
    res = ks_2samp(a.values, b.values, method="asymp")
    return float(res.statistic), float(res.pvalue)


class _Nulls(NamedTuple):
    """The two null distributions of sup|D| and what each gives."""
    permutations: int
    exact: bool
    crit_perm: float
    p_perm: float
    crit_boot: float
    p_boot: float


def _nulls(ma: _Mode, mb: _Mode, ba: stats.Binned, bb: stats.Binned, ra: stats.Replicates,
           rb: stats.Replicates, grid: np.ndarray, sup_d: float, alpha: float, n_boot: int,
           rng: np.random.Generator) -> _Nulls:
    """Critical values and p-values of sup|D| under the permutation null (exact when the
    modes' units are exchangeable: module docstring) and the per-mode bootstrap null
    (holds with unequal n and unequal autocorrelation)."""
    t_null, exact = permutation_null(ba, bb, n_boot, rng)
    crit_perm = float(np.quantile(t_null, 1 - alpha, method="higher"))
    hits = np.count_nonzero(t_null >= sup_d - 1e-12)
    p_perm = float(hits / t_null.size if exact else (1 + hits) / (t_null.size + 1))
    ta, tb = bootstrap_units(ma, grid, ba), bootstrap_units(mb, grid, bb)
    qa = ra if ta is ba else stats.replicate(ta, n_boot, rng)
    qb = rb if tb is bb else stats.replicate(tb, n_boot, rng)
    t_boot, scale = bootstrap_null(ta, tb, qa, qb, alpha)
    crit_boot = scale * float(np.quantile(t_boot, 1 - alpha, method="higher"))
    p_boot = float((1 + np.count_nonzero(scale * t_boot >= sup_d - 1e-12)) / (t_boot.size + 1))
    return _Nulls(int(t_null.size), exact, crit_perm, p_perm, crit_boot, p_boot)


def _crossovers(regions: list[tuple[int, int, int]], diff: np.ndarray, grid: np.ndarray,
                better: dict[int, str], cdfs: dict[str, stats.Binned]) -> list[Crossover]:
    """Where the better mode changes: between two significant regions of opposite sign."""
    crossovers = []
    for (s1, _, e1), (s2, b2, _) in itertools.pairwise(regions):
        if s1 == s2:
            continue
        seg = np.sign(diff[e1 : b2 + 1])
        nonzero = seg[seg != 0]
        changes = int(np.count_nonzero(nonzero[:-1] != nonzero[1:]))
        x = float("nan")
        if changes == 1:  # one sign change of the estimate: a point estimate is meaningful
            k = e1 + int(np.flatnonzero(seg[:-1] != seg[1:])[0])
            d0, d1 = diff[k], diff[k + 1]
            x = float(grid[k] + (grid[k + 1] - grid[k]) * (d0 / (d0 - d1) if d0 != d1 else 0.5))
        lo_x, hi_x = float(grid[e1]), float(grid[b2])
        crossovers.append(
            Crossover(
                x=x,
                lo=lo_x,
                hi=hi_x,
                below=better[s1],
                above=better[s2],
                mass_below={n: (_interp(grid, c.cdf, x) if changes == 1 else float("nan"))
                            for n, c in cdfs.items()},
                ends={n: (_interp(grid, c.cdf, lo_x), _interp(grid, c.cdf, hi_x))
                      for n, c in cdfs.items()},
                sign_changes=changes,
            )
        )
    return crossovers


def _effects(sa: stats.Summary, sb: stats.Summary, qa: dict[str, np.ndarray],
             qb: dict[str, np.ndarray], alpha: float) -> dict[str, tuple[float, float, float]]:
    """Mean and median of b against a, % with a percentile interval of the replicates."""
    effects = {}
    for name in ("mean", "median"):
        est_a, est_b = sa.estimates[name][0], sb.estimates[name][0]
        est = _pct(est_b, est_a)
        with np.errstate(divide="ignore", invalid="ignore"):
            draws = 100.0 * (qb[name] - qa[name]) / qa[name]
        draws = draws[np.isfinite(draws)]
        lo, hi = np.quantile(draws, [alpha / 2, 1 - alpha / 2]) if draws.size else (np.nan, np.nan)
        effects[name] = (est, float(min(lo, est)), float(max(hi, est)))
    return effects


def _prob_lower(ba: stats.Binned, bb: stats.Binned) -> float:
    """P(a sample of a is lower than one of b), ties counted half, from the binned CDFs."""
    pa = np.diff(ba.cdf, prepend=0.0)
    pb = np.diff(bb.cdf, prepend=0.0)
    below_a = np.concatenate([[0.0], ba.cdf[:-1]])
    return float(np.sum(pb * (below_a + 0.5 * pa)))


def _change(a: tuple[stats.Binned, stats.Replicates], b: tuple[stats.Binned, stats.Replicates],
            grid: np.ndarray, p: float, alpha: float) -> tuple[float, float, float]:
    """b's change against a of the p-quantile, %, with its block-bootstrap percentile
    interval (each mode's own replicates, as the median's effect)."""
    (ba, ra), (bb, rb) = a, b
    est = _pct(float(stats.quantile_from_cdf(bb.cdf, grid, p)),
               float(stats.quantile_from_cdf(ba.cdf, grid, p)))
    da, db = stats.quantile_from_cdf(ra.cdf, grid, p), stats.quantile_from_cdf(rb.cdf, grid, p)
    with np.errstate(divide="ignore", invalid="ignore"):
        draws = 100.0 * (db - da) / da
    draws = draws[np.isfinite(draws)]
    if not (draws.size and math.isfinite(est)):
        return est, math.nan, math.nan
    lo, hi = np.quantile(draws, [alpha / 2, 1 - alpha / 2])
    return est, float(min(lo, est)), float(max(hi, est))


def tail_check(verdict: str, tails: dict[str, tuple[float, float, float]],
               names: tuple[str, str], lower_is_better: bool) -> str:
    """Keep "<mode> dominates" only where the worse tail agrees; else name the tail
    reversal (that tail significantly worse for the mode better in the body) or say the
    mode is better in the body only (its p99 (p1) estimate worse, not significantly).

    ``tails``: the change of ``names[1]`` against ``names[0]`` (%: est, lo, hi) of the
    worse tail's quantiles.

    >>> tail_check("multicast dominates", {"p99": (240.0, 150.0, 330.0)},
    ...            ("unicast", "multicast"), True)
    'tail reversal'
    >>> tail_check("multicast dominates", {"p99": (12.0, -5.0, 30.0)},
    ...            ("unicast", "multicast"), True)
    'multicast better in the body'
    >>> tail_check("multicast dominates", {"p99": (-10.0, -20.0, 1.0)},
    ...            ("unicast", "multicast"), True)
    'multicast dominates'
    """
    if not verdict.endswith(" dominates"):
        return verdict
    winner = verdict.removesuffix(" dominates")
    # the sign of b-vs-a's change that makes the tail worse for the winner
    worse_sign = 1.0 if (winner == names[1]) == lower_is_better else -1.0
    reversed_, worse = False, False
    for k, (est, lo, hi) in enumerate(tails.values()):
        if not math.isfinite(est):
            continue
        # the nearer tail's estimate (p99; p1): the farther one rests on a handful of
        # samples, so only its significant reversal counts
        worse |= k == 0 and worse_sign * est > 0
        bound = lo if worse_sign > 0 else -hi
        reversed_ |= math.isfinite(bound) and bound > 0
    if reversed_:
        return TAIL_REVERSAL
    return better_in_body(winner) if worse else verdict


def _pct(new: float, ref: float) -> float:
    return float(100.0 * (new - ref) / ref) if ref else float("nan")


def describe_single(
    sample: stats.Sample,
    *,
    alpha: float = stats.ALPHA,
    n_boot: int = stats.N_BOOT,
    rng: np.random.Generator | None = None,
    repetitions_as_units: bool = True,
    min_repetitions: int = stats.MIN_REPETITIONS_AS_UNITS,
) -> tuple[stats.Summary, np.ndarray, np.ndarray]:
    """Summary, grid and ECDF of a configuration that has no partner to compare with."""
    rng = rng if rng is not None else np.random.default_rng(20261121)
    grid = stats.make_grid([sample])
    binned = stats.bin_sample(sample, grid, repetitions_as_units=repetitions_as_units,
                              min_repetitions=min_repetitions)
    reps = stats.replicate(binned, n_boot, rng)
    return stats.summarize(sample, binned, reps, grid, alpha), grid, binned.cdf
