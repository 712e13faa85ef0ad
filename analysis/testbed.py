"""What bound a testbed-bound result, in words: the emulator failing CPU-limited hosts, or
unlimited hosts' own load; and what to change for each. One wording for the report, the
verdict notes, the ablation paragraphs and the comparison of implementations (a module of
its own so that each of them can import it)."""

from __future__ import annotations

import re

# The reasons experiments/fidelity.py gives when the emulator failed CPU-limited hosts
# (as opposed to unlimited hosts whose own load bound a run).
EMULATOR_REASONS = r"less than its allocation|outside the hosts|full kernel backlogs"

# What makes a testbed-bound result evidence, when the emulator failed CPU-limited hosts
# and when unlimited hosts' own load bound it; plain words (they also go into LaTeX).
FAITHFUL_ADVICE = ("smaller or fewer hosts (cpu), hosts pinned to CPUs (cpu_pin), no other "
                   "load on the machine, or more machines")
NETWORK_ADVICE = ("fewer participants per core, a lower pub_rate (offered load), "
                  "CPU-limited hosts, or more machines")


def emulator_failed(reasons: str | list[str]) -> bool:
    """Whether host-bound reasons say the emulator failed CPU-limited hosts (rather than
    unlimited hosts' own load bounding the run)."""
    text = reasons if isinstance(reasons, str) else " ".join(reasons)
    return re.search(EMULATOR_REASONS, text) is not None


def testbed_cause(reasons: list[str]) -> str:
    """What bound a testbed-bound cell, in the words that fit its hosts."""
    if emulator_failed(reasons):
        return ("the emulator did not keep its promise in a run (a CPU-limited host got "
                "less than its allocation, or the network plane fell behind)")
    return "the hosts' CPUs, not the network, limited a run"


def advice(reasons: str | list[str]) -> str:
    """What would make a testbed-bound result evidence, for the hosts that bound it
    (lower-case, to follow a sentence's lead)."""
    if emulator_failed(reasons):
        return f"to make the emulation faithful: {FAITHFUL_ADVICE}"
    return f"to measure the network instead: {NETWORK_ADVICE}"


def advice_sentence(reasons: str | list[str]) -> str:
    """:func:`advice` as a sentence of its own ("To measure the network instead: ...")."""
    a = advice(reasons)
    return f"{a[0].upper()}{a[1:]}."
