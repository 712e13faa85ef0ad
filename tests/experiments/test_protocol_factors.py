"""Connext's reliability choices as campaign axes: ``[matrix] multicast_resend`` (a
repair goes to the group from the second NACK, as Connext's multicast_resend_threshold 2,
or from the first) and ``[matrix] receive_buffer`` (Perftest's 2 MiB or a stock kernel's
212,992 B).

Validation before anything is built (a value no agent of the campaign can apply, a
contradiction with agent.extra_args, multicast_resend without multicast runs: one message
naming file, key, reason and what is allowed), the expansion (unset: ids and
configurations as before; a value runs only with the agents that apply it), the agents'
command lines and what the manifest's agent_qos marks as asked for. Pure logic, no root
(the wire: tests/captures/test_protocol_factors_netns.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from experiments import agent_qos, agents
from experiments import scenario as scenario_mod
from experiments.scenario import ScenarioError
from tests.helpers.scenarios import expanded_runs, lan_scenario

IPS = {h: f"10.0.0.{i}" for i, h in enumerate(["h1", "h2", "h3", "h4"], 1)}
BOTH = '["unicast", "multicast"]'


def _write(tmp_path: Path, extra: str = "", kind: str = "native", modes: str = BOTH,
           extra_args: list[str] | None = None) -> Path:
    path = tmp_path / "proto.toml"
    path.write_text(lan_scenario("proto", agent=kind, extra_args=extra_args,
                                 matrix=f"participants = [3]\nmodes = {modes}\n"
                                 "execution_time = 5\n" + extra))
    return path


def _argvs(run: dict[str, Any]) -> list[list[str]]:
    return [p.argv for p in agents.build(run, IPS, Path("/run/a"))]


def test_unset_keeps_ids_configs_and_command_lines(tmp_path: Path) -> None:
    runs = expanded_runs(_write(tmp_path))
    assert [r["run_id"] for r in runs] == ["lan-rel-100B-3x3-unicast-r1",
                                           "lan-rel-100B-3x3-multicast-r1"]
    for r in runs:
        assert "multicast_resend" not in r and "receive_buffer" not in r  # stored configs lack them
        for argv in _argvs(r):
            assert "-multicastResendOnFirstNack" not in argv and "-receiveBufferSize" not in argv


def test_resend_values_are_named_configured_and_applied_in_multicastexpanded_runs(
        tmp_path: Path) -> None:
    runs = expanded_runs(_write(tmp_path, 'multicast_resend = ["second-nack", "first-nack"]\n'))
    assert [r["run_id"] for r in runs] == [
        "lan-rel-100B-resend-second-nack-3x3-unicast-r1",
        "lan-rel-100B-resend-second-nack-3x3-multicast-r1",
        "lan-rel-100B-resend-first-nack-3x3-unicast-r1",
        "lan-rel-100B-resend-first-nack-3x3-multicast-r1"]
    assert [r["multicast_resend"] for r in runs] == ["second-nack", "second-nack",
                                                     "first-nack", "first-nack"]
    # "second-nack" is the native agent's own; only a multicast run has a group
    applied = [{"-multicastResendOnFirstNack" in a for a in _argvs(r)} for r in runs]
    assert applied == [{False}, {False}, {False}, {True}]


def test_a_single_value_is_configured_but_not_named(tmp_path: Path) -> None:
    runs = expanded_runs(_write(tmp_path, 'receive_buffer = ["stock"]\n'))
    assert [r["run_id"] for r in runs] == ["lan-rel-100B-3x3-unicast-r1",
                                           "lan-rel-100B-3x3-multicast-r1"]
    assert {r["receive_buffer"] for r in runs} == {"stock"}  # resume refuses other buffers
    for r in runs:
        for argv in _argvs(r):
            i = argv.index("-receiveBufferSize")
            assert argv[i + 1] == "212992"


def test_receive_buffer_applies_to_the_fast_dds_agent(tmp_path: Path) -> None:
    runs = expanded_runs(_write(tmp_path, 'receive_buffer = ["perftest", "stock"]\n',
                        kind="fastdds", modes='["unicast"]'))
    assert [r["run_id"] for r in runs] == ["lan-rel-100B-rcvbuf-perftest-3x3-unicast-r1",
                                           "lan-rel-100B-rcvbuf-stock-3x3-unicast-r1"]
    assert [{"-receiveBufferSize" in a for a in _argvs(r)} for r in runs] == [{False}, {True}]


def test_a_value_runs_only_with_the_agents_that_apply_it(tmp_path: Path) -> None:
    extra = 'agents = ["native", "rti"]\nmulticast_resend = ["second-nack", "first-nack"]\n'
    runs = expanded_runs(_write(tmp_path, extra, modes='["multicast"]'))
    assert [(r["agent"], r["multicast_resend"]) for r in runs] == [
        ("native", "second-nack"), ("native", "first-nack"), ("rti", "second-nack")]


def test_one_at_a_time_switches_each_factor_alone(tmp_path: Path) -> None:
    extra = ('multicast_resend = ["second-nack", "first-nack"]\n'
             'receive_buffer = ["perftest", "stock"]\ndesign = "one-at-a-time"\n')
    runs = expanded_runs(_write(tmp_path, extra, modes='["multicast"]'))
    assert [(r["multicast_resend"], r["receive_buffer"]) for r in runs] == [
        ("second-nack", "perftest"), ("second-nack", "stock"), ("first-nack", "perftest")]


@pytest.mark.parametrize(("kind", "extra", "modes", "says"), [
    ("fastdds", 'multicast_resend = ["second-nack"]\n', BOTH,
     "'second-nack' cannot run with agent 'fastdds': Fast DDS 2.9 has no multicast resend"),
    ("rti", 'multicast_resend = ["first-nack"]\n', BOTH,
     "'first-nack' cannot run with agent 'rti': Connext's multicast_resend_threshold is 2"),
    ("rti", 'receive_buffer = ["stock"]\n', BOTH, "has no -receiveBufferSize"),
    ("ddsperf", 'receive_buffer = ["perftest"]\n', BOTH, "ddsperf is not Perftest"),
    ("native", 'multicast_resend = ["first-nack"]\n', '["unicast"]',
     "repairs go to a group only in multicast runs"),
    ("native", 'receive_buffer = ["stock"]\n[agent]\n', BOTH, None),
])
def test_refused_with_file_key_reason_and_choices(tmp_path: Path, kind: str, extra: str,
                                                  modes: str, says: str | None) -> None:
    if says is None:  # the option in extra_args and the factor together
        path = _write(tmp_path, 'receive_buffer = ["stock"]\n', kind, modes,
                      extra_args=["-receiveBufferSize", "65536"])
        says = "-receiveBufferSize in agent.extra_args sets it itself"
    else:
        path = _write(tmp_path, extra, kind=kind, modes=modes)
    with pytest.raises(ScenarioError) as e:
        scenario_mod.validate(path, check_machine=False)
    text = str(e.value)
    assert str(path) in text and "matrix." in text and "allowed" in text, text
    assert says in text, text


def test_one_at_a_time_baseline_value_must_run_on_every_agent(tmp_path: Path) -> None:
    extra = ('agents = ["rti", "native"]\nmulticast_resend = ["first-nack", "second-nack"]\n'
             'design = "one-at-a-time"\n')
    with pytest.raises(ScenarioError, match="would leave out that agent's runs"):
        scenario_mod.validate(_write(tmp_path, extra, modes='["multicast"]'),
                              check_machine=False)


def test_agent_qos_marks_the_asked_settings() -> None:
    cfg = {"mode": "multicast", "data_len": 100, "test": "throughput",
           "multicast_resend": "first-nack", "receive_buffer": "stock"}
    out = agent_qos.evidence(cfg, Path("/nonexistent"), [])
    assert out["asked"] == {
        "writer.multicast_resend_threshold": "multicast_resend = first-nack",
        "transport.recv_socket_buffer_size": "receive_buffer = stock"}
    assert out["perftest"]["writer.multicast_resend_threshold"] == "2"
    unicast = agent_qos.evidence({**cfg, "mode": "unicast"}, Path("/nonexistent"), [])
    assert unicast["perftest"]["writer.multicast_resend_threshold"] == "none"
