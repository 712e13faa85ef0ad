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

The same-host transport axis (``[matrix] same_host``) too:
``lan-rel-100B-fastdds-samehost-shm-3x3-unicast-r1``; "udp" runs have no ``same_host`` key.
And the heartbeat timing axis (``[matrix] heartbeat_timing``), named when it varies:
``lan-rel-100B-hb-perftest-25x25-unicast-r1``. A run's configuration has
``heartbeat_timing`` whenever the scenario gives it, so a finished run of another timing
is never resumed as this one (a result edit, refused); without it runs have no such key
(each agent's own timing). "scaled" and "scaled-discovery" are run
only with agents that have them (SCALED_KINDS), as "shm" only with agents that have
shared memory.

The protocol factors (``[matrix] multicast_resend`` and ``receive_buffer``,
schema.PROTOCOL_FACTORS) likewise: ``...-resend-first-nack-...``, ``...-rcvbuf-stock-...``
when the axis has more than one value, the configuration key whenever given; a value runs
only with the agents that can apply it.

``[matrix] design = "one-at-a-time"`` keeps only the runs that change at most one of the
named axes from its first value (the baseline): an ablation of each factor alone. The one
exception: "shm" where the baseline agent has no shared memory is switched together with
the implementation (:func:`experiments.schema.shm_agent`), and paired in the ablation
with that implementation's "udp" runs.

Run ids are directory names and the key of resume, so they must name one run each. Names
chosen by the user (topology variants, placements) may contain "-", the separator, so two
cells could be named alike (variants ``a`` and ``a-b``, placements ``b-c`` and ``c``): the
expander raises :class:`~experiments.schema.ScenarioError` naming both cells rather than
keep one and drop the other. The run count is known before expanding
(:func:`run_count`, from the axes' lengths), so a matrix too large to expand is refused
with its count before it is (experiments/bounds.py).
"""

from __future__ import annotations

import itertools
from typing import Any, NamedTuple

from experiments import placement as placement_mod
from experiments.schema import (
    PROTOCOL_FACTORS,
    SCALED_KINDS,
    SHM_MISSING,
    Scenario,
    ScenarioError,
    shm_agent,
)

# A run directory is renamed from ".<run id>.partial": that name must fit the file
# system's 255-byte limit (NAME_MAX).
MAX_RUN_ID_BYTES = 255 - len("..partial")


def _size(n: int) -> str:
    for unit, f in (("MB", 2**20), ("KB", 2**10)):
        if n >= f and n % f == 0:
            return f"{n // f}{unit}"
    return f"{n}B"


def _changed_factors(values: tuple[str, ...], baseline: tuple[str, ...]) -> int:
    """How many of the ablation factors (topology variant, placement variant, reliability,
    agent, fan-out, same-host transport, heartbeat timing, then the protocol factors) differ
    from the baseline's (each axis' first value)."""
    return sum(v != b for v, b in zip(values, baseline, strict=True))


def _runnable(kind: str, same_host: str, heartbeat: str, protocol: tuple[str, ...]) -> bool:
    """Whether agent ``kind`` can run a combination of the agent-dependent factors (the
    scenario check refuses a value no agent of the campaign can run; the others' runs are
    left out): "shm" needs shared memory, "scaled*" -scaleSettings, and each protocol factor
    value an agent that applies it."""
    if same_host == "shm" and kind in SHM_MISSING:
        return False
    if heartbeat.startswith("scaled") and kind not in SCALED_KINDS:
        return False
    return not any(f.why_not(v, kind) for f, v in zip(PROTOCOL_FACTORS, protocol, strict=True))


def _in_design(sc: Scenario, values: tuple[str, ...], baseline: tuple[str, ...]) -> bool:
    """Whether a combination of the factors (in _changed_factors' order) is run."""
    kind, same_host = values[3], values[5]
    if not _runnable(kind, same_host, values[6], tuple(values[7:])):
        return False
    if sc.matrix.design == "factorial":
        return True
    changed = _changed_factors(values, baseline)
    if changed <= 1:
        return True
    # "shm" switched on the first agent with shared memory when the baseline's has none
    return (changed == 2 and same_host != baseline[5] and baseline[3] in SHM_MISSING
            and kind == shm_agent(sc))


def _factor_axes(sc: Scenario) -> tuple[list[str], ...]:
    """The ablation factors' values, in _changed_factors' order: topology variants,
    placements, reliability, agents, fan-out, same-host transport, heartbeat timing, then
    the protocol factors ("": each agent's own)."""
    m = sc.matrix
    return (list(sc.topology.resolved()), _placement_names(sc), list(m.reliability),
            sc.agent_kinds(), list(m.fanout), list(m.same_host),
            list(m.heartbeat_timing or [""]), *(m.protocol_values(f) for f in PROTOCOL_FACTORS))


def _baseline(sc: Scenario) -> tuple[str, ...]:
    """The baseline combination of the factors: each axis' first value."""
    return tuple(a[0] for a in _factor_axes(sc))


def _factor_count(sc: Scenario) -> int:
    """How many combinations of the factors the design runs, without enumerating the
    product: a factorial design runs every one but "shm" with an agent that has no shared
    memory; a one-at-a-time design only the baseline, each single change and the "shm"
    switch (:func:`_in_design`), so those candidates are enumerated."""
    axes = _factor_axes(sc)
    if sc.matrix.design == "factorial":
        agent_dependent = sum(
            _runnable(k, s, h, tuple(p))
            for k, s, h, *p in itertools.product(axes[3], *axes[5:]))
        return (len(axes[0]) * len(axes[1]) * len(axes[2]) * len(axes[4])
                * agent_dependent)
    baseline = _baseline(sc)
    wanted = {baseline}
    for i, axis in enumerate(axes):
        wanted |= {(*baseline[:i], v, *baseline[i + 1:]) for v in axis}
    kind = shm_agent(sc)
    if kind is not None:
        wanted |= {(*baseline[:3], kind, baseline[4], v, *baseline[6:]) for v in axes[5]}
    return sum(_in_design(sc, c, baseline) for c in wanted)


def _placement_names(sc: Scenario) -> list[str]:
    """Placement variant names ("" without variants), without looking the names up (the
    scenario check refuses unknown ones)."""
    if sc.placements:
        return list(sc.matrix.placements or sc.placements)
    return [""]


def test_points(sc: Scenario, test: str) -> list[tuple[int, int]]:
    """(latency count, publication rate) pairs of a test: -latencyTest pings with every
    sample and paces itself, so the latency test has one."""
    m = sc.matrix
    if test == "latency":
        return [(1, 0)]
    return list(itertools.product(m.latency_count, m.pub_rate))


def _discoveries(sc: Scenario, mode: str) -> list[str]:
    """Multicast data implies multicast discovery: a multicast run has one."""
    return ["spdp-multicast"] if mode == "multicast" else list(sc.matrix.discovery)


def run_count(sc: Scenario) -> int:
    """How many runs :func:`expand` makes, from the axes' lengths (nothing is expanded).

    >>> from experiments.scenario import from_dict
    >>> sc = from_dict({"campaign": {"name": "x"}, "topology": {"name": "lan"},
    ...                 "matrix": {"participants": [1, 3], "repetitions": 2}})
    >>> run_count(sc)
    8
    """
    m = sc.matrix
    tests = sum(len(test_points(sc, t)) for t in m.tests)
    # The baseline (when the design runs it) has its own repetitions.
    baseline = _baseline(sc)
    runs_baseline = int(_in_design(sc, baseline, baseline))
    others = _factor_count(sc) - runs_baseline
    reps = sum(others * m.repetitions_of(p, q)
               + runs_baseline * m.baseline_repetitions_of(p, q) for p, q in m.count_pairs())
    modes = sum(len(_discoveries(sc, mode)) for mode in m.modes)
    return tests * len(m.data_len) * reps * modes


class Point(NamedTuple):
    """One point of the matrix: what a run is made of, besides its scenario."""
    tname: str
    pname: str
    test: str
    rel: str
    dlen: int
    lcount: int
    rate: int
    pubs: int
    subs: int
    rep: int
    kind: str
    fan: str
    same_host: str
    heartbeat: str
    protocol: tuple[str, ...]
    mode: str
    disc: str


def _cell(tname: str, pname: str, test: str, rel: str, dlen: int, lcount: int, rate: int,
          pubs: int, subs: int, rep: int, kind: str, fan: str, same_host: str,
          heartbeat: str, protocol: tuple[str, ...], mode: str, disc: str) -> dict[str, Any]:
    return {"topology variant": tname, "placement": pname, "test": test, "reliability": rel,
            "data_len": dlen, "latency_count": lcount, "pub_rate": rate,
            "count": f"{pubs}x{subs}", "repetition": rep, "agent": kind, "fanout": fan,
            "same_host": same_host, "heartbeat_timing": heartbeat,
            **{f.key: v for f, v in zip(PROTOCOL_FACTORS, protocol, strict=True)},
            "mode": mode, "discovery": disc}


def _collision(path: str, run_id: str, a: dict[str, Any], b: dict[str, Any]) -> ScenarioError:
    """Two cells with one run id: the error names both (by what differs between them)."""
    differ = [k for k in a if a[k] != b[k]]

    def name(c: dict[str, Any]) -> str:
        return ", ".join(f"{k} {c[k]!r}" for k in differ) or "the same cell"

    key = ("topology.variants" if "topology variant" in differ
           else "placements" if "placement" in differ else "matrix")
    return ScenarioError(
        path or "(scenario)", key,
        f"two runs would get the run id {run_id!r}: ({name(a)}) and ({name(b)}); allowed: "
        "topology variant and placement names that keep run ids apart (e.g. without '-')")


def expand(sc: Scenario, hosts: dict[str, list[str]], scenario_path: str = ""
           ) -> list[dict[str, Any]]:
    """Every run of the campaign, in execution order, as its ``config.json`` dict.

    ``hosts``: the host names of each topology variant (``{"": [...]}`` without variants).
    Raises ScenarioError when two runs would get one run id, or a run id is too long for
    a directory name.
    """
    m = sc.matrix
    variants = placement_mod.variants(sc)
    topo_params = sc.topology.resolved()
    runs: list[dict[str, Any]] = []
    seen: dict[str, dict[str, Any]] = {}
    kinds = sc.agent_kinds()
    # Repetitions vary slower than implementation, mode and discovery: r1 of every agent
    # and mode, then r2, ... so the runs of one mode (and of one implementation) are spread
    # over the count's time span and a slow drift of the machine (another load, thermal)
    # falls on all of them alike, not on one of them. A baseline with more repetitions
    # (baseline_repetitions) runs its extra ones after the others' last.
    protocol_axes = [m.protocol_values(f) for f in PROTOCOL_FACTORS]
    points = (
        Point(tname, pname, test, rel, dlen, lcount, rate, pubs, subs, rep, kind, fan,
              same_host, heartbeat, protocol, mode, disc)
        for tname, pname, test, rel, dlen in itertools.product(
            topo_params, variants, m.tests, m.reliability, m.data_len)
        for (lcount, rate), (pubs, subs) in itertools.product(
            test_points(sc, test), m.count_pairs())
        for rep in range(1, max(m.repetitions_of(pubs, subs),
                                m.baseline_repetitions_of(pubs, subs)) + 1)
        for kind in kinds
        for fan in m.fanout
        for same_host in m.same_host
        for heartbeat in m.heartbeat_timing or [""]
        for protocol in itertools.product(*protocol_axes)
        for mode in m.modes
        for disc in _discoveries(sc, mode)
    )
    baseline = _baseline(sc)
    for point in points:
        p = point
        values = (p.tname, p.pname, p.rel, p.kind, p.fan, p.same_host, p.heartbeat, *p.protocol)
        if not _in_design(sc, values, baseline):
            continue
        if p.rep > (m.baseline_repetitions_of(p.pubs, p.subs) if values == baseline
                    else m.repetitions_of(p.pubs, p.subs)):
            continue
        if p.test != "latency":
            p = p._replace(lcount=m.latency_count_of(p.pubs, p.subs, p.lcount))
        group = _group(sc, p, kinds, protocol_axes)
        mode_tag = p.mode if p.disc == "spdp-multicast" else f"{p.mode}-peers"
        run_id = f"{group}-{p.pubs}x{p.subs}-{mode_tag}-r{p.rep}"
        cell = _cell(*point)  # the point as the matrix wrote it
        if run_id in seen:
            raise _collision(scenario_path, run_id, seen[run_id], cell)
        seen[run_id] = cell
        if len(run_id.encode()) > MAX_RUN_ID_BYTES:
            raise ScenarioError(scenario_path or "(scenario)", "matrix",
                                f"run id {run_id[:60]!r}... is {len(run_id.encode())} bytes; "
                                f"allowed: at most {MAX_RUN_ID_BYTES} (it names a directory): "
                                "shorter topology variant and placement names")
        placement = placement_mod.place(variants[p.pname], hosts[p.tname], p.pubs, p.subs)
        runs.append(_run_config(sc, p, run_id, group, scenario_path, placement,
                                topo_params[p.tname]))
    return runs


def _group(sc: Scenario, point: Point, kinds: list[str],
           protocol_axes: list[list[str]]) -> str:
    """A run's group: its run id without count, mode and repetition; names each axis that
    has more than one value (an axis left at its one value keeps existing ids)."""
    m = sc.matrix
    (tname, pname, test, rel, dlen, lcount, rate, _pubs, _subs, _rep, kind, fan, same_host,
     heartbeat, protocol, _mode, _disc) = point
    parts = [sc.topology.name, "rel" if rel == "reliable" else "be", _size(dlen)]
    if test == "latency":
        parts.insert(1, "rtt")
    if len(m.latency_count) > 1:
        parts.append(f"lc{lcount}")
    if any(m.pub_rate):
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
    if len(m.heartbeat_timing or []) > 1:
        parts.append(f"hb-{heartbeat}")
    for factor, value, axis in zip(PROTOCOL_FACTORS, protocol, protocol_axes, strict=True):
        if len(axis) > 1:
            parts.append(f"{factor.tag}-{value}")
    return "-".join(parts)


def _run_config(sc: Scenario, point: Point, run_id: str, group: str,
                scenario_path: str, placement: Any, tparams: Any) -> dict[str, Any]:
    """One run's ``config.json`` dict (keys of axes left at their default are absent, so
    existing run configurations stay as they were)."""
    m = sc.matrix
    (tname, pname, test, rel, dlen, lcount, rate, pubs, subs, rep, kind, fan, same_host,
     heartbeat, protocol, mode, disc) = point
    return {
        "run_id": run_id,
        **({"fanout": fan} if fan != "kernel" else {}),
        **({"same_host": same_host} if same_host != "udp" else {}),
        **({"heartbeat_timing": heartbeat} if heartbeat else {}),
        **{f.key: v for f, v in zip(PROTOCOL_FACTORS, protocol, strict=True) if v},
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
        "placement": placement,
        "timing": sc.timing.model_dump(),
        "capture": sc.capture.for_run(m.execution_time_of(pubs, subs)),
        "fidelity": sc.fidelity.model_dump(),
        "resources": sc.resources,
        # The servers (only when there are several: existing ids and configs stay).
        **({"cluster": sc.cluster.result_relevant()} if sc.cluster else {}),
    }
