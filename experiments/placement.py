"""Where each agent process runs: even round-robin over hosts, or explicit host lists.

>>> from experiments.schema import Placement
>>> place(Placement(), ["h1", "h2"], 1, 2)
{'pub0': 'h1', 'sub0': 'h2', 'sub1': 'h1'}
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from experiments.schema import Placement, Scenario


def proc_names(publishers: int, subscribers: int) -> list[str]:
    """Process names in start order: ``pub0..``, then ``sub0..``."""
    return [f"pub{i}" for i in range(publishers)] + [f"sub{j}" for j in range(subscribers)]


def place(pl: Placement, hosts: list[str], publishers: int, subscribers: int) -> dict[str, str]:
    """Map every process name to a host.

    Round-robin deals publishers then subscribers over the hosts in order, continuing
    where the publishers stopped, so every host carries the same number of processes
    (±1) — the study's even spread. Explicit lists are cycled.
    """
    if pl.strategy == "explicit":
        assert pl.publishers and pl.subscribers
        out = {f"pub{i}": pl.publishers[i % len(pl.publishers)] for i in range(publishers)}
        out.update(
            {f"sub{j}": pl.subscribers[j % len(pl.subscribers)] for j in range(subscribers)}
        )
        return out
    pool = list(pl.hosts or hosts)
    return {name: pool[k % len(pool)] for k, name in enumerate(proc_names(publishers, subscribers))}


def per_host(placement: dict[str, str]) -> dict[str, int]:
    """Number of processes on each host."""
    return dict(Counter(placement.values()))


def variants(sc: Scenario) -> dict[str, Placement]:
    """Placement variants of a scenario: ``{"": placement}`` or the named ``[placements]``."""
    if sc.placements:
        names = sc.matrix.placements or list(sc.placements)
        return {n: sc.placements[n] for n in names}
    return {"": sc.placement}
