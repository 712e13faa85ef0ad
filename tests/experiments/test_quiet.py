"""Waiting out the hypervisor's steal before a retake (experiments/quiet.py): the bound,
the progress it reports, and a real probe of this machine's CPUs (no root)."""

from __future__ import annotations

import doctest

import psutil

from experiments import quiet


def test_doctests() -> None:
    res = doctest.testmod(quiet)
    assert res.attempted and not res.failed


def test_a_hypervisor_that_keeps_taking_is_waited_for_at_most_the_bound() -> None:
    clock = iter(range(0, 1000, 5))
    heard: list[tuple[float, float]] = []
    w = quiet.wait_for_quiet(lambda s: {"cpu0": 0.2, "cpu1": 0.35}, lambda: next(clock),
                             on_probe=lambda steal, waited: heard.append((steal, waited)),
                             wait_s=20)
    assert w == quiet.Waited(False, 20, 0.35, 4)
    assert heard == [(0.35, 5), (0.35, 10), (0.35, 15), (0.35, 20)]


def test_a_quiet_first_probe_returns_at_once_without_a_progress_line() -> None:
    clock = iter([0.0, 5.0])
    heard: list[tuple[float, float]] = []
    w = quiet.wait_for_quiet(lambda s: {"cpu0": 0.049, "cpu1": 0.0}, lambda: next(clock),
                             on_probe=lambda steal, waited: heard.append((steal, waited)))
    assert w == quiet.Waited(True, 5.0, 0.049, 1) and heard == []


def test_the_probe_reads_each_cpu_of_this_machine() -> None:
    shares = quiet.steal_probe(0.2)
    assert sorted(shares) == sorted(f"cpu{i}" for i in range(psutil.cpu_count()))
    assert all(0.0 <= s <= 1.0 for s in shares.values())
