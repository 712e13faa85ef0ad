"""ECDFs, confidence bands and block-bootstrap intervals for autocorrelated series.

Why a binned block bootstrap: a latency series holds up to millions of autocorrelated
samples (one ping every ``latencyCount`` samples, queues in between), so resampling
single samples underestimates every variance, and resampling millions of values a few
hundred times is slow. The series is cut into blocks that never span two runs; each
block is reduced once to its counts on a grid of pooled quantiles (plus its sum), and a
bootstrap replicate is a multinomial draw of blocks, i.e. one matrix product
``weights @ counts``. Every ECDF, quantile and mean replicate follows from that product.

When a configuration has at least ``MIN_REPETITIONS_AS_UNITS`` repetitions, the runs
themselves are the resampled units (they are independent by construction) and no
stationarity assumption within a run is needed.

Block length: blocks treated as independent lose the covariance across their borders,
a relative variance bias of about ``2 S1 / (b S0)`` (see :func:`bias_block_length`);
``b`` is chosen so that this bias is at most ``BLOCK_BIAS``, never below ``n^(1/3)``,
widened if needed so that at most ``MAX_BLOCKS`` blocks exist (longer blocks only make
intervals more conservative) and narrowed so that every run keeps at least
``MIN_BLOCKS_PER_RUN`` blocks. Autocorrelations are computed on the binned ranks so that
outliers do not dominate them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.special import ndtri
from scipy.stats import t as sps_t

ALPHA = 0.05
N_BOOT = 499
MAX_BLOCKS = 500
MIN_REPETITIONS_AS_UNITS = 5
MIN_BLOCKS_PER_RUN = 4
BLOCK_BIAS = 0.1
GRID_BODY = 2048
GRID_TAIL = 256
QUANTILES = {"median": 0.5, "p90": 0.9, "p99": 0.99, "p99.9": 0.999}
STATS = ("mean", *QUANTILES)


@dataclass
class Sample:
    """One configuration's series: values concatenated run after run, in time order."""

    values: np.ndarray
    run_lengths: np.ndarray

    @classmethod
    def from_runs(cls, runs: list[np.ndarray]) -> Sample:
        clean = [np.asarray(r, dtype=np.float64) for r in runs]
        clean = [r[np.isfinite(r)] for r in clean]
        clean = [r for r in clean if r.size]
        if not clean:
            return cls(np.empty(0), np.empty(0, dtype=np.int64))
        return cls(np.concatenate(clean), np.array([r.size for r in clean], dtype=np.int64))

    @property
    def n(self) -> int:
        return int(self.values.size)


def make_grid(samples: list[Sample]) -> np.ndarray:
    """Evaluation grid: pooled quantiles, uniform in probability plus dense in both tails."""
    pooled = np.sort(np.concatenate([s.values for s in samples]))
    n = pooled.size
    tail = np.logspace(-2, -6, GRID_TAIL)
    levels = np.concatenate([np.linspace(0.0, 1.0, GRID_BODY + 1), tail, 1.0 - tail])
    idx = np.clip(np.ceil(levels * n).astype(np.int64) - 1, 0, n - 1)
    return np.unique(pooled[idx])


def autocorrelation(x: np.ndarray, max_lag: int) -> np.ndarray:
    """Sample autocorrelation at lags 1..max_lag (FFT, O(n log n))."""
    x = x.astype(np.float64) - x.mean()
    var = float(x @ x)
    if var == 0.0 or max_lag < 1:
        return np.zeros(max(max_lag, 0))
    size = 1 << int(np.ceil(np.log2(2 * x.size)))
    f = np.fft.rfft(x, size)
    return np.fft.irfft(f * np.conj(f), size)[1 : max_lag + 1] / var


def politis_white_m(acf: np.ndarray, n: int, k_n: int = 5) -> int:
    """Smallest lag m after which ``k_n`` consecutive autocorrelations are insignificant."""
    if acf.size < k_n:
        return 1
    small = np.abs(acf) < 2.0 * np.sqrt(np.log10(max(n, 10)) / n)
    run = np.convolve(small.astype(np.int64), np.ones(k_n, dtype=np.int64), mode="valid")
    hits = np.flatnonzero(run == k_n)
    return int(hits[0]) + 1 if hits.size else int(acf.size)


def bias_block_length(series: np.ndarray, tolerance: float = BLOCK_BIAS) -> float:
    """Block length at which non-overlapping blocks miss at most ``tolerance`` of the
    long-run variance of ``series``.

    Blocks treated as independent lose the covariance across block borders, a relative
    bias of about ``2 S1 / (b S0)`` with ``S0 = 1 + 2 sum rho_k`` and ``S1 = sum k rho_k``
    (both with a flat-top lag window at twice m, on the binned ranks). ``m`` is Politis &
    White's lag, or the last lag whose autocorrelation is still significant if that is
    later (Bartlett's variance, Bonferroni over all lags at 1%): latency series can be
    periodic (pings cycle through the subscribers), and their recurring correlation
    must not be cut off.
    """
    n = series.size
    if n < 16:
        return 1.0
    acf = autocorrelation(series, min(n // 4, 5000))
    m = politis_white_m(acf, n)
    bartlett = np.sqrt((1.0 + 2.0 * float(np.sum(acf[:m] ** 2))) / n)
    z = float(ndtri(1.0 - 0.005 / acf.size)) if acf.size else np.inf
    late = np.flatnonzero(np.abs(acf) >= z * bartlett)
    if late.size:
        m = max(m, int(late[-1]) + 1)
    lags = np.arange(1, min(2 * m, acf.size) + 1)
    w = np.clip(2.0 * (1.0 - lags / (2.0 * m)), 0.0, 1.0)  # flat-top (trapezoid) window
    rho = acf[: lags.size] * w
    s0 = max(1.0 + 2.0 * float(rho.sum()), 1e-3)
    s1 = max(float((lags * rho).sum()), 0.0)
    return 2.0 * s1 / (tolerance * s0)


def block_length(binned_idx: np.ndarray, run_lengths: np.ndarray) -> int:
    """Block length for a sample: see the module docstring."""
    return clamp_block_length(needed_block_length(binned_idx, run_lengths), run_lengths)


def needed_block_length(binned_idx: np.ndarray, run_lengths: np.ndarray) -> float:
    """:func:`bias_block_length` at ``BLOCK_BIAS``, the longest over the runs."""
    return max(bias_block_length(binned_idx[s:e]) for s, e in _bounds(run_lengths))


def clamp_block_length(need: float, run_lengths: np.ndarray) -> int:
    """``need`` raised to ``n^(1/3)`` and to ``n / MAX_BLOCKS``, cut to leave every run
    ``MIN_BLOCKS_PER_RUN`` blocks."""
    shortest = int(run_lengths.min())
    b = max(int(np.ceil(np.mean(run_lengths) ** (1 / 3))), int(np.ceil(need)))
    b = max(b, int(np.ceil(run_lengths.sum() / MAX_BLOCKS)))
    # keep at least MIN_BLOCKS_PER_RUN blocks in every run, or the test has nothing to permute
    return int(max(1, min(b, shortest // MIN_BLOCKS_PER_RUN)))


@dataclass
class Binned:
    """A sample reduced to per-unit counts on a grid (the bootstrap's input)."""

    n: int
    counts: np.ndarray  # (units, grid) float64
    sizes: np.ndarray  # (units,)
    sums: np.ndarray  # (units,)
    unit: str  # "blocks" or "repetitions"
    block_len: int
    cdf: np.ndarray  # point ECDF on the grid
    # block length the BLOCK_BIAS rule asked for before clamping (NaN when not computed)
    need: float = float("nan")


def bin_sample(
    sample: Sample,
    grid: np.ndarray,
    *,
    block_len: int | None = None,
    repetitions_as_units: bool = True,
    min_repetitions: int = MIN_REPETITIONS_AS_UNITS,
    idx: np.ndarray | None = None,
) -> Binned:
    """Cut ``sample`` into resampling units and count each unit's values on ``grid``.

    ``repetitions_as_units=False`` forces blocks inside each segment (for segments that
    are not independent, e.g. the subscribers of one run); ``min_repetitions`` lowers the
    number of segments from which they are the units (the per-subscriber series use 2:
    their runs are clusters, summarised with t intervals on units − 1 df); ``idx``:
    :func:`grid_index` of the sample, when binning it again with other units.
    """
    g = grid.size
    idx = grid_index(sample, grid) if idx is None else idx
    reps = sample.run_lengths.size
    need = float("nan")
    if repetitions_as_units and reps >= max(min_repetitions, 2):
        unit_name, b = "repetitions", 0
        unit = np.repeat(np.arange(reps), sample.run_lengths)
    else:
        unit_name = "blocks"
        if block_len is None:
            need = needed_block_length(idx, sample.run_lengths)
            b = clamp_block_length(need, sample.run_lengths)
        else:
            b = block_len
        unit = _block_ids(sample.run_lengths, b)
    n_units = int(unit[-1]) + 1
    counts = np.bincount(unit * g + idx, minlength=n_units * g).reshape(n_units, g)
    sizes = np.bincount(unit, minlength=n_units).astype(np.float64)
    sums = np.bincount(unit, weights=sample.values, minlength=n_units)
    cdf = np.cumsum(counts.sum(axis=0)) / sample.n
    return Binned(sample.n, counts.astype(np.float64), sizes, sums, unit_name, b, cdf, need)


def grid_index(sample: Sample, grid: np.ndarray) -> np.ndarray:
    """Index of each value's grid cell (the first grid point at or above it)."""
    idx = np.searchsorted(grid, sample.values, side="left")
    np.minimum(idx, grid.size - 1, out=idx)
    return idx


def _bounds(lengths: np.ndarray) -> list[tuple[int, int]]:
    ends = np.cumsum(lengths)
    return list(zip((ends - lengths).tolist(), ends.tolist(), strict=True))


def _block_ids(lengths: np.ndarray, b: int) -> np.ndarray:
    """Non-overlapping blocks of length ``b`` inside each run; a short tail joins its neighbour."""
    parts, offset = [], 0
    for length in lengths.tolist():
        local = np.arange(length) // b
        full = length // b
        if full >= 1 and length % b < b / 2:
            np.minimum(local, full - 1, out=local)
        parts.append(local + offset)
        offset += int(local[-1]) + 1
    return np.concatenate(parts)


@dataclass
class Replicates:
    """Bootstrap replicates of one sample: ECDFs on the grid and means."""

    cdf: np.ndarray  # (B, grid)
    mean: np.ndarray  # (B,)


def draw_weights(n_units: int, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    return rng.multinomial(n_units, np.full(n_units, 1.0 / n_units), size=n_boot).astype(
        np.float64
    )


def replicate(binned: Binned, n_boot: int, rng: np.random.Generator) -> Replicates:
    w = draw_weights(binned.sizes.size, n_boot, rng)
    total = w @ binned.sizes
    cdf = np.cumsum(w @ binned.counts, axis=1)
    cdf /= total[:, None]
    return Replicates(cdf=cdf, mean=(w @ binned.sums) / total)


def quantile_from_cdf(cdf: np.ndarray, grid: np.ndarray, p: float) -> np.ndarray:
    """Quantile ``p`` of each row's ECDF on ``grid``, linear inside the grid cell."""
    cdf2 = np.atleast_2d(cdf)
    k = np.argmax(cdf2 >= p - 1e-12, axis=1)
    rows = np.arange(cdf2.shape[0])
    hi_f = cdf2[rows, k]
    lo_f = np.where(k > 0, cdf2[rows, np.maximum(k - 1, 0)], 0.0)
    lo_x = np.where(k > 0, grid[np.maximum(k - 1, 0)], grid[0])
    hi_x = grid[k]
    frac = np.where(hi_f > lo_f, (p - lo_f) / np.where(hi_f > lo_f, hi_f - lo_f, 1.0), 1.0)
    out = lo_x + np.clip(frac, 0.0, 1.0) * (hi_x - lo_x)
    return out if np.ndim(cdf) == 2 else out[0]


@dataclass
class Summary:
    """Point estimates and percentile-bootstrap intervals of one configuration."""

    n: int
    n_eff: float
    unit: str
    units: int
    block_len: int
    dkw_eps: float
    estimates: dict[str, tuple[float, float, float]] = field(default_factory=dict)


def effective_n(binned: Binned, reps: Replicates) -> float:
    """n divided by the variance inflation of the ECDF (bootstrap vs iid), median over the body."""
    f = binned.cdf
    body = (f > 0.05) & (f < 0.95)
    if not body.any() or binned.n < 2:
        return float(binned.n)
    boot_var = reps.cdf[:, body].var(axis=0, ddof=1)
    iid_var = f[body] * (1 - f[body]) / binned.n
    vif = float(np.median(boot_var / iid_var))
    return float(binned.n / max(vif, 1.0))


def dkw_epsilon(n_eff: float, alpha: float = ALPHA) -> float:
    """Half-width of the simultaneous DKW band: P(sup|F_n - F| > eps) <= alpha."""
    return float(np.sqrt(np.log(2.0 / alpha) / (2.0 * max(n_eff, 1.0))))


def unit_t_intervals(
    binned: Binned, grid: np.ndarray, estimates: dict[str, float], alpha: float = ALPHA
) -> dict[str, tuple[float, float]]:
    """Intervals with the units (runs) as clusters and Student's t on ``units − 1`` df.

    A percentile bootstrap over 5–10 runs under-covers (86% at 5 runs, 90% at 10 for a
    nominal 95%): its variance lacks the factor k/(k − 1) and its quantiles assume a normal,
    not a t, reference. Here the pooled mean is a ratio estimator over the units, with the
    usual linearised (cluster) variance; a quantile's interval is Woodruff's: the t interval
    of the pooled ECDF at the estimated quantile, mapped back through the pooled ECDF.
    Hand-written (a few lines): scipy has the t distribution but no cluster ratio or
    Woodruff interval.
    """
    k = int(binned.sizes.size)
    total = float(binned.sizes.sum())
    t_q = float(sps_t.ppf(1.0 - alpha / 2.0, max(k - 1, 1)))
    scale = np.sqrt(k / max(k - 1, 1)) / total
    out = {}
    mean = estimates["mean"]
    e = binned.sums - mean * binned.sizes
    se = float(scale * np.sqrt(np.sum(e**2)))
    out["mean"] = (mean - t_q * se, mean + t_q * se)
    cum = np.cumsum(binned.counts, axis=1)
    for name, p in QUANTILES.items():
        i = int(np.clip(np.searchsorted(grid, estimates[name], side="right") - 1, 0,
                        grid.size - 1))
        e = cum[:, i] - binned.cdf[i] * binned.sizes
        se_f = float(scale * np.sqrt(np.sum(e**2)))
        levels = np.clip([p - t_q * se_f, p + t_q * se_f], 1e-12, 1.0)
        lo, hi = (float(quantile_from_cdf(binned.cdf, grid, float(q))) for q in levels)
        out[name] = (lo, hi)
    return out


def summarize(
    sample: Sample, binned: Binned, reps: Replicates, grid: np.ndarray, alpha: float = ALPHA
) -> Summary:
    """Mean and quantiles (exact point estimates) with 1 − alpha intervals: block-bootstrap
    percentile intervals over blocks; over runs (few units), cluster t intervals
    (:func:`unit_t_intervals`)."""
    n_eff = effective_n(binned, reps)
    out = Summary(
        n=sample.n,
        n_eff=n_eff,
        unit=binned.unit,
        units=int(binned.sizes.size),
        block_len=binned.block_len,
        dkw_eps=dkw_epsilon(n_eff, alpha),
    )
    lo, hi = alpha / 2, 1 - alpha / 2
    point_q = np.quantile(sample.values, list(QUANTILES.values()))
    points = {"mean": float(sample.values.mean())}
    points.update({name: float(est) for name, est in zip(QUANTILES, point_q, strict=True)})
    if binned.unit == "repetitions":
        for name, (q_lo, q_hi) in unit_t_intervals(binned, grid, points, alpha).items():
            est = points[name]
            out.estimates[name] = (est, float(min(q_lo, est)), float(max(q_hi, est)))
        return out
    m_lo, m_hi = np.quantile(reps.mean, [lo, hi])
    out.estimates["mean"] = (points["mean"], float(m_lo), float(m_hi))
    for name, p in QUANTILES.items():
        est = points[name]
        q_lo, q_hi = np.quantile(quantile_from_cdf(reps.cdf, grid, p), [lo, hi])
        out.estimates[name] = (est, float(min(q_lo, est)), float(max(q_hi, est)))
    return out


def quantile_replicates(reps: Replicates, grid: np.ndarray) -> dict[str, np.ndarray]:
    """Replicates of every summary statistic (for effect-size intervals)."""
    out = {"mean": reps.mean}
    for name, p in QUANTILES.items():
        out[name] = quantile_from_cdf(reps.cdf, grid, p)
    return out
