"""The ``[matrix] same_host`` axis (H-shm): same-host pairs over UDP (every agent
gets ``-transport UDPv4``) or Perftest's default (UDPv4|SHMEM: shared memory where the
implementation takes it).

Validation before anything is built ("shm" with an agent that has no shared memory: one
message naming file, key, the reason and what is allowed), the expansion (existing
campaigns keep their run ids and configurations; a one-at-a-time design switches "shm" on
the first agent that has it), the agents' command lines, and the runner's evidence and
check: a run whose agents did not use what the scenario asked for fails. Pure logic, no
root (the transports themselves: tests/agents/test_agent_netns.py and
tests/experiments/test_campaign_netns.py::test_same_host_axis_campaign).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from experiments import agents, samehost
from experiments import scenario as scenario_mod
from experiments.runner import CampaignRunner, RunFailed
from experiments.scenario import ScenarioError
from tests.helpers.scenarios import expanded_runs, lan_scenario

SCENARIO = lan_scenario("sh", agent="fastdds", matrix='participants = [3]\n'
                        'modes = ["unicast", "multicast"]\nexecution_time = 5\n')
IPS = {h: f"10.0.0.{i}" for i, h in enumerate(["h1", "h2", "h3", "h4"], 1)}


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "sh.toml"
    path.write_text(text)
    return path


def _transport(argv: list[str]) -> str | None:
    return argv[argv.index("-transport") + 1] if "-transport" in argv else None


def test_default_is_udp_and_campaigns_keep_their_ids(tmp_path: Path) -> None:
    plain = expanded_runs(_write(tmp_path, SCENARIO))
    udp = expanded_runs(_write(tmp_path, SCENARIO + 'same_host = ["udp"]\n'))
    assert plain == udp
    assert [r["run_id"] for r in plain] == ["lan-rel-100B-3x3-unicast-r1",
                                            "lan-rel-100B-3x3-multicast-r1"]
    assert all("same_host" not in r for r in plain)  # resume: stored configs lack the key
    for p in agents.build(plain[0], IPS, Path("/run/a")):
        assert _transport(p.argv) == "UDPv4"


def test_shm_runs_name_the_setting_and_give_perftests_default(tmp_path: Path) -> None:
    runs = expanded_runs(_write(tmp_path, SCENARIO + 'same_host = ["udp", "shm"]\n'))
    assert [r["run_id"] for r in runs] == [
        "lan-rel-100B-samehost-udp-3x3-unicast-r1", "lan-rel-100B-samehost-udp-3x3-multicast-r1",
        "lan-rel-100B-samehost-shm-3x3-unicast-r1", "lan-rel-100B-samehost-shm-3x3-multicast-r1"]
    assert [r.get("same_host") for r in runs] == [None, None, "shm", "shm"]
    assert {_transport(p.argv) for p in agents.build(runs[0], IPS, Path("/run/a"))} == {"UDPv4"}
    assert {_transport(p.argv) for p in agents.build(runs[2], IPS, Path("/run/a"))} == {None}


@pytest.mark.parametrize("kind", ["native", "native-asan", "ddsperf"])
def test_shm_with_an_agent_without_shared_memory_is_refused(tmp_path: Path, kind: str) -> None:
    text = SCENARIO.replace('kind = "fastdds"', f'kind = "{kind}"') + 'same_host = ["shm"]\n'
    path = _write(tmp_path, text)
    with pytest.raises(ScenarioError) as e:
        scenario_mod.validate(path, check_machine=False)
    msg = str(e.value)
    assert msg.startswith(f"{path}: matrix.same_host: 'shm' cannot run with agent '{kind}'")
    assert "allowed for" in msg and "'udp'" in msg
    assert "fastdds" in msg  # which agents have shared memory


def test_bad_values_are_refused(tmp_path: Path) -> None:
    for bad, words in ((['"tcp"'], "udp"), (['"shm"', '"shm"'], "listed twice"), ([], "empty")):
        path = _write(tmp_path, SCENARIO + f"same_host = [{', '.join(bad)}]\n")
        with pytest.raises(ScenarioError) as e:
            scenario_mod.validate(path, check_machine=False)
        assert "matrix.same_host" in str(e.value) and words in str(e.value)


def test_factorial_with_a_mixed_agent_list_is_refused_one_at_a_time_is_not(
        tmp_path: Path) -> None:
    text = SCENARIO + 'agents = ["native", "fastdds"]\nsame_host = ["udp", "shm"]\n'
    with pytest.raises(ScenarioError) as e:
        scenario_mod.validate(_write(tmp_path, text), check_machine=False)
    assert "one-at-a-time" in str(e.value) and "'native'" in str(e.value)
    runs = expanded_runs(_write(tmp_path, text + 'design = "one-at-a-time"\n'))
    groups = sorted({(r["agent"], r.get("same_host", "udp")) for r in runs})
    # baseline native/udp, the implementation switched, and "shm" switched on Fast DDS
    assert groups == [("fastdds", "shm"), ("fastdds", "udp"), ("native", "udp")]


def test_one_at_a_time_with_a_shared_memory_baseline_switches_shm_alone(
        tmp_path: Path) -> None:
    text = (SCENARIO + 'agents = ["fastdds", "native"]\nsame_host = ["udp", "shm"]\n'
            'design = "one-at-a-time"\n')
    groups = sorted({(r["agent"], r.get("same_host", "udp")) for r in expanded_runs(_write(tmp_path,
                                                                                     text))})
    assert groups == [("fastdds", "shm"), ("fastdds", "udp"), ("native", "udp")]


def _stderr(tmp_path: Path, texts: dict[str, str]) -> Path:
    d = tmp_path / "agents"
    d.mkdir(exist_ok=True)
    for name, text in texts.items():
        (d / f"{name}.stderr").write_text(text)
    return d


def test_evidence_and_the_runners_check(tmp_path: Path) -> None:
    cfg = {"same_host": "shm", "agent": "fastdds",
           "placement": {"pub0": "h1", "sub0": "h1", "sub1": "h2"}}
    d = _stderr(tmp_path, {
        "pub0": "config: transport UDPv4|SHMEM (Perftest's default)\n",
        "sub0": "config: transport UDPv4|SHMEM (Perftest's default)\n"
                "subscriber 0: samples by origin: same host 100, other hosts 0 (x)\n"
                "subscriber 0: user DATA received by path: shared memory 100, UDP from this "
                "host 0, UDP from other hosts 0\n",
        "sub1": "config: transport UDPv4|SHMEM (Perftest's default)\n"
                "subscriber 1: samples by origin: same host 0, other hosts 100 (x)\n"
                "subscriber 1: user DATA received by path: shared memory 0, UDP from this "
                "host 0, UDP from other hosts 100\n"})
    ev = samehost.evidence(cfg, d, {"h1": {"lo": 10, "links": 5}, "h2": {"lo": 0, "links": 0}},
                           {"h1": {"lo": 12, "links": 9}, "h2": {"lo": 1, "links": 150}})
    assert ev == {
        "setting": "shm", "transports": {"UDPv4|SHMEM": 3}, "silent": [],
        "pairs": {"same_host": 1, "cross_host": 1},
        "samples_by_origin": {"same_host": 100, "other_hosts": 100},
        "data_by_path": {"shared_memory": 100, "udp_this_host": 0, "udp_other_hosts": 100},
        "kernel_rx_packets": {"loopback": 3, "links": 154}}
    assert samehost.problem(ev, "fastdds") is None
    runner = CampaignRunner.__new__(CampaignRunner)
    base_cfg = {"test": "latency", "agent": "fastdds", "execution_time": 5}
    manifest = {"exit_codes": {"pub0": 0}, "same_host": ev}
    runner._check(base_cfg, manifest, {})
    udp_said = {**ev, "transports": {"UDPv4": 3}}
    with pytest.raises(RunFailed, match=r"same_host 'shm': 3 agent.s. used UDPv4, not shared"):
        runner._check(base_cfg, {**manifest, "same_host": udp_said}, {})
    shm_said = {**ev, "setting": "udp"}
    with pytest.raises(RunFailed, match=r"same_host 'udp': 3 agent.s. used UDPv4.SHMEM"):
        runner._check(base_cfg, {**manifest, "same_host": shm_said}, {})
    silent = {**ev, "silent": ["sub1"]}
    with pytest.raises(RunFailed, match="sub1 did not say which transport"):
        runner._check(base_cfg, {**manifest, "same_host": silent}, {})
