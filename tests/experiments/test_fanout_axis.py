"""The ``[matrix] fanout`` axis (H-fanout): the kernel's default vs the
IP_MULTICAST_ALL=0 shim, run by run within one campaign.

Validation before anything is built (bad values, the shim not built: one message naming
file, key and allowed values), the expansion (existing campaigns keep their run ids and
configurations; with the axis the group names the setting), the agents' environment
(LD_PRELOAD of the shim, its log switch, ASan's link-order check for ASan builds) and the
runner's check of each agent's stderr: a run that asked for the shim fails when an agent
did not have it. Pure logic, no root (the shim itself: tests/agents/test_mcastall*.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import topologies
from experiments import agents, matrix
from experiments import scenario as scenario_mod
from experiments.runner import CampaignRunner, RunFailed
from experiments.scenario import ScenarioError
from mcastlab import paths

SCENARIO = """\
[campaign]
name = "fan"
[topology]
name = "lan"
params = { hosts = 4 }
[matrix]
participants = [3]
modes = ["unicast", "multicast"]
execution_time = 5
"""
IPS = {h: f"10.0.0.{i}" for i, h in enumerate(["h1", "h2", "h3", "h4"], 1)}


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "fan.toml"
    path.write_text(text)
    return path


def _runs(path: Path) -> list[dict[str, Any]]:
    sc, specs = scenario_mod.validate(path, check_machine=False)
    return matrix.expand(sc, {v: list(topologies.host_names(s)) for v, s in specs.items()})


def test_default_campaigns_are_unchanged(tmp_path: Path) -> None:
    plain = _runs(_write(tmp_path, SCENARIO))
    kernel = _runs(_write(tmp_path, SCENARIO + 'fanout = ["kernel"]\n'))
    assert plain == kernel
    assert [r["run_id"] for r in plain] == ["lan-rel-100B-3x3-unicast-r1",
                                            "lan-rel-100B-3x3-multicast-r1"]
    assert all("fanout" not in r for r in plain)  # resume: stored configs have no such key
    for p in agents.build(plain[0], IPS, Path("/run/a")):
        assert "LD_PRELOAD" not in p.env and "MCASTLAB_MCASTALL_LOG" not in p.env


def test_axis_names_the_setting_and_preloads_the_shim(tmp_path: Path) -> None:
    both = _runs(_write(tmp_path, SCENARIO + 'fanout = ["kernel", "joined-only"]\n'))
    assert [r["run_id"] for r in both] == [
        "lan-rel-100B-fanout-kernel-3x3-unicast-r1",
        "lan-rel-100B-fanout-kernel-3x3-multicast-r1",
        "lan-rel-100B-fanout-joined-only-3x3-unicast-r1",
        "lan-rel-100B-fanout-joined-only-3x3-multicast-r1"]
    for r in both:
        procs = agents.build(r, IPS, Path("/run/a"))
        if r.get("fanout") == "joined-only":
            assert r["group"] == "lan-rel-100B-fanout-joined-only"
            for p in procs:
                assert p.env == {"LD_PRELOAD": str(paths.MCASTALL_SHIM),
                                 "MCASTLAB_MCASTALL_LOG": "1"}
        else:
            assert "fanout" not in r and all(p.env == {} for p in procs)
        twin = next(o for o in both if o is not r and o["mode"] == r["mode"])
        for key in ("placement", "topology_params", "execution_time", "agent"):
            assert twin[key] == r[key], key  # everything else stays fixed
    only = _runs(_write(tmp_path, SCENARIO + 'fanout = ["joined-only"]\n'))
    assert only[0]["run_id"] == "lan-rel-100B-fanout-joined-only-3x3-unicast-r1"


def test_asan_and_ddsperf_agents_get_the_shim_too(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASAN_OPTIONS", "detect_leaks=1")
    for kind in ("native-asan", "ddsperf"):
        text = SCENARIO.replace("[matrix]", f'[agent]\nkind = "{kind}"\n[matrix]')
        run = _runs(_write(tmp_path, text + 'fanout = ["joined-only"]\n'))[0]
        env = agents.build(run, IPS, Path("/run/a"))[0].env
        assert env["LD_PRELOAD"] == str(paths.MCASTALL_SHIM)
        if kind == "native-asan":
            assert env["ASAN_OPTIONS"] == "detect_leaks=1:verify_asan_link_order=0"
        else:
            assert "CYCLONEDDS_URI" in env and "ASAN_OPTIONS" not in env


def test_unbuilt_shim_is_refused_before_anything_is_built(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(paths, "MCASTALL_SHIM", tmp_path / "absent" / "libmcastall_off.so")
    fake = tmp_path / "perftest_cyclone"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    monkeypatch.setattr(paths, "NATIVE_AGENT", fake)
    path = _write(tmp_path, SCENARIO + 'fanout = ["kernel", "joined-only"]\n')
    with pytest.raises(ScenarioError) as err:
        scenario_mod.validate(path)
    assert err.value.key == "matrix.fanout"
    msg = str(err.value)
    assert msg.startswith(f"{path}: matrix.fanout: 'joined-only' needs the IP_MULTICAST_ALL=0")
    assert "not built (run ./setup.sh" in msg and "allowed without it: 'kernel'" in msg
    scenario_mod.validate(_write(tmp_path, SCENARIO + 'fanout = ["kernel"]\n'))


ACTIVE = ("mcastlab-mcastall: active: IP_MULTICAST_ALL=0 on UDP sockets of pid 9\n"
          "mcastlab-mcastall: IP_MULTICAST_ALL=0 on 4 UDP sockets, 0 failed\n")


def _evidence(tmp_path: Path, stderr: dict[str, str], fanout: str = "joined-only"
              ) -> dict[str, Any]:
    for name, text in stderr.items():
        (tmp_path / f"{name}.stderr").write_text(text)
    cfg = {"fanout": fanout} if fanout != "kernel" else {}
    return CampaignRunner._fanout_evidence(cfg, tmp_path, {n: 0 for n in stderr})


def _check(manifest: dict[str, Any]) -> None:
    cfg = {"test": "throughput", "agent": "native", "execution_time": 0}
    CampaignRunner._check(None, cfg, {"exit_codes": {}, **manifest}, {})  # type: ignore[arg-type]


def test_runner_records_the_shim_and_fails_a_run_without_it(tmp_path: Path) -> None:
    ok = _evidence(tmp_path, {"pub0": ACTIVE, "sub0": ACTIVE})
    assert ok["setting"] == "joined-only" and ok["sockets"] == 8
    assert ok["agents"]["sub0"] == {"active": True, "failed": 0, "sockets": 4}
    _check({"fanout": ok})
    missing = _evidence(tmp_path, {"pub0": ACTIVE, "sub0": "config: ...\n"})
    assert missing["inactive"] == ["sub0"]
    with pytest.raises(RunFailed, match=r"shim was not active in sub0 \(no 'mcastlab-mcastall: "
                                        r"active:' line"):
        _check({"fanout": missing})
    bad = _evidence(tmp_path, {"pub0": ACTIVE + "mcastlab-mcastall: FAILED to set "
                               "IP_MULTICAST_ALL=0 on fd 5: Invalid argument\n"})
    with pytest.raises(RunFailed, match=r"not active in pub0 \('mcastlab-mcastall: FAILED'"):
        _check({"fanout": bad})
    assert _evidence(tmp_path, {"pub0": ""}, fanout="kernel") == {"setting": "kernel"}
