"""Scenario files: reading one, and its checks against its topology and this machine (the
schema is in :mod:`experiments.schema`; the matrix expands into runs in
:mod:`experiments.matrix`).

A scenario is checked completely before anything is built: unknown keys, wrong types,
impossible values, hosts the topology lacks, agents that are not installed and
capabilities the machine lacks all raise :class:`ScenarioError`, whose message names the
file, the key and the allowed values (``mcastlab run`` prints it and exits with 2).

Example (see ``experiments/smoke.toml``)::

    [campaign]
    name = "smoke"
    [topology]
    name = "lan"
    params = { hosts = 4 }
    [agent]
    kind = "native"
    [matrix]
    participants = [1, 3]
    modes = ["unicast", "multicast"]
    execution_time = 10
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from experiments.schema import (
    AGENT_KINDS,
    AGENT_MAX_DATA_LEN,
    FANOUTS,
    HEARTBEAT_TIMING_MISSING,
    MULTICAST_RESEND,
    NO_MEASURABLE_EFFECT,
    PERFTEST_MIN_DATA_LEN,
    PROTOCOL_FACTORS,
    SCALED_KINDS,
    SHM_MISSING,
    Agent,
    Campaign,
    Capture,
    Cluster,
    Fidelity,
    Matrix,
    Placement,
    Scenario,
    ScenarioError,
    Timing,
    Topology,
    shm_agent,
)

# The models are named here too: a scenario's readers import them from where they read it.
__all__ = [
    "AGENT_KINDS",
    "AGENT_MAX_DATA_LEN",
    "FANOUTS",
    "NO_MEASURABLE_EFFECT",
    "PERFTEST_MIN_DATA_LEN",
    "SHM_MISSING",
    "Agent",
    "Campaign",
    "Capture",
    "Cluster",
    "Fidelity",
    "Matrix",
    "Placement",
    "Scenario",
    "ScenarioError",
    "Timing",
    "Topology",
    "agent_missing",
    "capture_point_names",
    "fanout_shim_missing",
    "from_dict",
    "parse",
    "shm_agent",
    "validate",
]


def _loc(loc: tuple[Any, ...]) -> str:
    return ".".join(str(p) for p in loc) or "(top level)"


_ALLOWED_KEYS: dict[str, type[BaseModel]] = {
    "": Scenario,
    "campaign": Campaign,
    "topology": Topology,
    "agent": Agent,
    "matrix": Matrix,
    "placement": Placement,
    "timing": Timing,
    "capture": Capture,
    "fidelity": Fidelity,
    "cluster": Cluster,
    "quick": Scenario,
}


def _explain(err: dict[str, Any]) -> tuple[str, str]:
    """One pydantic error → (key, message with the allowed values)."""
    loc = tuple(err.get("loc", ()))
    typ = err.get("type", "")
    key = _loc(loc)
    if typ == "extra_forbidden":
        parent = str(loc[0]) if len(loc) > 1 else ""
        model = _ALLOWED_KEYS.get(parent)
        if parent == "placements" or (len(loc) > 2 and loc[0] == "placements"):
            model = Placement
        allowed = ", ".join(model.model_fields) if model else "?"
        return key, f"unknown key (allowed: {allowed})"
    if typ == "missing":
        return key, "required key is missing"
    if typ == "finite_number":
        return key, f"got {err.get('input')!r}; allowed: a finite number (no inf or nan)"
    if typ in ("greater_than", "greater_than_equal", "less_than", "less_than_equal"):
        bound = str(err.get("msg", "")).removeprefix("Input should be ")
        return key, f"got {err.get('input')!r}; allowed: a number {bound}"
    if typ == "too_long":
        return key, f"too many values; allowed: {str(err.get('msg', '')).lower()}"
    if typ == "literal_error":
        expected = err.get("ctx", {}).get("expected", "")
        return key, f"got {err.get('input')!r}, allowed: {expected}"
    if typ.endswith("_type") or typ in ("int_from_float", "model_type", "dict_type"):
        return key, f"wrong type: {err.get('msg', '').lower()}, got {err.get('input')!r}"
    msg = str(err.get("msg", "")).removeprefix("Value error, ")
    if typ == "value_error" or "allowed" in msg:
        return key, msg
    return key, f"{msg} (got {err.get('input')!r})"


def parse(path: Path | str, quick: bool = False) -> Scenario:
    """Read and schema-check a scenario file (no topology or machine checks)."""
    path = Path(path)
    try:
        raw = tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise ScenarioError(path, "(file)", "no such scenario file") from None
    except IsADirectoryError:
        raise ScenarioError(path, "(file)", "is a directory, not a scenario file") from None
    except tomllib.TOMLDecodeError as exc:
        raise ScenarioError(path, "(syntax)", f"not valid TOML: {exc}") from None
    return from_dict(raw, path, quick)


def from_dict(raw: dict[str, Any], path: Path | str = "(scenario)", quick: bool = False
              ) -> Scenario:
    """Schema-check a scenario already read from TOML (``quick``: merge its [quick] table)."""
    raw = {k: dict(v) if isinstance(v, dict) else v for k, v in raw.items()}
    if quick:
        over = raw.get("quick")
        if not isinstance(over, dict) or not over:
            raise ScenarioError(path, "quick", "--quick needs a [quick] table of overrides")
        for table, values in over.items():
            if not isinstance(values, dict) or not isinstance(raw.get(table, {}), dict):
                raise ScenarioError(path, f"quick.{table}", "must be a table of overrides")
            raw[table] = {**raw.get(table, {}), **values}
        if isinstance(raw.get("campaign"), dict) and "name" in raw["campaign"]:
            raw["campaign"]["name"] = f"{raw['campaign']['name']}-quick"
    try:
        sc = Scenario.model_validate(raw)
    except ValidationError as exc:
        key, msg = _explain(exc.errors()[0])
        raise ScenarioError(path, key, msg) from None
    from experiments import bounds

    bounds.check(sc, path)  # the work it asks for, counted before anything is expanded
    axis = sc.matrix.agents
    if axis is not None and "kind" in sc.agent.model_fields_set and sc.agent.kind not in axis:
        raise ScenarioError(
            path, "matrix.agents",
            f"agent.kind {sc.agent.kind!r} is not in {axis!r}; allowed: leave agent.kind "
            "out (the axis replaces it) or list it in matrix.agents")
    return sc


def agent_missing(kind: str) -> str | None:
    """Why agent ``kind`` cannot run on this machine, or None when it can."""
    import os
    import shutil

    from experiments import agents

    exe = agents.executable(kind)
    if kind == "ddsperf":
        found = shutil.which(str(exe))
        return None if found else "ddsperf not found (apt install cyclonedds-tools)"
    if not os.access(exe, os.X_OK):
        from mcastlab import paths

        note = paths.FASTDDS_UNSUPPORTED_NOTE
        if kind.startswith("fastdds") and note.is_file():
            return f"{exe} is not built: {note.read_text().strip()}"
        return f"{exe} is not built (run ./setup.sh)"
    if kind == "rti" and not os.environ.get("NDDSHOME"):
        return "NDDSHOME is not set (RTI Connext and its license are needed for agent 'rti')"
    return None


def fanout_shim_missing(sc: Scenario) -> str | None:
    """Why a scenario's ``matrix.fanout`` cannot run here (the shim is not built), or None."""
    if "joined-only" not in sc.matrix.fanout:
        return None
    from mcastlab import paths

    if paths.MCASTALL_SHIM.is_file():
        return None
    return (f"'joined-only' needs the IP_MULTICAST_ALL=0 preload shim {paths.MCASTALL_SHIM}, "
            "which is not built (run ./setup.sh; it builds perftest-wrappers/mcastall); "
            f"allowed without it: {FANOUTS[0]!r}")


def validate(path: Path | str, *, check_machine: bool = True, quick: bool = False
             ) -> tuple[Scenario, dict[str, Any]]:
    """Parse ``path`` and check it against its topology and this machine.

    Returns ``(scenario, {topology variant: spec})`` (variant "" when the scenario has
    none). Raises ScenarioError; builds nothing.
    """
    import topologies

    path = Path(path)
    sc = parse(path, quick)
    specs: dict[str, Any] = {}
    for vname, params in sc.topology.resolved().items():
        key = f"topology.variants.{vname}" if vname else "topology.params"
        try:
            specs[vname] = topologies.resolve(sc.topology.name, params)
        except Exception as exc:  # TopologyParamError (and unknown topology names)
            if sc.topology.name not in getattr(topologies, "FAMILIES", (sc.topology.name,)):
                key = "topology.name"
            raise ScenarioError(path, key, str(exc)) from None
    for spec in specs.values():
        _check_against(path, sc, spec)
    for vname, spec in specs.items():
        _check_cpu_from(path, sc, vname, spec)
    if sc.cluster is not None:
        from topologies.cluster import placement

        try:
            cluster = sc.cluster.config(path)
            for spec in specs.values():
                placement(spec, cluster)
        except Exception as exc:  # ValueError, TopologyParamError: one line naming the key
            raise ScenarioError(path, "cluster", str(exc)) from None
    if check_machine:
        key = "matrix.agents" if sc.matrix.agents else "agent.kind"
        for kind in sc.agent_kinds():
            why = agent_missing(kind)
            if why:
                raise ScenarioError(
                    path, key,
                    f"agent {kind!r} is not installed: {why} "
                    f"(agents: {', '.join(AGENT_KINDS)})",
                )
        why = fanout_shim_missing(sc)
        if why:
            raise ScenarioError(path, "matrix.fanout", why)
        for vname, spec in specs.items():
            _check_cpu_capacity(path, sc, vname, spec)
        for vname, spec in specs.items():
            missing = list(topologies.missing_capabilities(spec))
            if missing:
                where = f" (variant {vname})" if vname else ""
                raise ScenarioError(
                    path, _needing_key(sc, vname, spec),
                    f"this machine lacks what topology {sc.topology.name!r}{where} needs: "
                    + "; ".join(missing),
                )
    return sc, specs


# Topology parameters that make a topology need a capability the machine may lack.
_CAPABILITY_KEYS = {"netem": ("delay", "loss"), "htb": ("bw",), "cpulimit": ("cpu",),
                    "ovs-kernel": ("switch",), "ovs-user": ("switch",)}


def _needing_key(sc: Scenario, vname: str, spec: Any) -> str:
    """The scenario key whose value needs the first missing capability, e.g.
    ``topology.params.delay`` (``topology`` when the family itself needs it)."""
    from mcastlab import capabilities

    have = capabilities.detect()
    given = sc.topology.params if not vname else {**sc.topology.params,
                                                   **sc.topology.variants[vname]}
    for need in spec.needs:
        if have.get(need, False):
            continue
        for param in _CAPABILITY_KEYS.get(need, ()):
            if given.get(param):
                where = ("topology.variants." + vname
                         if vname and param in sc.topology.variants[vname] else "topology.params")
                return f"{where}.{param}"
    return "topology"


def _check_cpu_capacity(path: Path, sc: Scenario, vname: str, spec: Any) -> None:
    """CPU-limited hosts the kernel can set up (pinned ones: a cpuset controller, CPUs no
    other testbed's hosts are pinned to) and this machine can honour on the CPUs the
    testbed may use with the emulator's own share left (topologies.cpulimit.spec_problem),
    else refused naming the numbers."""
    from topologies import cpulimit

    def key(param: str) -> str:
        return ("topology.variants." + vname if vname and param in sc.topology.variants[vname]
                else "topology.params") + "." + param

    why = cpulimit.spec_pin_problem(spec)  # refused here, not when the network is built
    if why:
        raise ScenarioError(path, key("cpu_pin"), why)
    why = cpulimit.spec_problem(spec)
    if why:
        raise ScenarioError(path, key("cpu"), why)


# Agents that print no "discovery complete" line: the runner never sees their discovery
# end, so limits deferred to the measurement (cpu_from = "measurement") would never engage
# and the run would measure unlimited hosts labelled with their limit.
NO_DISCOVERY_LINE = {"rti": "RTI Perftest prints no 'discovery complete' line"}


def _check_cpu_from(path: Path, sc: Scenario, vname: str, spec: Any) -> None:
    """``cpu_from = "measurement"`` only with agents whose discovery the runner sees."""
    if spec.params.get("cpu_from") != "measurement":
        return
    for kind in sc.agent_kinds():
        if kind in NO_DISCOVERY_LINE:
            where = ("topology.variants." + vname
                     if vname and "cpu_from" in sc.topology.variants[vname]
                     else "topology.params")
            raise ScenarioError(
                path, f"{where}.cpu_from",
                f"'measurement' cannot engage with agent {kind!r}: "
                f"{NO_DISCOVERY_LINE[kind]}, so the hosts' limits would never take effect "
                "and the run would measure unlimited hosts; allowed with it: 'start'")


def _check_against(path: Path, sc: Scenario, spec: Any) -> None:
    """Placement, participants per host and capture points against one resolved topology."""
    import topologies
    from experiments import placement as placement_mod

    hosts = list(topologies.host_names(spec))
    m = sc.matrix
    if sc.placement != Placement() and sc.placements:
        raise ScenarioError(path, "placements", "give either [placement] or [placements.NAME]")
    if m.placements is not None:
        if not sc.placements:
            raise ScenarioError(path, "matrix.placements", "needs [placements.NAME] tables")
        for name in m.placements:
            if name not in sc.placements:
                raise ScenarioError(
                    path, "matrix.placements",
                    f"unknown placement {name!r} (allowed: {', '.join(sc.placements)})",
                )
    for pname, pl in placement_mod.variants(sc).items():
        key = f"placements.{pname}" if pname else "placement"
        for h in pl.all_hosts():
            if h not in hosts:
                raise ScenarioError(
                    path, key, f"host {h!r} is not in topology {sc.topology.name!r} "
                    f"(allowed: {', '.join(hosts)})",
                )
        for pubs, subs in m.count_pairs():
            counts = placement_mod.per_host(placement_mod.place(pl, hosts, pubs, subs))
            worst = max(counts.items(), key=lambda kv: kv[1])
            if worst[1] > sc.agent.max_participants_per_host:
                raise ScenarioError(
                    path, "matrix",
                    f"{pubs} publishers + {subs} subscribers put {worst[1]} participants on "
                    f"{worst[0]}; the DDS configuration allows at most "
                    f"{sc.agent.max_participants_per_host} per host",
                )
    for kind in sc.agent_kinds():
        if kind == "ddsperf":
            continue
        for n in m.data_len:
            if n < PERFTEST_MIN_DATA_LEN or n > AGENT_MAX_DATA_LEN:
                raise ScenarioError(
                    path, "matrix.data_len",
                    f"got {n}; allowed: {PERFTEST_MIN_DATA_LEN}..{AGENT_MAX_DATA_LEN} bytes for "
                    f"Perftest agents (the sample's {PERFTEST_MIN_DATA_LEN}-byte header is "
                    "included; the agent's -dataLen limit is 16 MiB)",
                )
        from experiments.agent_options import check_extra_args

        why = check_extra_args(sc.agent.extra_args, kind)
        if why:
            in_axis = f" (agent {kind!r} of matrix.agents)" if sc.matrix.agents else ""
            raise ScenarioError(path, "agent.extra_args", why + in_axis)
    _check_same_host(path, sc)
    _check_heartbeat_timing(path, sc)
    _check_protocol_factors(path, sc)
    _check_baseline_repetitions(path, sc)
    if "latency" in m.tests:
        for pubs, _subs in m.count_pairs():
            if pubs != 1:
                raise ScenarioError(path, "matrix", "test 'latency' needs exactly 1 publisher")
    if sc.capture.points:
        names = capture_point_names(spec)
        for p in sc.capture.points:
            if p not in names:
                raise ScenarioError(
                    path, "capture.points",
                    f"unknown capture point {p!r} (allowed: {', '.join(names)})",
                )
        _check_capture_windows(path, sc)


def _check_capture_windows(path: Path, sc: Scenario) -> None:
    """Every count's run must hold its capture window (captures/windows.py)."""
    from captures.windows import WindowError, plan

    for pubs, subs in sc.matrix.count_pairs():
        secs = sc.matrix.execution_time_of(pubs, subs)
        c = sc.capture.for_run(secs)  # unset window keys fitted to the run
        try:
            plan(secs, c["window_s"], c["window_settle_s"], c["window_every_s"])
        except WindowError as exc:
            raise ScenarioError(
                path, "capture.window_s",
                f"{exc} (at {pubs}x{subs}); allowed: a longer execution_time, a shorter "
                "window_settle_s, or window_s = 0 for one capture over the whole run") from None


def _check_same_host(path: Path, sc: Scenario) -> None:
    """``matrix.same_host = "shm"`` needs an agent with a shared-memory transport: every
    agent of a factorial design, at least one in a one-at-a-time design."""
    m = sc.matrix
    if "shm" not in m.same_host:
        return
    kinds = sc.agent_kinds()
    lacking = [k for k in kinds if k in SHM_MISSING]
    if m.design == "one-at-a-time" and shm_agent(sc) is not None:
        return
    if lacking and (m.design == "factorial" or len(lacking) == len(kinds)):
        k = lacking[0]
        raise ScenarioError(
            path, "matrix.same_host",
            f"'shm' cannot run with agent {k!r}: {SHM_MISSING[k]}; agents with shared memory: "
            f"{', '.join(a for a in AGENT_KINDS if a not in SHM_MISSING)}"
            + (" (with design = 'one-at-a-time' the 'shm' switch runs on the first of them in "
               "matrix.agents)" if m.design == "factorial" and len(lacking) < len(kinds) else "")
            + f"; allowed for {k!r}: 'udp'")


def _check_heartbeat_timing(path: Path, sc: Scenario) -> None:
    """``matrix.heartbeat_timing``: Perftest agents only; "scaled" and "scaled-discovery"
    need an agent with -scaleSettings (the native agent) for every run the design would
    make with them, and no value can be asked together with -scaleSettings or
    -scaleDiscovery in agent.extra_args."""
    m = sc.matrix
    if m.heartbeat_timing is None:
        return
    key = "matrix.heartbeat_timing"
    kinds = sc.agent_kinds()
    if "ddsperf" in kinds:
        raise ScenarioError(path, key, "agent 'ddsperf' is not Perftest: it runs Cyclone's "
                            "default timing and has neither; allowed: no heartbeat_timing in a "
                            "campaign with ddsperf")
    given = [a for a in ("-scaleSettings", "-scaleDiscovery") if a in sc.agent.extra_args]
    if given:
        raise ScenarioError(path, key, f"{given[0]} in agent.extra_args sets the timing itself; "
                            "allowed: heartbeat_timing or the option, not both ('scaled' is "
                            "-scaleSettings, 'scaled-discovery' -scaleDiscovery)")
    scaled = [v for v in m.heartbeat_timing if v.startswith("scaled")]
    if not scaled:
        return
    lacking = [k for k in kinds if k not in SCALED_KINDS]
    first_scaled = m.heartbeat_timing[0] in scaled
    if lacking and (len(lacking) == len(kinds) or (m.design == "one-at-a-time" and first_scaled)):
        k = lacking[0]
        raise ScenarioError(
            path, key,
            f"{scaled[0]!r} cannot run with agent {k!r}: {HEARTBEAT_TIMING_MISSING[k]}; agents "
            f"with it: {', '.join(SCALED_KINDS)}"
            + (" (a one-at-a-time design would leave out that agent's runs: 'perftest' first)"
               if len(lacking) < len(kinds) else "")
            + f"; allowed for {k!r}: 'perftest'")


def _check_protocol_factors(path: Path, sc: Scenario) -> None:
    """``matrix.multicast_resend`` and ``matrix.receive_buffer`` (schema.PROTOCOL_FACTORS): a value
    runs only with the agents that can apply it (the others' runs are left out, as for
    heartbeat_timing), so it is refused when no agent of the campaign can, or when a
    one-at-a-time design's baseline value cannot run on one of them; never together with
    the agent option that sets it in agent.extra_args; "multicast_resend" needs multicast
    runs."""
    m = sc.matrix
    kinds = sc.agent_kinds()
    for factor in PROTOCOL_FACTORS:
        values = getattr(m, factor.key)
        if values is None:
            continue
        key = f"matrix.{factor.key}"
        option = factor.option
        if any(a.lower() == option.lower() for a in sc.agent.extra_args):
            raise ScenarioError(path, key, f"{option} in agent.extra_args sets it itself; "
                                f"allowed: {factor.key} or the option, not both")
        if factor is MULTICAST_RESEND and "multicast" not in m.modes:
            raise ScenarioError(path, key, "repairs go to a group only in multicast runs and "
                                f"modes has none ({m.modes}); allowed: add 'multicast' to "
                                "matrix.modes, or no repairs")
        for i, value in enumerate(values):
            lacking = [k for k in kinds if factor.why_not(value, k)]
            baseline = m.design == "one-at-a-time" and i == 0
            if lacking and (len(lacking) == len(kinds) or baseline):
                k = lacking[0]
                able = [a for a in AGENT_KINDS if not factor.why_not(value, a)]
                others = [v for v in factor.values if not factor.why_not(v, k)]
                raise ScenarioError(
                    path, key,
                    f"{value!r} cannot run with agent {k!r}: {factor.why_not(value, k)}; "
                    f"agents with it: {', '.join(able)}"
                    + (" (a one-at-a-time design would leave out that agent's runs: another "
                       "value first)" if len(lacking) < len(kinds) else "")
                    + (f"; allowed for {k!r}: {', '.join(repr(v) for v in others)}" if others
                       else f"; allowed for {k!r}: no {factor.key}"))


def _check_baseline_repetitions(path: Path, sc: Scenario) -> None:
    """``baseline_repetitions`` (and its per-count table) only when the design runs the
    baseline: a one-at-a-time design whose first same_host is "shm" on a first agent
    without shared memory leaves the baseline out, and the key would be ignored."""
    from experiments import matrix as matrix_mod

    m = sc.matrix
    given = [k for k in ("baseline_repetitions", "baseline_repetitions_by_count")
             if getattr(m, k) not in (None, {})]
    if not given:
        return
    baseline = matrix_mod._baseline(sc)
    if matrix_mod._in_design(sc, baseline, baseline):
        return
    kind, same_host = baseline[3], baseline[5]
    raise ScenarioError(
        path, f"matrix.{given[0]}",
        f"the baseline (agent {kind!r} with same_host {same_host!r}) is not run: {kind!r} has "
        f"no shared memory, so these repetitions would be ignored; allowed: 'udp' first in "
        f"matrix.same_host, an agent with shared memory first in matrix.agents, or no "
        f"{given[0]}")


def capture_point_names(spec: Any) -> list[str]:
    """Capture points of a topology before it is built: every host and router interface
    (``h1-eth0``) and every switch port (``s1-eth1``..., one per attached node)."""
    names = [intf for node in [*spec.hosts, *spec.routers] for intf in spec.addresses[node]]
    for sw, attached in spec.switches.items():
        names += [f"{sw}-eth{k}" for k in range(1, len(attached) + 1)]
    return names
