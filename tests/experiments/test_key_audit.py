"""Every scenario key changes something observable, or is listed as intentionally neutral.

The bug this audit guards against: ``delay``/``loss`` passed validation and never reached
a link. This audit walks the pydantic schema (and every topology family's parameter table)
and, for each key, changes its value and checks that the *layer where the key must act*
differs:

- ``runs``: the expanded run configurations (config.json, run ids);
- ``argv``: the agents' command lines and environments;
- ``topology``: the resolved topology (nodes, addresses, needs, parameters);
- ``links``: the arguments that reach tc on every link (topologies.shaping);
- ``tcpdump``: the capture command lines;
- ``windows``: each run's capture windows (captures/windows.py, planned from the scenario);
- ``fidelity``: the fidelity verdict on fixed metrics.

A key added to the schema without an entry here (or in
``experiments.scenario.NO_MEASURABLE_EFFECT``) fails the test. Pure logic, no root.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any, get_args

import pytest
from pydantic import BaseModel

import topologies
from captures import capture
from experiments import agents, capture_windows, fidelity, matrix
from experiments import scenario as scenario_mod
from experiments.scenario import NO_MEASURABLE_EFFECT, Scenario
from mcastlab import capabilities
from topologies import lab, lan, routed, shaping
from topologies.spec import COMMON_PARAMS

BASE: dict[str, Any] = {
    "campaign": {"name": "audit"},
    "topology": {"name": "lan", "params": {"hosts": 4}},
    "agent": {"kind": "native"},
    "matrix": {"participants": [3], "modes": ["unicast"], "execution_time": 10,
               "latency_count": [100]},
    "capture": {"points": ["h1-eth0"]},
}

# Metrics just on one side of every default fidelity threshold, so moving a threshold
# across them changes the verdict's reasons.
METRICS = {"socket_drop_share": 0.05, "cpu_pressure_some_share": 0.9, "wakeup_p99_us": 10000.0,
           "throttled_share": 0.6, "pub_rate_achieved_share": 0.9, "shortfall_share": 0.12,
           "plane_wakeup_p99_us": 6000.0, "softnet_drop_share": 0.002, "steal_share": 0.05,
           "router_drop_share": 0.002}

# key -> (value to set, layer that must change). Dotted keys are set in BASE.
ALTERNATIVES: dict[str, tuple[Any, str]] = {
    "campaign.name": ("audit2", "runs"),
    "topology.name": ("routed", "topology"),
    "topology.params": ({"hosts": 6}, "topology"),
    "topology.variants": ({"small": {"hosts": 2}, "big": {"hosts": 6}}, "topology"),
    "agent.kind": ("ddsperf", "argv"),
    "agent.domain": (3, "argv"),
    "agent.extra_args": (["-keyed"], "argv"),
    "agent.max_participants_per_host": (1, "error"),  # 3x3 on 4 hosts puts 2 on h1: refused
    "matrix.participants": ([1], "argv"),
    "matrix.latency_count_by_count": ({"3": 10}, "argv"),
    "matrix.publishers": ([2], "argv"),  # with subscribers (see _set)
    "matrix.subscribers": ([2], "argv"),
    "matrix.modes": (["multicast"], "argv"),
    "matrix.discovery": (["unicast-peers"], "argv"),
    "matrix.reliability": (["best-effort"], "argv"),
    "matrix.data_len": ([1000], "argv"),
    "matrix.latency_count": ([10], "argv"),
    "matrix.tests": (["latency"], "argv"),
    "matrix.execution_time": (20, "argv"),
    "matrix.execution_time_by_count": ({"3": 30}, "argv"),
    "matrix.num_iter": (5000, "argv"),
    "matrix.repetitions": (2, "runs"),
    "matrix.repetitions_by_count": ({"3": 2}, "runs"),
    "matrix.baseline_repetitions": (3, "runs"),  # one-at-a-time design (CONTEXT)
    "matrix.baseline_repetitions_by_count": ({"3": 3}, "runs"),  # likewise
    "matrix.pub_rate": ([100], "argv"),
    "matrix.warmup_samples": (100, "runs"),  # tables drop them from latency.parquet
    "matrix.placements": (["a"], "runs"),  # with [placements.a] (see _set)
    "matrix.agents": (["native", "fastdds"], "argv"),  # each run's agent binary
    "matrix.fanout": (["joined-only"], "argv"),  # LD_PRELOAD of the IP_MULTICAST_ALL=0 shim
    "matrix.same_host": (["shm"], "argv"),  # no -transport UDPv4 (CONTEXT: Fast DDS agent)
    "matrix.heartbeat_timing": (["perftest"], "argv"),  # no -scaleSettings (CONTEXT: 12x12)
    "matrix.multicast_resend": (["first-nack"], "argv"),  # -multicastResendOnFirstNack
    "matrix.receive_buffer": (["stock"], "argv"),  # -receiveBufferSize 212992
    "matrix.design": ("one-at-a-time", "runs"),  # with two factors (CONTEXT): fewer runs
    "placement.strategy": ("explicit", "argv"),  # with publishers/subscribers (see _set)
    "placement.hosts": (["h3"], "argv"),
    "placement.publishers": (["h4"], "argv"),
    "placement.subscribers": (["h4"], "argv"),
    "placements": ({"a": {"hosts": ["h2"]}}, "argv"),
    "timing.warmup": (5.0, "runs"),  # seconds slept between convergence and agents
    "capture.points": (["h2-eth0"], "tcpdump"),
    "capture.snaplen": (128, "tcpdump"),
    "capture.ring_files": (5, "tcpdump"),
    "capture.ring_mb": (8, "tcpdump"),
    "capture.window_s": (3.0, "windows"),
    "capture.window_settle_s": (1.0, "windows"),
    "capture.window_every_s": (0.0, "windows"),  # with execution_time 30 (CONTEXT)
    "fidelity.max_socket_drop_share": (0.1, "fidelity"),
    "fidelity.max_cpu_pressure_share": (0.5, "fidelity"),
    "fidelity.max_wakeup_p99_us": (20000.0, "fidelity"),
    "fidelity.max_throttled_share": (0.9, "fidelity"),
    "fidelity.min_pub_rate_share": (0.5, "fidelity"),
    "fidelity.max_allocation_shortfall": (0.5, "fidelity"),
    "fidelity.max_plane_wakeup_p99_us": (20000.0, "fidelity"),
    "fidelity.max_softnet_drop_share": (0.5, "fidelity"),
    "fidelity.max_router_drop_share": (0.5, "fidelity"),
    "fidelity.max_steal_share": (0.02, "fidelity"),
    "resources": (False, "runs"),  # the resource table is sampled or not
    "cluster": ({"servers": ["localhost", "10.0.0.2"]}, "runs"),  # the servers, per run
    "quick": ({"matrix": {"execution_time": 3}}, "quick"),
}

# What a key needs in base and changed scenario alike to have anything to act on.
CONTEXT: dict[str, dict[str, Any]] = {
    "capture.window_every_s": {"matrix.execution_time": 30, "capture.window_every_s": 10.0},
    "matrix.same_host": {"agent.kind": "fastdds"},  # the native agent refuses "shm"
    "matrix.heartbeat_timing": {"matrix.participants": [12]},  # above 20 participants
    "matrix.multicast_resend": {"matrix.modes": ["multicast"]},  # only there is a group
    "matrix.baseline_repetitions": {"matrix.design": "one-at-a-time"},
    "matrix.baseline_repetitions_by_count": {"matrix.design": "one-at-a-time"},
    "matrix.design": {"matrix.reliability": ["reliable", "best-effort"],
                      "topology.variants": {"small": {"hosts": 4}, "big": {"hosts": 6}}},
}

# Topology parameters (every family): value to set and the layer. Shaping parameters must
# reach the links, not just the resolved parameters: that is the bug this audit guards.
TOPOLOGY_PARAMS: dict[str, tuple[Any, str]] = {
    "hosts": (2, "topology"),
    "bw": (10, "links"),
    "delay": ("10ms", "links"),
    "loss": (5, "links"),
    "switch": ("ovs-user", "topology"),
    "snooping": (False, "topology"),
    "querier": (False, "topology"),
    "igmp": ("2", "topology"),
    "flood_unregistered": (False, "topology"),
    "cpu": (0.5, "topology"),
    "cpu_period_us": (100_000, "topology"),
    "cpu_period_step_us": (500, "topology"),
    "cpu_pin": (True, "topology"),
    "cpu_from": ("measurement", "topology"),
    "emulated_servers": (2, "topology"),
    "routers": (3, "topology"),
    "shape": ("ring", "topology"),
    "mrouting": ("smcroute", "topology"),
    "rp": ("bsr", "topology"),
    "rp_router": ("r2", "topology"),
    "spt": ("never", "topology"),
    "pim_daemon": ("frr", "topology"),
    # the kernel `auto` does not pick on this machine
    "router_kernel": ("host" if not capabilities.detect()["mroute"] else "uml", "topology"),
    "router_delay": ("5ms", "router links"),  # netem in the routers' kernels
    "router_loss": (1, "router links"),
    "smc_groups": ("239.1.0.0/16", "topology"),
    "smc_mode": ("sg", "topology"),
    "smc_source": ("h3", "topology"),
    "smc_to": ("s2", "topology"),
}


def _model_of(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    return None


def schema_keys(model: type[BaseModel] = Scenario, prefix: str = "") -> list[str]:
    """Dotted leaf keys of the scenario schema (a nested table's keys, not the table)."""
    keys = []
    for name, field in model.model_fields.items():
        sub = _model_of(field.annotation)
        if sub is not None:
            keys += schema_keys(sub, f"{prefix}{name}.")
        else:
            keys.append(f"{prefix}{name}")
    return keys


def _set(raw: dict[str, Any], key: str, value: Any) -> dict[str, Any]:
    raw = copy.deepcopy(raw)
    parts = key.split(".")
    if len(parts) == 1:
        raw[key] = value
    else:
        raw.setdefault(parts[0], {})[parts[1]] = value
    m, pl = raw["matrix"], raw.setdefault("placement", {})
    if key in ("matrix.publishers", "matrix.subscribers"):
        m.pop("participants")
        m.setdefault("publishers", [2])
        m.setdefault("subscribers", [2])
    if key == "matrix.num_iter":
        m["execution_time"] = 0
    if key == "matrix.tests":
        m["participants"] = [1]  # the latency test has one publisher
    if key == "matrix.placements":
        raw["placements"] = {"a": {"hosts": ["h2"]}}
        raw.pop("placement")
    if key == "placements":
        raw.pop("placement")
    if key in ("placement.strategy", "placement.publishers", "placement.subscribers"):
        pl.update({"strategy": "explicit", "publishers": pl.get("publishers", ["h1"]),
                   "subscribers": pl.get("subscribers", ["h2"])})
    if key == "topology.name":
        raw["capture"]["points"] = ["h1-eth0"]
    return raw


def observe(raw: dict[str, Any]) -> dict[str, Any]:
    """Every layer a scenario can change, computed without building anything."""
    quick = "quick" in raw and bool(raw["quick"])
    sc = scenario_mod.from_dict(raw)
    specs = {v: topologies.resolve(sc.topology.name, p) for v, p in sc.topology.resolved().items()}
    for spec in specs.values():
        scenario_mod._check_against(Path("audit.toml"), sc, spec)
    hosts = {v: topologies.host_names(s) for v, s in specs.items()}
    runs = matrix.expand(sc, hosts)
    argv = []
    for cfg in runs:
        ips = {h: specs[cfg["topology_variant"]].host_ip(h) for h in cfg["placement"].values()}
        argv.append([(p.name, p.host, p.argv, p.env)
                     for p in agents.build(cfg, ips, Path("/run/agents"))])
    c = sc.capture
    return {
        "runs": [{k: v for k, v in cfg.items() if k != "scenario"} for cfg in runs],
        "argv": argv,
        "topology": {v: s.describe() for v, s in specs.items()},
        "links": {v: shaping.link_params(s.params) for v, s in specs.items()},
        "tcpdump": [capture.tcpdump_argv(p, Path(f"/pcaps/{p}.pcap"), c.snaplen, c.ring_files,
                                         c.ring_mb) for p in c.points],
        # each run's windows as the runner plans them: from its config, where window keys
        # the scenario left unset are fitted to the run (captures/windows.py fitted)
        "windows": [capture_windows.plan_of(cfg) for cfg in runs],
        "fidelity": (fidelity.judge(METRICS, fidelity.Thresholds.from_dict(
            sc.fidelity.model_dump())), fidelity.judge_limited(
                METRICS, fidelity.Thresholds.from_dict(sc.fidelity.model_dump()))),
        "quick": scenario_mod.from_dict(raw, quick=True).model_dump() if quick else None,
    }


def test_every_schema_key_is_audited() -> None:
    """A new key fails here until it gets an ALTERNATIVES entry or a documented reason."""
    keys = set(schema_keys())
    unaudited = keys - ALTERNATIVES.keys() - NO_MEASURABLE_EFFECT.keys()
    assert not unaudited, (
        f"scenario keys {sorted(unaudited)} are neither shown to change something observable "
        "(tests/experiments/test_key_audit.py ALTERNATIVES) nor listed in "
        "experiments.scenario.NO_MEASURABLE_EFFECT")
    stale = (ALTERNATIVES.keys() | NO_MEASURABLE_EFFECT.keys()) - keys
    assert not stale, f"audit entries for keys the schema no longer has: {sorted(stale)}"
    assert not ALTERNATIVES.keys() & NO_MEASURABLE_EFFECT.keys()


def test_neutral_list_is_short_and_documented() -> None:
    assert len(NO_MEASURABLE_EFFECT) <= 6
    assert all(len(reason) > 10 for reason in NO_MEASURABLE_EFFECT.values())


@pytest.mark.parametrize("key", sorted(ALTERNATIVES))
def test_key_changes_its_layer(key: str) -> None:
    value, layer = ALTERNATIVES[key]
    start = BASE
    for ctx_key, ctx_value in CONTEXT.get(key, {}).items():
        start = _set(start, ctx_key, ctx_value)
    base = observe(start)
    changed = _set(start, key, value)
    if layer == "error":  # the key's effect is to refuse what the base accepts
        with pytest.raises(scenario_mod.ScenarioError):
            observe(changed)
        return
    if layer == "quick":
        changed["quick"] = value
    after = observe(changed)
    assert after[layer] != base[layer], f"{key} = {value!r} changed nothing in {layer}"


@pytest.mark.parametrize("key", sorted(TOPOLOGY_PARAMS))
def test_topology_param_changes_its_layer(key: str) -> None:
    value, layer = TOPOLOGY_PARAMS[key]
    lan_names = {p.name for p in lan.PARAMS}
    family = "lan" if key in lan_names else "routed"
    params = {"mrouting": "smcroute"} if key.startswith("smc_") else {}
    if key in ("rp_router", "shape"):
        params["routers"] = 3
    before = topologies.resolve(family, params)
    after = topologies.resolve(family, {**params, key: value})
    if layer == "links":
        assert shaping.link_params(after.params) != shaping.link_params(before.params)
        assert shaping.requested(after.params), f"{key} is not read back after building"
    elif layer == "router links":  # applied and read back by topologies/net.py
        assert shaping.requested_routers(after.params) != shaping.requested_routers(
            before.params), f"{key} = {value!r} reaches no router link"
    else:
        assert after.describe() != before.describe(), f"{key} = {value!r} changed nothing"


def test_every_topology_param_is_audited() -> None:
    names = {p.name for table in (COMMON_PARAMS, lan.PARAMS, routed.PARAMS, lab.LAB_PARAMS,
                                  lab.PRODUCTION_PARAMS) for p in table}
    assert names - TOPOLOGY_PARAMS.keys() == set(), "topology parameters not audited"


def test_literal_choices_are_all_valid_alternatives() -> None:
    """The audit's values for Literal keys are among the allowed ones (no silent refusal)."""
    from experiments.scenario import Agent

    assert ALTERNATIVES["agent.kind"][0] in get_args(Agent.model_fields["kind"].annotation)
