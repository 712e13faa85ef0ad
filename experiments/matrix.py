"""Expansion of a scenario's matrix into run configurations with stable ids.

A run id names every axis that varies plus the participants, mode and repetition, e.g.
``lan-rel-100B-3x3-multicast-r1``; its ``group`` is the same without counts, mode and
repetition (``lan-rel-100B``), so unicast and multicast runs of one matrix point share a
group (docs/contracts.md §3).

With more than one implementation (``[matrix] agents``) the agent is the group's last
part, ``lan-rel-100B-fastdds-3x3-multicast-r1``: each implementation's runs form their own
groups, on the same network and placement. With one implementation nothing names it, so
run ids of existing campaigns stay as they were (and finished runs resume).

The host socket fan-out axis (``[matrix] fanout``) names itself the same way, after the
agent: ``lan-rel-100B-fanout-joined-only-3x3-multicast-r1``; runs with the kernel's
default are named only when the axis has both values, and their configuration has no
``fanout`` key (absent means "kernel"), so existing campaigns keep their ids and resume.

The same-host transport axis (``[matrix] same_host``, issue 20) too:
``lan-rel-100B-fastdds-samehost-shm-3x3-unicast-r1``; "udp" runs have no ``same_host`` key.

``[matrix] design = "one-at-a-time"`` keeps only the runs that change at most one of the
named axes from its first value (the baseline): an ablation of each factor alone. The one
exception: "shm" where the baseline agent has no shared memory is switched together with
the implementation (:func:`experiments.scenario.shm_agent`), and paired in the ablation
with that implementation's "udp" runs.
"""

from __future__ import annotations

import itertools
from typing import Any

from experiments import placement as placement_mod
from experiments.scenario import SHM_MISSING, Scenario, shm_agent


def _size(n: int) -> str:
    for unit, f in (("MB", 2**20), ("KB", 2**10)):
        if n >= f and n % f == 0:
            return f"{n // f}{unit}"
    return f"{n}B"


def _changed_factors(values: tuple[str, ...], baseline: tuple[str, ...]) -> int:
    """How many of the ablation factors (topology variant, placement variant, reliability,
    agent, fan-out, same-host transport) differ from the baseline's (each axis' first
    value)."""
    return sum(v != b for v, b in zip(values, baseline, strict=True))


def _in_design(sc: Scenario, values: tuple[str, ...], baseline: tuple[str, ...]) -> bool:
    """Whether a combination of the factors (in _changed_factors' order) is run."""
    kind, same_host = values[3], values[5]
    if same_host == "shm" and kind in SHM_MISSING:
        return False  # refused at validation unless the design leaves these out
    if sc.matrix.design == "factorial":
        return True
    changed = _changed_factors(values, baseline)
    if changed <= 1:
        return True
    # "shm" switched on the first agent with shared memory when the baseline's has none
    return (changed == 2 and same_host != baseline[5] and baseline[3] in SHM_MISSING
            and kind == shm_agent(sc))


def expand(sc: Scenario, hosts: dict[str, list[str]], scenario_path: str = ""
           ) -> list[dict[str, Any]]:
    """Every run of the campaign, in execution order, as its ``config.json`` dict.

    ``hosts``: the host names of each topology variant (``{"": [...]}`` without variants).
    """
    m = sc.matrix
    variants = placement_mod.variants(sc)
    topo_params = sc.topology.resolved()
    runs: list[dict[str, Any]] = []
    seen: set[str] = set()
    kinds = sc.agent_kinds()
    # Repetitions vary slower than implementation, mode and discovery: r1 of every agent
    # and mode, then r2, ... so the runs of one mode (and of one implementation) are spread
    # over the count's time span and a slow drift of the machine (another load, thermal)
    # falls on all of them alike, not on one of them.
    axes = (
        (*head, (pubs, subs), rep, kind, fan, same_host, mode, disc)
        for *head, (pubs, subs) in itertools.product(
            topo_params.items(), variants.items(), m.tests, m.reliability, m.data_len,
            m.latency_count, m.pub_rate, m.count_pairs())
        for rep in range(1, m.repetitions_of(pubs, subs) + 1)
        for kind in kinds
        for fan in m.fanout
        for same_host in m.same_host
        for mode in m.modes
        for disc in m.discovery
    )
    paced = any(m.pub_rate)
    baseline = (next(iter(topo_params)), next(iter(variants)), m.reliability[0], kinds[0],
                m.fanout[0], m.same_host[0])
    for point in axes:
        (tname, tparams), (pname, pl), test, rel, dlen, lcount, rate = point[:7]
        (pubs, subs), rep, kind, fan, same_host, mode, disc = point[7:]
        if not _in_design(sc, (tname, pname, rel, kind, fan, same_host), baseline):
            continue
        lcount = m.latency_count_of(pubs, subs, lcount)
        if test == "latency":
            lcount = 1  # -latencyTest: every sample is a round trip
            rate = 0  # and it paces itself: one round trip at a time
        if mode == "multicast":
            disc = "spdp-multicast"  # multicast data implies multicast discovery
        parts = [sc.topology.name, "rel" if rel == "reliable" else "be", _size(dlen)]
        if test == "latency":
            parts.insert(1, "rtt")
        if len(m.latency_count) > 1:
            parts.append(f"lc{lcount}")
        if paced:
            parts.append(f"rate{rate}" if rate else "unpaced")
        if tname:
            parts.append(tname)
        if pname:
            parts.append(pname)
        if len(kinds) > 1:
            parts.append(kind)
        if m.fanout != ["kernel"]:
            parts.append(f"fanout-{fan}")
        if m.same_host != ["udp"]:
            parts.append(f"samehost-{same_host}")
        group = "-".join(parts)
        mode_tag = mode if disc == "spdp-multicast" else f"{mode}-peers"
        run_id = f"{group}-{pubs}x{subs}-{mode_tag}-r{rep}"
        if run_id in seen:
            continue
        seen.add(run_id)
        runs.append(
            {
                "run_id": run_id,
                **({"fanout": fan} if fan != "kernel" else {}),
                **({"same_host": same_host} if same_host != "udp" else {}),
                "campaign": sc.campaign.name,
                "scenario": scenario_path,
                "group": group,
                "mode": mode,
                "discovery": disc,
                "publishers": pubs,
                "subscribers": subs,
                "reliable": rel == "reliable",
                "data_len": dlen,
                "latency_count": lcount,
                "execution_time": m.execution_time_of(pubs, subs),
                "num_iter": m.iterations(test),
                "pub_rate": rate,
                "test": test,
                "warmup_samples": m.warmup_samples,
                "repetition": rep,
                "agent": kind,
                "domain": sc.agent.domain,
                "agent_extra_args": list(sc.agent.extra_args),
                "topology": sc.topology.name,
                "topology_params": tparams,
                "topology_variant": tname,
                "placement_variant": pname,
                "placement": placement_mod.place(pl, hosts[tname], pubs, subs),
                "timing": sc.timing.model_dump(),
                "capture": sc.capture.model_dump(),
                "fidelity": sc.fidelity.model_dump(),
                "resources": sc.resources,
                # The servers (only when there are several: existing ids and configs stay).
                **({"cluster": sc.cluster.result_relevant()} if sc.cluster else {}),
            }
        )
    return runs
