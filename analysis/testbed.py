"""What bound a testbed-bound result, in words: the emulator failing CPU-limited hosts, or
unlimited hosts' own load; and what to change for each. One wording for the report, the
verdict notes, the ablation paragraphs and the comparison of implementations (a module of
its own so that each of them can import it)."""

from __future__ import annotations

import re

# The reasons experiments/fidelity.py gives when the emulator failed CPU-limited hosts
# (as opposed to unlimited hosts whose own load bound a run).
EMULATOR_REASONS = r"less than its allocation|outside the hosts|full kernel backlogs"

# Run bounds (analysis/load.py's fidelity_bound) that give no verdict: the testbed bound
# the run, or its fidelity checks did not all run (a sampler failed, counters missing, no
# measurement window), so whether the testbed kept up is unknown.
NO_VERDICT = ("host", "unverified")
# How an unverified run's reasons begin (analysis/load.py fidelity_row).
UNVERIFIED = "unverified, not checked: "
VERIFY_ADVICE = ("a wake-up sampler that runs (cyclictest), cgroup v2 CPU counters for "
                 "CPU-limited hosts, and an agent that reports discovery complete")

# What makes a testbed-bound result evidence, when the emulator failed CPU-limited hosts
# and when unlimited hosts' own load bound it; plain words (they also go into LaTeX).
FAITHFUL_ADVICE = ("smaller or fewer hosts (cpu), hosts pinned to CPUs (cpu_pin), no other "
                   "load on the machine, or more machines")
NETWORK_ADVICE = ("fewer participants per core, a lower pub_rate (offered load), "
                  "CPU-limited hosts, or more machines")


def no_verdict(bound: object) -> bool:
    """Whether a run of this ``fidelity_bound`` withholds its cells' verdicts."""
    return bound in NO_VERDICT


def bound_cell(bounds: list[str]) -> str | None:
    """How the runs of a cell that give no verdict are worded, or None when all give one.

    >>> bound_cell(["network", "host", "unverified"])
    'testbed-bound (1 of 3 runs host-bound, 1 unverified)'
    >>> bound_cell(["network", "unverified"])
    'unverified (1 of 2 runs: fidelity checks did not all run)'
    """
    host = sum(b == "host" for b in bounds)
    unverified = sum(b == "unverified" for b in bounds)
    if host:
        more = f", {unverified} unverified" if unverified else ""
        return f"testbed-bound ({host} of {len(bounds)} runs host-bound{more})"
    if unverified:
        return f"unverified ({unverified} of {len(bounds)} runs: fidelity checks did not all run)"
    return None


def unverified_only(reasons: str | list[str]) -> bool:
    """Whether every run that withheld a verdict did so for checks that did not run."""
    items = [reasons] if isinstance(reasons, str) else reasons
    return bool(items) and all(UNVERIFIED in r for r in items)


def emulator_failed(reasons: str | list[str]) -> bool:
    """Whether host-bound reasons say the emulator failed CPU-limited hosts (rather than
    unlimited hosts' own load bounding the run)."""
    text = reasons if isinstance(reasons, str) else " ".join(reasons)
    return re.search(EMULATOR_REASONS, text) is not None


def testbed_cause(reasons: list[str]) -> str:
    """What bound a testbed-bound cell, in the words that fit its hosts."""
    if unverified_only(reasons):
        return ("a run's fidelity checks did not all run (unverified), so whether the "
                "testbed kept up is unknown")
    if emulator_failed(reasons):
        return ("the emulator did not keep its promise in a run (a CPU-limited host got "
                "less than its allocation, or the network plane fell behind)")
    return "the hosts' CPUs, not the network, limited a run"


def advice(reasons: str | list[str]) -> str:
    """What would make a testbed-bound result evidence, for the hosts that bound it
    (lower-case, to follow a sentence's lead)."""
    if unverified_only(reasons):
        return f"to verify the runs: {VERIFY_ADVICE}"
    if emulator_failed(reasons):
        return f"to make the emulation faithful: {FAITHFUL_ADVICE}"
    return f"to measure the network instead: {NETWORK_ADVICE}"


def advice_sentence(reasons: str | list[str]) -> str:
    """:func:`advice` as a sentence of its own ("To measure the network instead: ...")."""
    a = advice(reasons)
    return f"{a[0].upper()}{a[1:]}."
