"""Known answers for the verdicts about the modes (analysis/modes.py): runs as the unit.

The failing baselines (the earlier statistics, measured by simulation): identical modes
with a per-run log offset of SD 0.05 gave 24% false verdicts with one run per mode and 18%
with 3 runs pooled as blocks; 6 counts × 2 metrics at α = 0.05 each gave a false verdict
in 46% of tables. Here every false-verdict rate must stay within 7% (the binomial upper
bound for 5% at 200 draws), and t intervals over 5 and 10 runs must cover 92–98% of the
time.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.signal import lfilter

from analysis import dominance, modes, stats

DRAWS = 200
MAX_FALSE = 0.07


def series(n: int, phi: float, rng: np.random.Generator, offset: float = 0.0) -> np.ndarray:
    """Latency-like: exp of a stationary AR(1) with log-SD 0.35 around log(500 µs)."""
    e = rng.standard_normal(n) * math.sqrt(1 - phi**2)
    e[0] = rng.standard_normal()
    return np.exp(math.log(500.0) + offset + 0.35 * lfilter([1.0], [1.0, -phi], e))


def mode_sample(runs: int, n: int, phi: float, run_sd: float, rng: np.random.Generator,
                shift: float = 0.0) -> stats.Sample:
    return stats.Sample.from_runs(
        [series(n, phi, rng, shift + rng.normal(0.0, run_sd)) for _ in range(runs)])


def verdict(u: stats.Sample, m: stats.Sample) -> modes.ModeVerdict:
    v = modes.judge({"unicast": u, "multicast": m}, metric="latency")
    modes.decide([v], {"latency": True})
    return v


def false_verdicts(seed: int, unicast: tuple, multicast: tuple) -> int:
    """Draws of identical modes (``mode_sample`` arguments per mode) that name a winner."""
    rng = np.random.default_rng(seed)
    return sum(verdict(mode_sample(*unicast, rng), mode_sample(*multicast, rng)).winner
               is not None for _ in range(DRAWS))


@pytest.mark.parametrize("runs", [3, 5])
def test_run_effects_do_not_make_verdicts(runs: int) -> None:
    """Identical modes, a run effect of SD 0.05: a mode is called better at most 7% of the
    time (the pooled-blocks test called one in 18% with 3 runs)."""
    wrong = false_verdicts(100 + runs, (runs, 2000, 0.9, 0.05), (runs, 2000, 0.9, 0.05))
    assert wrong / DRAWS <= MAX_FALSE, wrong


def test_the_within_run_test_is_fooled_by_run_effects() -> None:
    """The failing baseline, kept visible: the ECDF test on 3 pooled runs per mode calls a
    dominance far more often than α when runs differ (so it is labelled conditional)."""
    rng = np.random.default_rng(7)
    draws = 40
    wrong = 0
    for _ in range(draws):
        u = mode_sample(3, 2000, 0.9, 0.05, rng)
        m = mode_sample(3, 2000, 0.9, 0.05, rng)
        wrong += dominance.compare(u, m, metric="latency", lower_is_better=True, n_boot=199,
                                   rng=rng, ks=False).verdict != dominance.NO_DIFFERENCE
    assert wrong / draws > 0.12, wrong


def test_unequal_n_and_autocorrelation() -> None:
    """Unicast 3 runs of 2,500 samples with φ = 0.995, multicast 3 runs of 10,000 with
    φ = 0.9, identical distributions (the pooled permutation test: 37-42% false)."""
    wrong = false_verdicts(11, (3, 2500, 0.995, 0.05), (3, 10000, 0.9, 0.05))
    assert wrong / DRAWS <= MAX_FALSE, wrong


def test_strong_autocorrelation() -> None:
    wrong = false_verdicts(12, (5, 5000, 0.99, 0.0), (5, 5000, 0.99, 0.0))
    assert wrong / DRAWS <= MAX_FALSE, wrong


def test_family_wise_error_over_a_12_cell_table() -> None:
    """6 counts × 2 metrics, nothing different: a table with any false verdict at most 7%
    of the time (46% without a correction)."""
    rng = np.random.default_rng(13)
    bad_tables = 0
    for _ in range(DRAWS):
        cells = []
        for _ in range(12):
            u = mode_sample(3, 300, 0.6, 0.05, rng)
            m = mode_sample(3, 300, 0.6, 0.05, rng)
            cells.append(modes.judge({"unicast": u, "multicast": m}, metric="latency"))
        modes.decide(cells, {"latency": True})
        assert all(c.family == 12 for c in cells)
        bad_tables += any(c.winner for c in cells)
    assert bad_tables / DRAWS <= MAX_FALSE, bad_tables


@pytest.mark.parametrize("runs", [5, 10])
def test_interval_coverage(runs: int) -> None:
    """The t interval of multicast's change covers the true change (here +10%) 92-98% of
    the time at 5 and 10 runs per mode (the percentile bootstrap: 86% and 90%)."""
    rng = np.random.default_rng(200 + runs)
    true = 100.0 * math.expm1(math.log(1.10))
    draws = 400
    hits = 0
    for _ in range(draws):
        v = verdict(mode_sample(runs, 400, 0.5, 0.05, rng),
                    mode_sample(runs, 400, 0.5, 0.05, rng, shift=math.log(1.10)))
        hits += v.change[1] <= true <= v.change[2]
    assert 0.92 <= hits / draws <= 0.98, hits


def test_three_outcomes() -> None:
    rng = np.random.default_rng(3)
    equal = verdict(mode_sample(10, 3000, 0.5, 0.005, rng), mode_sample(10, 3000, 0.5, 0.005, rng))
    assert equal.outcome == modes.EQUAL, equal
    faster = verdict(mode_sample(3, 3000, 0.5, 0.02, rng),
                     mode_sample(3, 3000, 0.5, 0.02, rng, shift=math.log(0.7)))
    assert faster.outcome == "multicast better" and faster.change[2] < 0, faster
    # latency: lower is better; throughput: higher is better — the same change flips winner
    v = modes.judge({"unicast": mode_sample(3, 3000, 0.5, 0.02, rng),
                     "multicast": mode_sample(3, 3000, 0.5, 0.02, rng, shift=math.log(0.7))},
                    metric="throughput")
    modes.decide([v], {"throughput": False})
    assert v.outcome == "unicast better"
    noisy = verdict(mode_sample(2, 3000, 0.5, 0.3, rng), mode_sample(2, 3000, 0.5, 0.3, rng))
    assert noisy.outcome == modes.UNDECIDED and "neither" in noisy.reason


def test_one_run_per_mode_is_undecided_whatever_the_runs_say() -> None:
    rng = np.random.default_rng(5)
    v = verdict(mode_sample(1, 3000, 0.5, 0.0, rng),
                mode_sample(1, 3000, 0.5, 0.0, rng, shift=math.log(0.5)))
    assert v.outcome == modes.UNDECIDED and not v.testable and v.family == 0
    assert "≥ 2 runs per mode" in v.reason
    assert v.change[0] == pytest.approx(-50.0, abs=5.0)  # the point estimate is still shown


def test_holm_matches_its_definition() -> None:
    assert modes.holm([0.01, 0.04, 0.03]) == [0.03, 0.06, 0.06]
    assert modes.holm([0.5, 0.001]) == [0.5, 0.002]
    assert modes.holm([]) == []


def test_testbed_bound_cells_leave_the_family() -> None:
    rng = np.random.default_rng(9)
    a = modes.judge({"unicast": mode_sample(3, 500, 0.5, 0.0, rng),
                     "multicast": mode_sample(3, 500, 0.5, 0.0, rng, shift=-1.0)},
                    metric="latency")
    b = modes.judge({"unicast": mode_sample(3, 500, 0.5, 0.0, rng),
                     "multicast": mode_sample(3, 500, 0.5, 0.0, rng)}, metric="latency")
    modes.mark_testbed_bound(a, ["h1: timer p99 12 ms"])
    modes.decide([a, b], {"latency": True})
    assert a.outcome == modes.TESTBED_BOUND and a.winner is None
    assert b.family == 1


def test_tail_reversal_is_reported(tmp_path) -> None:
    """Multicast's median 20% lower but its bursts 10× slower (1% of samples): the median
    verdict says multicast is better, the p99 comparison says unicast, and the sentence
    names the tail reversal (the dominance test called this 'multicast dominates')."""
    from analysis.analyse import Pair
    from analysis.verdicts import sentence

    rng = np.random.default_rng(21)

    def bursty(n: int) -> np.ndarray:
        x = series(n, 0.5, rng, math.log(0.8))
        burst = rng.random(n) < 0.02
        x[burst] *= 10.0
        return x

    u = stats.Sample.from_runs([series(3000, 0.5, rng) for _ in range(3)])
    m = stats.Sample.from_runs([bursty(3000) for _ in range(3)])
    med = modes.judge({"unicast": u, "multicast": m}, metric="latency")
    tail = modes.judge({"unicast": u, "multicast": m}, metric="latency", statistic="p99")
    modes.decide([med], {"latency": True})
    modes.decide([tail], {"latency": True})
    assert med.outcome == "multicast better" and tail.outcome == "unicast better"
    assert modes.tail_reversal(med, tail) == "multicast"
    pair = Pair("g", 3, 3, "", {"unicast": ["a"], "multicast": ["b"]})
    pair.comparisons["latency"] = dominance.compare(u, m, metric="latency",
                                                    lower_is_better=True, n_boot=99)
    pair.verdicts["latency"], pair.tails["latency"] = med, tail
    assert "tail reversal" in sentence(pair)


def test_wire_evidence_says_differs_with_intervals_over_runs() -> None:
    """Wire metrics get a Welch interval over runs when runs repeat; a
    metric whose runs do not show a difference is not named; packet rates, which differ by
    design (unicast sends one copy per reader), are listed apart and never singled out as
    "the largest difference"; nothing is worded as a cause."""
    from analysis.analyse import Pair
    from analysis.verdicts import sentence, wire_change

    def pair(runs: dict[str, dict[str, list[float]]]) -> Pair:
        p = Pair("g", 3, 3, "", {"unicast": ["u"], "multicast": ["m"]})
        p.wire_runs = runs
        p.wire = {m: {k: float(np.mean(v)) for k, v in r.items()} for m, r in runs.items()}
        return p

    p = pair({
        "unicast": {"wire_packets_per_s": [1.0e5, 1.1e5, 0.9e5],
                    "wire_meta_share": [0.10, 0.11, 0.09],
                    "wire_acknack_per_reader_per_s": [5.0, 9.0, 2.0]},
        "multicast": {"wire_packets_per_s": [2.0e4, 2.1e4, 1.9e4],
                      "wire_meta_share": [0.30, 0.31, 0.29],
                      "wire_acknack_per_reader_per_s": [9.0, 2.5, 6.0]},
    })
    ratio, lo, hi = wire_change(p, "wire_meta_share")
    assert lo < ratio < hi and lo > 1.0  # about 3×, interval above 1
    text = sentence(p)
    assert "On the wire the modes differ in: meta-traffic share (3.0× higher" in text, text
    assert "95% interval of the ratio" in text and "over 3+3 runs" in text
    assert "ACKNACKs" not in text  # its runs overlap: no difference shown
    assert "packets per s differ by design (unicast sends one copy per reader)" in text
    assert "largest difference" not in text and "explain" not in text
    # below the metric's floor (0.1% of datagrams) in both modes: not named, whatever the
    # ratio of the floored values says
    tiny = pair({"unicast": {"wire_socket_drop_share": [0.0, 0.0, 0.0]},
                 "multicast": {"wire_socket_drop_share": [0.0008, 0.0007, 0.0009]}})
    assert "dropped at full sockets" not in sentence(tiny)
    single = pair({"unicast": {"wire_meta_share": [0.10]},
                   "multicast": {"wire_meta_share": [0.30]}})
    assert "one run per mode, no interval" in sentence(single)


def test_testbed_bound_words_fit_the_hosts() -> None:
    """A cell made testbed-bound by the emulator failing CPU-limited hosts says so, with the
    advice that fits (not "CPU-limited hosts", which it already has); one bound by unlimited
    hosts' own load keeps the words about the hosts' CPUs."""
    from analysis.analyse import Pair
    from analysis.testbed import testbed_cause
    from analysis.verdicts import testbed_note

    scaled = Pair("g", 75, 75, "", {"unicast": ["u"], "multicast": ["m"]})
    scaled.host_bound_reasons = ["u: a host that always had work got less than its "
                                 "allocation: 15.7% less (limit 10.0% less)"]
    assert testbed_cause(scaled.host_bound_reasons).startswith(
        "the emulator did not keep its promise")
    note = testbed_note(scaled)
    assert "To make the emulation faithful" in note and "CPU-limited hosts" not in note
    unlimited = Pair("g", 75, 75, "", {"unicast": ["u"], "multicast": ["m"]})
    unlimited.host_bound_reasons = ["u: datagrams dropped at full socket buffers: 20.0% "
                                    "(limit 1.0%)"]
    assert testbed_cause(unlimited.host_bound_reasons) == (
        "the hosts' CPUs, not the network, limited a run")
    assert "To measure the network instead" in testbed_note(unlimited)


@pytest.mark.parametrize(("sd_u", "sd_m", "change"), [
    (0.09, 0.09, 0.23),  # 75x75 latency of a quick campaign: 4 runs per mode, +23%
    (0.30, 0.20, 0.50),  # 10x10 latency: a large change, a large spread
    (0.05, 0.05, 0.03),  # a change inside the margin: decided by equivalence
])
def test_runs_to_decide_decides_about_half_the_time(sd_u: float, sd_m: float,
                                                     change: float) -> None:
    """The report's promise for its estimate: at the run count it names, campaigns whose
    runs have the observed change and spread decide the cell about half the time."""
    rng = np.random.default_rng(11)

    def exact(mean: float, sd: float, k: int) -> list[float]:
        z = rng.standard_normal(k)
        return list(np.exp(mean + sd * (z - z.mean()) / z.std(ddof=1)))

    d = math.log1p(change)
    seen = modes.ModeVerdict("latency", modes.UNDECIDED, "median",
                             {"unicast": 4, "multicast": 4},
                             {"unicast": exact(0.0, sd_u, 4), "multicast": exact(d, sd_m, 4)},
                             (0, 0, 0), family=12)
    n = modes.runs_to_decide(seen)
    assert n is not None and n > 4
    decided = 0
    trials = 2000
    for _ in range(trials):
        u = np.exp(rng.normal(0.0, sd_u, n))
        m = np.exp(rng.normal(d, sd_m, n))
        *_, p_diff, p_eq = modes.welch(list(u), list(m), 0.05, modes.EQUIVALENCE_MARGIN)
        decided += min(p_diff, p_eq) < 0.05 / 12
    assert 0.4 <= decided / trials <= 0.8, (n, decided / trials)
