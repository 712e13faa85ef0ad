"""A run whose fidelity checks did not all run is *unverified*, not faithful: a wake-up
sampler that gave nothing, missing cgroup v2 counters or a measurement window that never
opened leave ``verified`` false and name what is missing, whatever ``bound`` was judged on
the rest; ``--check`` refuses limits deferred to the measurement with an agent whose
discovery the runner cannot see. Fake Monitor inputs, no root.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from experiments import fidelity
from experiments import scenario as scenario_mod
from experiments.scenario import ScenarioError
from topologies.cpulimit import Counters

ZERO = Counters(0, 0, 0.0, 0.0, 0.0, 0.0)
CFG = {"publishers": 1, "pub_rate": 0, "execution_time": 10}
UDP = {"InDatagrams": 0, "RcvbufErrors": 0}


def _sampled(logs: Path, name: str) -> None:
    """What a sampler that ran leaves: its cyclictest JSON."""
    (logs / f"wakeup_{name}.json").write_text(json.dumps({"thread": {"0": {
        "histogram": {"50": 990, "400": 10}, "cycles": 1000, "max": 400}}}))


def _monitor(logs: Path, cpu: Any = None) -> fidelity.Monitor:
    mon = fidelity.Monitor(None, ["h1"], logs, fidelity.Thresholds(), cpu=cpu,  # type: ignore[arg-type]
                           plane_node="s1")
    mon.t_open, mon.t_close = 100.0, 110.0
    mon._udp0 = {"h1": {k: 0 for k in UDP}}
    mon._udp1 = {"h1": {"InDatagrams": 1000, "RcvbufErrors": 0}}
    return mon


def _result(mon: fidelity.Monitor, logs: Path) -> dict[str, Any]:
    return mon.result([], 100.0, CFG, logs, None)


def _limits() -> SimpleNamespace:
    return SimpleNamespace(hosts={"h1": []}, cores={"h1": 0.4}, cpus={"h1": 0},
                           describe=lambda: {"cores": 0.4})


def test_a_run_whose_checks_all_ran_is_verified(tmp_path: Path) -> None:
    _sampled(tmp_path, "h1")
    fid = _result(_monitor(tmp_path), tmp_path)
    assert fid["verified"] is True and fid["unverified"] == []
    assert fid["bound"] == "network"
    assert fidelity.is_verified(fid)


def test_a_failed_sampler_leaves_the_run_unverified(tmp_path: Path) -> None:
    (tmp_path / "wakeup_h1.log").write_text("Unable to change scheduling policy!\n")
    fid = _result(_monitor(tmp_path), tmp_path)
    assert fid["verified"] is False
    assert fid["unverified"] == ["timer lateness in h1 (its sampler gave no data)"]
    assert fid["bound"] == "network"  # judged on what was measured, kept as it is
    assert not fidelity.is_verified(fid)


def test_missing_cgroup_v2_counters_leave_limited_hosts_unverified(tmp_path: Path) -> None:
    """Throttling without cgroup v2 CPU time: the hosts' allocation was never checked, so
    the emulator is not called faithful."""
    _sampled(tmp_path, "h1")
    _sampled(tmp_path, fidelity.PLANE)
    mon = _monitor(tmp_path, cpu=_limits())
    mon._cpu0 = {"h1": Counters(0, 0, 0.0, None, None, None)}
    mon._cpu1 = {"h1": Counters(1000, 10, 1e4, None, None, None)}
    mon._softnet0, mon._softnet1 = (0, 0), (1000, 0)
    fid = _result(mon, tmp_path)
    assert fid["bound"] == "network"
    assert fid["verified"] is False
    assert fid["unverified"] == ["the hosts' allocation (no cgroup v2 CPU time and pressure)"]
    assert fid["emulator"]["faithful"] is False and fid["emulator"]["reasons"] == []
    # the same run with the counters is verified and faithful
    mon = _monitor(tmp_path, cpu=_limits())
    mon._cpu0, mon._cpu1 = {"h1": ZERO}, {"h1": Counters(1000, 10, 1e4, 1e6, 0.0, 0.0)}
    mon._softnet0, mon._softnet1 = (0, 0), (1000, 0)
    fid = _result(mon, tmp_path)
    assert fid["verified"] is True and fid["emulator"]["faithful"] is True


def test_a_window_that_never_opened_leaves_the_run_unverified(tmp_path: Path) -> None:
    """agent = "rti" prints no discovery line: the window never opens."""
    mon = _monitor(tmp_path)
    mon.t_open = mon.t_close = None
    fid = _result(mon, tmp_path)
    assert fid["verified"] is False
    assert fid["unverified"][0].startswith("the measurement window")


def test_old_records_read_as_verified() -> None:
    assert fidelity.is_verified({"bound": "network", "metrics": {}})


SCENARIO = """\
[campaign]
name = "rti"
[agent]
kind = "{kind}"
[topology]
name = "lan"
params = {{ hosts = 4, cpu = 0.4, cpu_from = "{cpu_from}" }}
[matrix]
participants = [1]
modes = ["unicast", "multicast"]
execution_time = 5
"""


def test_check_refuses_limits_that_rti_cannot_engage(tmp_path: Path) -> None:
    path = tmp_path / "rti.toml"
    path.write_text(SCENARIO.format(kind="rti", cpu_from="measurement"))
    with pytest.raises(ScenarioError) as err:
        scenario_mod.validate(path, check_machine=False)
    assert err.value.key == "topology.params.cpu_from"
    assert "agent 'rti'" in str(err.value) and "allowed with it: 'start'" in str(err.value)
    # limits from the start engage with any agent; the native agent reports its discovery
    for kind, cpu_from in (("rti", "start"), ("native", "measurement")):
        path.write_text(SCENARIO.format(kind=kind, cpu_from=cpu_from))
        scenario_mod.validate(path, check_machine=False)


def test_limits_that_never_engaged_fail_the_run() -> None:
    """cpu_from = "measurement" whose discovery never completed (cpu_engaged_s None): the
    run measured unlimited hosts, so it failed; engaged limits pass."""
    from experiments.runner import CampaignRunner, RunFailed

    cfg = {"agent": "native", "test": "latency", "execution_time": 5}
    manifest: dict[str, Any] = {"exit_codes": {"pub0": 0}, "cpu_engaged_s": None}
    with pytest.raises(RunFailed, match=r"CPU limits .* never took effect"):
        CampaignRunner._check(None, cfg, manifest, {})  # type: ignore[arg-type]
    manifest["cpu_engaged_s"] = 41.2
    CampaignRunner._check(None, cfg, manifest, {})  # type: ignore[arg-type]
