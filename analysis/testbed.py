"""What bound a testbed-bound result, in words: the emulator failing CPU-limited hosts, or
unlimited hosts' own load; and what to change for each. One wording for the report, the
verdict notes, the ablation paragraphs and the comparison of implementations (a module of
its own so that each of them can import it)."""

from __future__ import annotations

import re
from typing import Any

# What bound a run that gives no verdict (analysis/load.py ``fidelity_cause``): the
# emulator failed (a check of the group ``emulator`` in the manifest's ``failed`` ids), the
# hosts' own load (any other check), or checks that did not run.
EMULATOR, HOST, UNVERIFIED_CAUSE = "emulator", "host", "unverified"
# Records made before the checks had ids name them only in sentences: these are the
# emulator's (experiments/fidelity.py's labels of that time). Read only for such records.
LEGACY_EMULATOR_REASONS = (r"less than its allocation|outside the hosts|full kernel backlogs"
                           r"|user-mode router could not take in")


class Reason(str):
    """A reason a run gives no verdict, in words, with its cause (EMULATOR, HOST or
    UNVERIFIED_CAUSE) carried beside them: analysis decides by the cause, never the words.

    >>> r = Reason("u: datagrams dropped (renamed)", HOST)
    >>> r, r.cause
    ('u: datagrams dropped (renamed)', 'host')
    """

    cause: str

    def __new__(cls, text: str, cause: str) -> Reason:
        obj = super().__new__(cls, text)
        obj.cause = cause
        return obj

    def __getnewargs__(self) -> tuple[str, str]:  # type: ignore[override]  # copy, pickle
        return str(self), self.cause


def run_reasons(runs: Any) -> list[Reason]:
    """The reasons of a table of runs (analysis/load.py's ``fidelity_reasons`` and
    ``fidelity_cause`` columns), each with its cause."""
    return [Reason(str(why), str(cause))
            for why, cause in zip(runs["fidelity_reasons"], runs["fidelity_cause"], strict=True)]


def legacy_cause(text: str) -> str:
    """The cause of a reason recorded without check ids (before they existed)."""
    if UNVERIFIED in text:
        return UNVERIFIED_CAUSE
    return EMULATOR if re.search(LEGACY_EMULATOR_REASONS, text) else HOST


def cause_of(reason: str) -> str:
    """A reason's cause: the one it carries, else read from a record without ids."""
    return reason.cause if isinstance(reason, Reason) else legacy_cause(reason)


def cause_from_ids(failed: list[str]) -> str:
    """The cause of a host-bound run from the ids of the checks it failed.

    >>> cause_from_ids(["host.socket_drop_share", "emulator.shortfall_share"])
    'emulator'
    >>> cause_from_ids(["machine.steal_share"])
    'host'
    """
    return EMULATOR if any(str(i).startswith(EMULATOR + ".") for i in failed) else HOST


def join(reasons: list[str], sep: str = "; ", prefix: str = "") -> Reason:
    """Reasons joined into one, keeping the strongest cause (emulator, then the hosts' load,
    then unverified): a cell is as bound as its most bound run."""
    causes = {cause_of(r) for r in reasons}
    cause = next((c for c in (EMULATOR, HOST) if c in causes), UNVERIFIED_CAUSE)
    return Reason(prefix + sep.join(reasons), cause)

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
    return bool(items) and all(cause_of(r) == UNVERIFIED_CAUSE for r in items)


def emulator_failed(reasons: str | list[str]) -> bool:
    """Whether host-bound reasons say the emulator failed CPU-limited hosts (rather than
    unlimited hosts' own load bounding the run)."""
    items = [reasons] if isinstance(reasons, str) else reasons
    return any(cause_of(r) == EMULATOR for r in items)


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
