"""The ``[matrix] agents`` axis: several DDS implementations run by run on identical networks.

Validation (before anything is built, one message naming file, key and allowed values),
the expansion into runs (run ids name the implementation only when there are several, so
single-implementation campaigns keep their run ids and resume; same network and placement
for every implementation; each run's agent in its configuration) and the refusal of an
agent that is not built, with setup.sh's reason. Pure logic, no root.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

import topologies
from experiments import agents, matrix
from experiments import scenario as scenario_mod
from experiments.scenario import ScenarioError
from mcastlab import paths

SCENARIO = """\
[campaign]
name = "impl"
[topology]
name = "lan"
params = { hosts = 4 }
[matrix]
participants = [1, 3]
modes = ["unicast", "multicast"]
execution_time = 5
repetitions = 2
"""


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "impl.toml"
    path.write_text(text)
    return path


def _runs(path: Path) -> list[dict]:
    sc, specs = scenario_mod.validate(path, check_machine=False)
    return matrix.expand(sc, {v: list(topologies.host_names(s)) for v, s in specs.items()})


@pytest.mark.parametrize(("axis", "key", "words"), [
    ('["native", "opensplice"]', "matrix.agents.1", ["'opensplice'", "allowed:", "'fastdds'"]),
    ('["native", "native"]', "matrix.agents", ["native listed twice", "at most once",
                                               "native, native-asan, fastdds"]),
    ("[]", "matrix.agents", ["empty list", "allowed: one or more of native"]),
    ('"fastdds"', "matrix.agents", ["wrong type"]),
])
def test_bad_axis(tmp_path: Path, axis: str, key: str, words: list[str]) -> None:
    path = _write(tmp_path, SCENARIO + f"agents = {axis}\n")
    with pytest.raises(ScenarioError) as err:
        scenario_mod.validate(path, check_machine=False)
    assert err.value.key == key
    assert str(err.value).startswith(f"{path}: {key}: ")
    for w in words:
        assert w in str(err.value), str(err.value)


def test_agent_kind_outside_the_axis_is_refused(tmp_path: Path) -> None:
    path = _write(tmp_path, SCENARIO.replace("[matrix]", '[agent]\nkind = "rti"\n[matrix]')
                  + 'agents = ["native", "fastdds"]\n')
    with pytest.raises(ScenarioError, match=r"matrix\.agents: agent\.kind 'rti' is not in"):
        scenario_mod.validate(path, check_machine=False)


def test_extra_args_are_checked_for_every_agent_of_the_axis(tmp_path: Path) -> None:
    text = SCENARIO.replace("[matrix]", '[agent]\nextra_args = ["-frobnicate"]\n[matrix]')
    with pytest.raises(ScenarioError, match=r"agent\.extra_args: .*agent 'native' of "
                                            r"matrix\.agents"):
        scenario_mod.validate(_write(tmp_path, text + 'agents = ["native", "fastdds"]\n'),
                              check_machine=False)


def test_run_ids_name_the_agent_only_with_several(tmp_path: Path) -> None:
    single = _runs(_write(tmp_path, SCENARIO))
    assert single[0]["run_id"] == "lan-rel-100B-1x1-unicast-r1"
    assert {r["agent"] for r in single} == {"native"}
    # the axis with one value is the single-implementation campaign, run ids unchanged
    one = _runs(_write(tmp_path, SCENARIO + 'agents = ["native"]\n'))
    assert [r["run_id"] for r in one] == [r["run_id"] for r in single]
    assert one == single
    both = _runs(_write(tmp_path, SCENARIO + 'agents = ["native", "fastdds"]\n'))
    assert len(both) == 2 * len(single)
    assert [r["run_id"] for r in both[:5]] == [
        "lan-rel-100B-native-1x1-unicast-r1", "lan-rel-100B-native-1x1-multicast-r1",
        "lan-rel-100B-fastdds-1x1-unicast-r1", "lan-rel-100B-fastdds-1x1-multicast-r1",
        "lan-rel-100B-native-1x1-unicast-r2"]
    assert len({r["run_id"] for r in both}) == len(both)
    for r in both:
        assert r["group"] == f"lan-rel-100B-{r['agent']}"
        # the same run with the other implementation: same network, same placement
        twin = next(o for o in both if o["agent"] != r["agent"] and all(
            o[k] == r[k] for k in ("publishers", "mode", "repetition")))
        for key in ("topology", "topology_params", "placement", "execution_time",
                    "discovery", "domain", "timing", "capture"):
            assert twin[key] == r[key], key
    ips = {h: f"10.0.0.{i}" for i, h in enumerate(["h1", "h2", "h3", "h4"], 1)}
    exes = {r["agent"]: agents.build(r, ips, Path("/run/a"))[0].argv[0] for r in both}
    assert exes == {"native": str(paths.NATIVE_AGENT), "fastdds": str(paths.FASTDDS_AGENT)}


def test_unbuilt_fastdds_is_refused_with_setups_reason(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    native = tmp_path / "perftest_cyclone"
    native.write_text("#!/bin/sh\n")
    native.chmod(native.stat().st_mode | stat.S_IXUSR)
    note = tmp_path / "fastdds-unsupported.txt"
    note.write_text("Fast DDS 2.6.0 found (Ubuntu 22.04); the agent needs 2.9 <= version < 3.0\n")
    monkeypatch.setattr(paths, "NATIVE_AGENT", native)
    monkeypatch.setattr(paths, "FASTDDS_AGENT", tmp_path / "absent" / "perftest_fastdds")
    monkeypatch.setattr(paths, "FASTDDS_UNSUPPORTED_NOTE", note)
    path = _write(tmp_path, SCENARIO + 'agents = ["native", "fastdds"]\n')
    with pytest.raises(ScenarioError) as err:
        scenario_mod.validate(path)
    msg = str(err.value)
    assert err.value.key == "matrix.agents"
    assert "agent 'fastdds' is not installed" in msg
    assert "is not built: Fast DDS 2.6.0 found (Ubuntu 22.04)" in msg
    assert "agents: native, native-asan, fastdds" in msg
    # native alone passes the machine check with the same (fake) binary
    assert os.access(native, os.X_OK)
    scenario_mod.validate(_write(tmp_path, SCENARIO + 'agents = ["native"]\n'))
