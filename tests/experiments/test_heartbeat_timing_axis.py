"""The ``[matrix] heartbeat_timing`` axis: Perftest's heartbeat and acknowledgement timing
at every count ("perftest"), the native agent's -scaleSettings above 20 participants
("scaled") or its -scaleDiscovery (the scaled timing until discovery completes, then
Perftest's: "scaled-discovery"), named by the scenario instead of implied by the
participant count.

Validation before anything is built (an agent without -scaleSettings, ddsperf, a
contradiction with agent.extra_args: one message naming file, key, reason and what is
allowed), the expansion (existing campaigns keep their ids and configurations; "scaled" is
left out for agents that do not have it), the agents' command lines and what the manifest
records. Pure logic, no root (the wire: tests/captures/test_heartbeat_spacing_netns.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from experiments import agents, matrix
from experiments import scenario as scenario_mod
from experiments.scenario import ScenarioError
from tests.helpers.scenarios import expanded_runs, lan_scenario

IPS = {h: f"10.0.0.{i}" for i, h in enumerate(["h1", "h2", "h3", "h4"], 1)}


def _write(tmp_path: Path, extra: str = "", kind: str = "native", count: int = 12,
           extra_args: list[str] | None = None) -> Path:
    path = tmp_path / "hb.toml"
    path.write_text(lan_scenario("hb", agent=kind, extra_args=extra_args,
                                 matrix=f"participants = [{count}]\nmodes = [\"unicast\"]\n"
                                 "execution_time = 5\n" + extra))
    return path


def _scaled(run: dict[str, Any]) -> set[bool]:
    return {"-scaleSettings" in p.argv for p in agents.build(run, IPS, Path("/run/a"))}


def test_unset_keeps_ids_configs_and_the_native_agents_scaling(tmp_path: Path) -> None:
    runs = expanded_runs(_write(tmp_path))
    assert [r["run_id"] for r in runs] == ["lan-rel-100B-12x12-unicast-r1"]
    assert "heartbeat_timing" not in runs[0]  # resume: stored configs lack the key
    assert _scaled(runs[0]) == {True}
    assert agents.heartbeat_timing(runs[0]) == "scaled"


def test_both_timings_are_named_in_ids_configs_and_command_lines(tmp_path: Path) -> None:
    runs = expanded_runs(_write(tmp_path, 'heartbeat_timing = ["perftest", "scaled"]\n'))
    assert [r["run_id"] for r in runs] == ["lan-rel-100B-hb-perftest-12x12-unicast-r1",
                                           "lan-rel-100B-hb-scaled-12x12-unicast-r1"]
    assert [r["heartbeat_timing"] for r in runs] == ["perftest", "scaled"]
    assert [_scaled(r) for r in runs] == [{False}, {True}]
    assert [agents.heartbeat_timing(r) for r in runs] == ["perftest", "scaled"]


def test_up_to_20_participants_both_are_perftests(tmp_path: Path) -> None:
    """-scaleSettings has no effect up to 20 participants; the manifest says what ran."""
    runs = expanded_runs(_write(tmp_path, 'heartbeat_timing = ["scaled"]\n', count=10))
    assert [agents.heartbeat_timing(r) for r in runs] == ["perftest"]
    assert _scaled(runs[0]) == {False}


@pytest.mark.parametrize("kind,timing", [("fastdds", "scaled"), ("rti", "scaled"),
                                         ("fastdds", "scaled-discovery")])
def test_scaled_with_an_agent_without_it_is_refused(tmp_path: Path, kind: str,
                                                    timing: str) -> None:
    path = _write(tmp_path, f'heartbeat_timing = ["{timing}"]\n', kind=kind)
    with pytest.raises(ScenarioError) as e:
        scenario_mod.validate(path, check_machine=False)
    msg = str(e.value)
    assert str(path) in msg and "matrix.heartbeat_timing" in msg and kind in msg
    assert "allowed for" in msg and "'perftest'" in msg


def test_ddsperf_is_refused(tmp_path: Path) -> None:
    path = _write(tmp_path, 'heartbeat_timing = ["perftest"]\n', kind="ddsperf")
    with pytest.raises(ScenarioError, match=r"ddsperf.*not Perftest"):
        scenario_mod.validate(path, check_machine=False)


@pytest.mark.parametrize("option", ["-scaleSettings", "-scaleDiscovery"])
def test_the_timing_and_its_option_together_are_refused(tmp_path: Path, option: str) -> None:
    path = _write(tmp_path, 'heartbeat_timing = ["perftest"]\n', extra_args=[option])
    with pytest.raises(ScenarioError, match=f"{option} in agent.extra_args sets the timing"):
        scenario_mod.validate(path, check_machine=False)


def test_scaled_discovery_gives_the_agent_scale_discovery(tmp_path: Path) -> None:
    runs = expanded_runs(_write(tmp_path, 'heartbeat_timing = ["scaled-discovery"]\n'))
    # one value: the run id is unchanged (the axis does not vary), the configuration has it
    assert [r["run_id"] for r in runs] == ["lan-rel-100B-12x12-unicast-r1"]
    assert runs[0]["heartbeat_timing"] == "scaled-discovery"
    for p in agents.build(runs[0], IPS, Path("/run/a")):
        assert p.argv.count("-scaleDiscovery") == 1 and "-scaleSettings" not in p.argv
    assert agents.heartbeat_timing(runs[0]) == "scaled-discovery"


def test_the_option_in_extra_args_is_what_the_manifest_names(tmp_path: Path) -> None:
    run = expanded_runs(_write(tmp_path, extra_args=["-scaleDiscovery"]))[0]
    assert agents.heartbeat_timing(run) == "scaled-discovery"
    for p in agents.build(run, IPS, Path("/run/a")):
        assert p.argv.count("-scaleDiscovery") == 1 and "-scaleSettings" not in p.argv


def test_scale_discovery_in_extra_args_is_refused_for_fast_dds(tmp_path: Path) -> None:
    path = _write(tmp_path, kind="fastdds", extra_args=["-scaleDiscovery"])
    with pytest.raises(ScenarioError, match="not accepted by the Fast DDS agent"):
        scenario_mod.validate(path, check_machine=False)


def test_unknown_and_repeated_values_are_refused(tmp_path: Path) -> None:
    for bad in ('["often"]', '["scaled", "scaled"]', "[]"):
        with pytest.raises(ScenarioError, match="heartbeat_timing"):
            scenario_mod.validate(_write(tmp_path, f"heartbeat_timing = {bad}\n"),
                                  check_machine=False)


def test_factorial_leaves_scaled_out_for_agents_without_it(tmp_path: Path) -> None:
    runs = expanded_runs(_write(tmp_path, 'agents = ["native", "fastdds"]\n'
                                  'heartbeat_timing = ["perftest", "scaled"]\n'))
    got = sorted((r["agent"], r["heartbeat_timing"]) for r in runs)
    assert got == [("fastdds", "perftest"), ("native", "perftest"), ("native", "scaled")]
    sc, _ = scenario_mod.validate(tmp_path / "hb.toml", check_machine=False)
    assert matrix.run_count(sc) == len(runs)


def test_one_at_a_time_switches_the_timing_on_the_baseline_agent(tmp_path: Path) -> None:
    runs = expanded_runs(_write(tmp_path, 'agents = ["native", "fastdds"]\n'
                                  'heartbeat_timing = ["perftest", "scaled"]\n'
                                  'design = "one-at-a-time"\n'))
    got = sorted((r["agent"], r["heartbeat_timing"]) for r in runs)
    assert got == [("fastdds", "perftest"), ("native", "perftest"), ("native", "scaled")]
    sc, _ = scenario_mod.validate(tmp_path / "hb.toml", check_machine=False)
    assert matrix.run_count(sc) == len(runs)


def test_one_at_a_time_with_scaled_first_and_an_agent_without_it_is_refused(
        tmp_path: Path) -> None:
    path = _write(tmp_path, 'agents = ["native", "fastdds"]\n'
                            'heartbeat_timing = ["scaled", "perftest"]\n'
                            'design = "one-at-a-time"\n')
    with pytest.raises(ScenarioError, match="'perftest' first"):
        scenario_mod.validate(path, check_machine=False)
