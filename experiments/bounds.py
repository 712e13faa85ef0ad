"""Bounds on the work a scenario asks for, checked right after its schema and before its
matrix is expanded or anything is built (experiments/README.md, "Bounds").

- **Runs**: at most :data:`MAX_RUNS` per scenario, counted from the axes' lengths
  (:func:`experiments.matrix.run_count`), so a matrix of 10^11 runs is refused with its
  count at once instead of being expanded until memory runs out.
- **Latency samples**: publisher 0 keeps every one-way latency of a run in memory until it
  writes its latency file (8 bytes each in the native agent, as Perftest's
  ``_latency_history``), so a run may ask for at most :data:`MAX_LATENCY_SAMPLES`. The
  samples a run gives are not known in advance (the send rate depends on the testbed), so
  the rule bounds the worst case: publisher 0 sends at most ``pub_rate`` samples/s when
  paced, else at most :data:`experiments.agents.MAX_SAMPLES_PER_S` (the ceiling the runner
  already sizes ``-numIter`` by: an agent sends at most ~1 M samples/s here), for
  ``execution_time`` seconds or ``num_iter`` samples, whichever ends the run first, and
  pings every ``latency_count``-th of them (every one in the latency test).
"""

from __future__ import annotations

from pathlib import Path

from experiments.schema import Scenario, ScenarioError

# 10,000 runs of a minute each are a week of machine time; each run's configuration (with
# its placement) is held in memory and in campaign.json.
MAX_RUNS = 10_000
MAX_LATENCY_SAMPLES = 50_000_000  # 400 MB in publisher 0 at 8 bytes each
# Perftest's -numIter defaults (perftest_cpp.cxx 4.3; the native agent's options.c too).
DEFAULT_NUM_ITER = {"throughput": 100_000_000, "latency": 10_000_000}


def check(sc: Scenario, path: Path | str) -> None:
    """Raise ScenarioError (naming the key, the figure and the bound) when the scenario
    asks for more than the bounds allow."""
    from experiments import matrix

    n = matrix.run_count(sc)
    if n > MAX_RUNS:
        raise ScenarioError(
            path, "matrix",
            f"the matrix has {n} runs (counted from its axes); allowed: at most {MAX_RUNS} "
            "runs per scenario: fewer values per axis, or several scenarios")
    worst = worst_latency_samples(sc)
    if worst is not None and worst[0] > MAX_LATENCY_SAMPLES:
        count, key, how = worst
        raise ScenarioError(
            path, key,
            f"publisher 0 could keep {count} latency samples in one run ({how}); allowed: at "
            f"most {MAX_LATENCY_SAMPLES} per run (it holds each in memory): raise "
            "latency_count, set pub_rate or num_iter, or shorten execution_time")


def worst_latency_samples(sc: Scenario) -> tuple[int, str, str] | None:
    """The largest worst-case sample count over the runs of ``sc``, with the key to change
    and how it was reckoned; None when no agent of the campaign writes a latency file
    (ddsperf)."""
    from experiments import matrix
    from experiments.agents import MAX_SAMPLES_PER_S, iterations_for

    if all(k == "ddsperf" for k in sc.agent_kinds()):
        return None
    m = sc.matrix
    worst: tuple[int, str, str] | None = None
    for test in m.tests:
        for base_lcount, rate in matrix.test_points(sc, test):
            for pubs, subs in m.count_pairs():
                lcount = (base_lcount if test == "latency"
                          else m.latency_count_of(pubs, subs, base_lcount))
                secs = m.execution_time_of(pubs, subs)
                num_iter = (m.iterations(test) or iterations_for(secs)
                            or DEFAULT_NUM_ITER[test])
                per_s = rate or MAX_SAMPLES_PER_S
                sent = num_iter if not secs else min(num_iter, secs * per_s)
                samples = -(-sent // lcount)
                if worst is not None and samples <= worst[0]:
                    continue
                if secs and secs * per_s <= num_iter:
                    pace = (f"pub_rate {rate}" if rate else
                            f"unpaced: at most {MAX_SAMPLES_PER_S} samples/s assumed")
                    sent_how = f"execution_time {secs} s x {per_s} samples/s ({pace})"
                else:
                    sent_how = f"num_iter {num_iter} samples"
                if test == "latency":
                    worst = (samples, "matrix.num_iter",
                             f"latency test, {pubs}x{subs}: {sent_how}, each a round trip")
                else:
                    worst = (samples, "matrix.latency_count",
                             f"{pubs}x{subs}: {sent_how} / latency_count {lcount}")
    return worst
