"""Known answers for the dominance decision.

Synthetic series are AR(1) on the log scale, autocorrelated like real latency series.
Every draw is seeded, so each run of the suite checks the same cases.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binomtest, norm

from analysis import dominance, stats
from analysis.synthetic import ar1

TEST_BOOT = 199  # bootstrap replicates: enough for the nominal-rate checks, fast for CI


def lognormal_series(n: int, mu: float, sd: float, phi: float, rng, runs: int = 1):
    return stats.Sample.from_runs([np.exp(mu + sd * ar1(n, phi, rng)) for _ in range(runs)])


def compare(a, b, *, lower_is_better=True, seed=1, **kw):
    return dominance.compare(a, b, metric="latency" if lower_is_better else "throughput",
                             lower_is_better=lower_is_better, n_boot=TEST_BOOT,
                             rng=np.random.default_rng(seed), ks=False, **kw)


@pytest.mark.parametrize("phi", [0.0, 0.7])
def test_shifted_latency_is_dominated(phi):
    rng = np.random.default_rng(10)
    uni = lognormal_series(4000, np.log(500), 0.4, phi, rng)
    multi = lognormal_series(4000, np.log(500) - 0.15, 0.4, phi, rng)  # 14% faster
    res = compare(uni, multi)
    assert res.verdict == "multicast dominates"
    assert res.crossovers == []
    assert res.p_value <= 0.05
    _, lo, hi = res.effects["median"]
    assert lo <= 100 * (np.exp(-0.15) - 1) <= hi
    assert hi < 0


def test_direction_follows_the_metric():
    """Larger values: worse for latency, better for throughput."""
    rng = np.random.default_rng(11)
    low = lognormal_series(3000, 0.0, 0.3, 0.5, rng)
    high = lognormal_series(3000, 0.2, 0.3, 0.5, rng)
    assert compare(low, high, lower_is_better=True).verdict == "unicast dominates"
    assert compare(low, high, lower_is_better=False).verdict == "multicast dominates"
    assert compare(high, low, lower_is_better=False).verdict == "unicast dominates"


def test_crossing_at_the_right_point():
    """Same location, different spread: the ECDFs cross where both log-normals have equal
    CDF, x* = exp(mu + 0.0525 / 0.55); the estimate's interval must contain it."""
    rng = np.random.default_rng(12)
    mu = np.log(600.0)
    uni = lognormal_series(6000, mu, 0.35, 0.6, rng)
    multi = lognormal_series(6000, mu - 0.15, 0.9, 0.6, rng)
    res = compare(uni, multi)
    assert res.verdict == "crossing"
    assert len(res.crossovers) == 1
    c = res.crossovers[0]
    t = 0.15 / (0.9 - 0.35)
    x_true = np.exp(mu + t * 0.35)
    assert c.lo <= x_true <= c.hi, (c, x_true)
    assert abs(np.log(c.x / x_true)) < 0.1
    assert (c.below, c.above) == ("multicast", "unicast")
    # mass of unicast below the crossover: Phi(t) for the true curves
    assert c.mass_below["unicast"] == pytest.approx(norm.cdf(t), abs=0.05)
    assert res.area["multicast"] > 0 and res.area["unicast"] > 0


def test_identical_distributions_no_difference():
    rng = np.random.default_rng(13)
    a = lognormal_series(5000, 6.0, 0.5, 0.7, rng)
    b = lognormal_series(5000, 6.0, 0.5, 0.7, rng)
    res = compare(a, b)
    assert res.verdict == dominance.NO_DIFFERENCE
    assert res.p_value > 0.05
    assert res.effects["median"][1] < 0 < res.effects["median"][2]


@pytest.mark.parametrize(
    ("n", "phi", "runs", "draws"),
    [
        (1000, 0.0, 1, 200),  # independent samples
        (2000, 0.7, 1, 200),  # autocorrelated series, one run per mode
        (300, 0.5, 5, 120),  # five repetitions per mode: runs are the units
        (30, 0.5, 1, 200),  # a 30-second throughput series
    ],
)
def test_false_verdicts_at_most_nominal_rate(n, phi, runs, draws):
    """Identical distributions: "dominates" or "crossing" at most at rate alpha.

    One-sided binomial test of the observed rate against alpha = 0.05 at level 0.01.
    """
    rng = np.random.default_rng(100 + runs + int(10 * phi))
    wrong = dominated = 0
    for i in range(draws):
        a = lognormal_series(n, 0.0, 0.5, phi, rng, runs)
        b = lognormal_series(n, 0.0, 0.5, phi, rng, runs)
        res = compare(a, b, seed=i)
        wrong += res.verdict != dominance.NO_DIFFERENCE
        dominated += res.verdict.endswith("dominates")
    assert binomtest(wrong, draws, 0.05, alternative="greater").pvalue > 0.01, (wrong, draws)
    assert dominated <= wrong


def test_false_verdicts_with_unequal_n_and_autocorrelation():
    """Unicast 25,000 samples with AR(1) φ = 0.995, multicast 100,000
    with φ = 0.9, identical marginal distributions (the slower, burstier mode has fewer
    samples). Exchanging blocks between the modes pools their variances (Chung & Romano):
    the block-permutation test alone called a difference in 74 of these 200 draws (37%).
    With the per-mode block bootstrap as well, false verdicts must stay within 7% (at most
    14 of 200: the observed rate, bounded as in test_analysis_modes' MAX_FALSE — the
    binomial upper bound for a true 5% at 200 draws; measured: 10 of 200)."""
    rng = np.random.default_rng(215)
    draws, wrong = 200, 0
    for i in range(draws):
        uni = lognormal_series(25_000, np.log(500.0), 0.35, 0.995, rng)
        multi = lognormal_series(100_000, np.log(500.0), 0.35, 0.9, rng)
        wrong += compare(uni, multi, seed=i).verdict != dominance.NO_DIFFERENCE
    assert wrong <= 0.07 * draws, (wrong, draws)


def test_ecdf_matches_scipy():
    from scipy.stats import ecdf

    rng = np.random.default_rng(14)
    x = rng.exponential(size=777)
    sample = stats.Sample.from_runs([x])
    grid = stats.make_grid([sample])
    binned = stats.bin_sample(sample, grid)
    assert np.allclose(binned.cdf, ecdf(x).cdf.evaluate(grid))
    assert binned.counts.sum() == x.size


def test_effective_n_and_band():
    rng = np.random.default_rng(15)
    iid = stats.Sample.from_runs([rng.standard_normal(5000)])
    corr = stats.Sample.from_runs([ar1(5000, 0.8, rng)])
    s_iid, _, _ = dominance.describe_single(iid, n_boot=TEST_BOOT, rng=rng)
    s_corr, _, _ = dominance.describe_single(corr, n_boot=TEST_BOOT, rng=rng)
    assert s_iid.n_eff > 0.6 * 5000
    assert s_corr.n_eff < 0.4 * 5000
    assert s_corr.block_len > s_iid.block_len
    assert s_corr.dkw_eps > s_iid.dkw_eps
    assert stats.dkw_epsilon(1000, 0.05) == pytest.approx(np.sqrt(np.log(40) / 2000))


def test_median_interval_coverage_on_autocorrelated_series():
    """The block-bootstrap 95% interval of the median covers the truth (0) in most draws;
    intervals that ignored the autocorrelation would cover far less often."""
    rng = np.random.default_rng(16)
    covered = 0
    draws = 60
    for _ in range(draws):
        s = stats.Sample.from_runs([ar1(3000, 0.8, rng)])
        summary, _, _ = dominance.describe_single(s, n_boot=TEST_BOOT, rng=rng)
        _, lo, hi = summary.estimates["median"]
        covered += lo <= 0.0 <= hi
    assert covered / draws >= 0.85


def test_exact_permutation_with_few_units():
    """Four blocks per mode: every split is enumerated and the test stays exact."""
    rng = np.random.default_rng(17)
    a = stats.Sample.from_runs([rng.standard_normal(40)])
    b = stats.Sample.from_runs([rng.standard_normal(40) + 5.0])
    grid = stats.make_grid([a, b])
    ba = stats.bin_sample(a, grid, block_len=10)
    bb = stats.bin_sample(b, grid, block_len=10)
    t, exact = dominance.permutation_null(ba, bb, 199, rng)
    assert exact and t.size == 70  # C(8, 4)
    res = compare(a, b)
    assert res.verdict == "unicast dominates"
    assert res.p_value <= 2 / 70 + 1e-9  # the observed split and its mirror image


def test_every_crossover_is_reported_with_its_interval_and_ecdf_ends():
    """Two true crossings (multicast: a narrower body plus 15% slow
    bursts against a normal unicast, on the log scale): both are reported, each true
    crossing lies in its interval, and each mode's ECDF at the interval's ends brackets its
    value at the crossing. (Before: one point from the last sign change, mass without
    uncertainty, only the first crossover in the sentence.)"""
    from scipy.optimize import brentq

    rng = np.random.default_rng(31)
    n = 20000
    u = rng.standard_normal(n)
    burst = rng.random(n) < 0.15
    m = np.where(burst, rng.normal(2.5, 0.5, n), rng.normal(-0.3, 0.5, n))

    def f_u(x):
        return norm.cdf(x)

    def f_m(x):
        return 0.85 * norm.cdf(x, -0.3, 0.5) + 0.15 * norm.cdf(x, 2.5, 0.5)

    # a third true crossing at x = 4.59 has |ΔF| < 1e-5 (beyond the 99.99th percentile):
    # no test can see it, so the known answer is the two crossings inside [-4, 4]
    xs = np.linspace(-4, 4, 2001)
    d = f_u(xs) - f_m(xs)
    roots = [brentq(lambda x: f_u(x) - f_m(x), xs[i], xs[i + 1])
             for i in np.flatnonzero(np.sign(d[:-1]) != np.sign(d[1:]))]
    assert len(roots) == 2, roots
    res = compare(stats.Sample.from_runs([np.exp(u)]), stats.Sample.from_runs([np.exp(m)]))
    assert res.verdict == dominance.CROSSING
    assert len(res.crossovers) == 2, res.crossovers
    for c, root in zip(res.crossovers, roots, strict=True):
        x_true = float(np.exp(root))
        assert c.lo <= x_true <= c.hi, (c, x_true)
        for mode, f in (("unicast", f_u), ("multicast", f_m)):
            lo_f, hi_f = c.ends[mode]
            assert lo_f - 0.02 <= f(root) <= hi_f + 0.02, (mode, c.ends, f(root))
    first, second = res.crossovers
    assert (first.below, first.above) == ("unicast", "multicast")
    assert (second.below, second.above) == ("multicast", "unicast")
    from analysis.verdicts import crossover_phrase

    text = "; ".join(crossover_phrase(c, "µs") for c in res.crossovers)
    assert text.count("between") == 2


def test_no_crossover_point_from_a_noisy_sign_change():
    """Equal distributions on [1, 2], multicast lower below 1 and higher above 2: the true
    ΔF is 0 on the whole stretch, so the estimate changes sign many times there. The
    crossover is reported as the interval covering the stretch, with no point (the old
    rule took the last sign change of the noise)."""
    rng = np.random.default_rng(32)
    n = 20000

    def draw(low_half: bool, high_half: bool) -> np.ndarray:
        part = rng.choice(3, size=n, p=[0.3, 0.4, 0.3])
        x = rng.random(n)
        x = np.where((part == 0) & low_half, 0.5 * x, x)
        x = np.where((part == 2) & high_half, 0.5 + 0.5 * x, x)
        return 1.0 + part + x  # values in [1, 4): latency-like, positive

    res = compare(stats.Sample.from_runs([draw(False, False)]),
                  stats.Sample.from_runs([draw(True, True)]))
    assert res.verdict == dominance.CROSSING
    assert len(res.crossovers) == 1, res.crossovers
    c = res.crossovers[0]
    assert c.lo <= 2.0 and c.hi >= 3.0, c  # the equal stretch [2, 3] lies inside
    assert c.sign_changes > 1 and not c.located and np.isnan(c.x), c
    assert c.ends["unicast"][0] == pytest.approx(0.3 * (c.lo - 1.0), abs=0.03)


@pytest.mark.parametrize("runs", [5, 10])
def test_interval_coverage_with_runs_as_units(runs):
    """With runs as the units (≥ 5 per configuration) the mean and
    median intervals are cluster t intervals (Woodruff for the median), not a percentile
    bootstrap over 5–10 runs (which covered 86% and 90%). Runs share an offset of SD 0.1
    on the log scale; the target is the mixture over runs (median 1, log-symmetric)."""
    rng = np.random.default_rng(40 + runs)
    sd, run_sd, draws = 0.35, 0.1, 300
    true = {"median": 1.0, "mean": float(np.exp((sd**2 + run_sd**2) / 2))}
    hits = dict.fromkeys(true, 0)
    for _ in range(draws):
        s = stats.Sample.from_runs([np.exp(rng.normal(0, run_sd) + sd * ar1(300, 0.5, rng))
                                    for _ in range(runs)])
        summary, _, _ = dominance.describe_single(s, n_boot=99, rng=rng)
        assert summary.unit == "repetitions"
        for name, value in true.items():
            _, lo, hi = summary.estimates[name]
            hits[name] += lo <= value <= hi
    for name, h in hits.items():
        assert 0.92 <= h / draws <= 0.98, (name, h, draws)


@pytest.mark.parametrize("runs", [5, 10])
def test_per_subscriber_intervals_treat_runs_as_clusters(runs):
    """10 subscribers per run share the run's conditions (a run effect
    of SD 0.1 on the log scale, 60 autocorrelated seconds each). With runs as clusters
    (analyse.py's per-subscriber summary) the 95% interval of the mean covers 92–98%;
    resampling the subscribers' blocks as if independent covered 26%."""
    rng = np.random.default_rng(60 + runs)
    sd, run_sd, draws = 0.2, 0.1, 300
    true = float(np.exp((sd**2 + run_sd**2) / 2)) * 1000.0
    hits = 0
    for _ in range(draws):
        per_run = []
        for _ in range(runs):
            offset = rng.normal(0, run_sd)
            per_run.append(np.concatenate([1000.0 * np.exp(offset + sd * ar1(60, 0.5, rng))
                                           for _ in range(10)]))
        summary, _, _ = dominance.describe_single(stats.Sample.from_runs(per_run), n_boot=99,
                                                  rng=rng, min_repetitions=2)
        assert summary.unit == "repetitions" and summary.units == runs
        _, lo, hi = summary.estimates["mean"]
        hits += lo <= true <= hi
    assert 0.92 <= hits / draws <= 0.98, (hits, draws)


def test_dominates_only_where_the_tails_agree(tmp_path):
    """Known answer: multicast's median latency ~18% lower, its p99 ~3× higher (the
    synthetic "crossing" design: a faster body, a heavier tail), five runs per mode. The
    verdicts about the modes see both (median: multicast better; p99: unicast better); the
    sup test alone sees only the body ("multicast dominates", before the tail check), which
    first-order dominance cannot be when the tails go the other way."""
    from analysis.analyse import analyse
    from analysis.load import load_campaign
    from analysis.synthetic import write_campaign
    from analysis.verdicts import verdict_table

    camp = write_campaign(tmp_path / "c", counts=(10,), designs=("crossing",), repetitions=5,
                          seconds=60, pings_per_s=10, seed=1)
    analysis = analyse(load_campaign(camp), n_boot=199)
    pair = analysis.pairs[0]
    assert pair.verdicts["latency"].outcome == "multicast better"
    assert pair.tails["latency"].outcome == "unicast better"
    comp = pair.comparisons["latency"]
    assert comp.verdict == dominance.TAIL_REVERSAL and comp.body_better == "multicast"
    est, lo, _ = comp.tails["p99"]
    assert est > 100 and lo > 0  # multicast's p99 more than 2× unicast's, significantly
    cell = verdict_table(analysis).iloc[0]["latency test"]
    assert "dominates" not in cell.replace("neither dominates", "")
    assert "tail reversal: multicast better in the body, unicast in the tail (p99 +" in cell
