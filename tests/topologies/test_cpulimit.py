"""What CpuLimits writes, on a cgroup v2 tree made of plain files (no root, no kernel):
a host's quota at build time, and again when :meth:`CpuLimits.set_cores` changes it; the
CPUs pinned hosts are dealt over (only those the testbed may use), and the pin read back.
A real cgroupfs makes a cgroup's files with its directory; here each write makes its file."""

from __future__ import annotations

from pathlib import Path

import pytest

import topologies
from experiments import scenario
from topologies import cpulimit


class _Ledger:
    def __init__(self) -> None:
        self.cgroups: list[Path] = []

    def record_cgroup(self, path: Path) -> None:
        self.cgroups.append(path)


@pytest.fixture(autouse=True)
def _plain_files(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cpulimit, "_write", lambda path, value: Path(path).write_text(value))


def _limits(root: Path, deferred: bool = False) -> cpulimit.CpuLimits:
    (root / "cgroup.controllers").write_text("cpuset cpu io memory pids\n")
    limits = cpulimit.CpuLimits("t", _Ledger(), root=root, period_us=10_000,
                                period_step_us=250, deferred=deferred)
    limits.limit("h1", 0.5)
    limits.limit("h2", 0.5)
    return limits


def _cpu_max(root: Path, host: str) -> str:
    return (root / "mcastlab-t" / host / "cpu.max").read_text()


def test_set_cores_writes_the_new_quota_over_the_hosts_own_period(tmp_path: Path) -> None:
    limits = _limits(tmp_path)
    assert _cpu_max(tmp_path, "h2") == "5125 10250"
    limits.set_cores("h2", 0.2)
    assert _cpu_max(tmp_path, "h2") == "2050 10250"  # 0.2 of h2's stepped period
    assert _cpu_max(tmp_path, "h1") == "5000 10000"  # the other host keeps its own
    assert limits.cores == {"h1": 0.5, "h2": 0.2}


def test_set_cores_on_deferred_limits_waits_for_engage(tmp_path: Path) -> None:
    limits = _limits(tmp_path, deferred=True)
    limits.set_cores("h1", 0.3)
    assert not (tmp_path / "mcastlab-t" / "h1" / "cpu.max").exists()
    assert limits.engage()
    assert _cpu_max(tmp_path, "h1") == "3000 10000"


def test_set_cores_names_a_host_it_does_not_limit(tmp_path: Path) -> None:
    limits = _limits(tmp_path)
    with pytest.raises(KeyError, match="h9 is not a CPU-limited host"):
        limits.set_cores("h9", 0.2)


def _pinning_tree(root: Path, allowed: str, controllers: str = "cpuset cpu io memory pids"
                  ) -> Path:
    """A cgroup v2 root whose cpuset lets its children use ``allowed`` (a CPU list)."""
    root.mkdir(exist_ok=True)
    (root / "cgroup.controllers").write_text(controllers + "\n")
    (root / "cpuset.cpus.effective").write_text(allowed + "\n")
    return root


def _affinity(monkeypatch: pytest.MonkeyPatch, cpus: set[int]) -> None:
    monkeypatch.setattr(cpulimit.os, "sched_getaffinity", lambda pid: set(cpus))


def _cpuset(root: Path, host: str) -> str:
    return (root / "mcastlab-t" / host / "cpuset.cpus").read_text()


def test_hosts_are_pinned_only_to_the_cpus_the_testbed_may_use(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Affinity 0-3 within a cpuset of 2-3: the plan deals 2 and 3, and only those are
    written (the CPU's position in the allowed list was once written as its number)."""
    root = _pinning_tree(tmp_path, "2-3")
    _affinity(monkeypatch, {0, 1, 2, 3})
    limits = cpulimit.CpuLimits("t", _Ledger(), root=root, pin=True)
    plan = limits.plan(["h1", "h2", "h3"])
    assert plan == {"h1": 2, "h2": 3, "h3": 2}
    for host, cpu in plan.items():
        limits.limit(host, 0.3, cpu)
    assert {h: _cpuset(root, h) for h in plan} == {"h1": "2", "h2": "3", "h3": "2"}
    with pytest.raises(ValueError, match=r"h4: pinning needs one of the CPUs the testbed may "
                       r"use \(2, 3\); got 0"):
        limits.limit("h4", 0.3, 0)


def test_the_pin_is_read_back_once_written(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """cgroup v2 accepts a pin its parent cannot give and runs the host on the parent's
    CPUs instead: the effective CPUs, read back, refuse the build; an honoured pin passes."""
    root = _pinning_tree(tmp_path, "0-1")
    _affinity(monkeypatch, {0, 1})
    honoured = {"h1": True, "h2": False}

    def kernel(path: Path, value: str) -> None:
        path = Path(path)
        path.write_text(value)
        if path.name == "cpuset.cpus" and path.parent.name in honoured:
            effective = value if honoured[path.parent.name] else "0-1"
            (path.parent / "cpuset.cpus.effective").write_text(effective + "\n")

    monkeypatch.setattr(cpulimit, "_write", kernel)
    limits = cpulimit.CpuLimits("t", _Ledger(), root=root, pin=True)
    limits.limit("h1", 0.3, 1)
    with pytest.raises(RuntimeError, match=r"h2: pinned to CPU 0, but .*h2/"
                       r"cpuset.cpus.effective reads '0-1'"):
        limits.limit("h2", 0.3, 0)


def test_deferred_pins_are_read_back_at_engage(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    root = _pinning_tree(tmp_path, "0-1")
    _affinity(monkeypatch, {0, 1})
    limits = cpulimit.CpuLimits("t", _Ledger(), root=root, pin=True, deferred=True)
    limits.limit("h1", 0.3, 1)
    (root / "mcastlab-t" / "h1" / "cpuset.cpus.effective").write_text("0-1\n")
    with pytest.raises(RuntimeError, match="h1: pinned to CPU 1, but"):
        limits.engage()


def _pinned_scenario(path: Path, cores: float) -> Path:
    path.write_text(f"""[campaign]
name = "pinned"

[topology]
name = "lan"
params = {{ hosts = 2, cpu = {cores}, cpu_pin = true }}

[agent]
kind = "native"

[matrix]
participants = [1]
execution_time = 5
""")
    return path


def test_check_of_a_pinned_scenario_under_one_allowed_cpu(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """As under `taskset -c 1`: --check passes 2 hosts of 0.3 core, whose build puts both
    on CPU 1 (not CPU 0, which the testbed was not given), and refuses 0.35 (0.7 on a
    CPU that keeps 0.4 for the emulator) and cpu_pin without a cpuset controller."""
    root = _pinning_tree(tmp_path / "cgroup", "0-1")
    monkeypatch.setattr(cpulimit, "CGROUP_ROOT", root)
    _affinity(monkeypatch, {1})
    monkeypatch.setattr(scenario, "agent_missing", lambda kind: None)
    monkeypatch.setattr(topologies, "missing_capabilities", lambda spec: [])
    _sc, specs = scenario.validate(_pinned_scenario(tmp_path / "a.toml", 0.3))
    plan = cpulimit.CpuLimits("t", _Ledger(), root=root, pin=True).plan(list(specs[""].hosts))
    assert plan == {"h1": 1, "h2": 1}
    with pytest.raises(scenario.ScenarioError, match=r"topology.params.cpu: 2 hosts x 0.35 "
                       r"cores pinned to one CPU = 0.7, but each of this machine's 1 CPUs"):
        scenario.validate(_pinned_scenario(tmp_path / "b.toml", 0.35))
    (root / "cgroup.controllers").write_text("cpu io memory pids\n")
    with pytest.raises(scenario.ScenarioError, match=r"topology.params.cpu_pin: cpu_pin needs "
                       r"the cpuset controller, which cgroup v2 at .* lacks"):
        scenario.validate(_pinned_scenario(tmp_path / "c.toml", 0.3))


def _other_testbed(root: Path, pins: dict[str, str]) -> None:
    """Another testbed's host cgroups with these cpuset.cpus ("" : not pinned yet)."""
    for host, cpus in pins.items():
        (root / "mcastlab-zz9" / host).mkdir(parents=True, exist_ok=True)
        (root / "mcastlab-zz9" / host / "cpuset.cpus").write_text(cpus + "\n")


def test_cpus_another_testbeds_hosts_are_pinned_to_are_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two campaigns on one machine: the second's plan would put its hosts on the CPU the
    first's h1 is pinned to, and is refused naming it; under an affinity without that CPU
    it is not. A host not yet pinned (limits deferred) holds no CPU; the testbed's own
    pins are not another's."""
    root = _pinning_tree(tmp_path, "0-1")
    _other_testbed(root, {"h1": "0", "h2": ""})
    _affinity(monkeypatch, {0, 1})
    limits = cpulimit.CpuLimits("t", _Ledger(), root=root, pin=True)
    with pytest.raises(RuntimeError, match=r"cpu_pin: CPU 0 already holds the pinned hosts "
                       r"of another testbed \(mcastlab-zz9/h1\).*taskset -c"):
        limits.plan(["h1", "h2"])
    _affinity(monkeypatch, {1})
    limits = cpulimit.CpuLimits("t", _Ledger(), root=root, pin=True)
    assert limits.plan(["h1", "h2"]) == {"h1": 1, "h2": 1}
    limits.limit("h1", 0.3, 1)
    assert limits.plan(["h1", "h2"]) == {"h1": 1, "h2": 1}  # its own h1 on CPU 1


def test_check_refuses_cpus_another_testbeds_hosts_are_pinned_to(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _pinning_tree(tmp_path / "cgroup", "0-1")
    _other_testbed(root, {"h1": "0", "h2": "1"})
    monkeypatch.setattr(cpulimit, "CGROUP_ROOT", root)
    _affinity(monkeypatch, {0, 1})
    monkeypatch.setattr(scenario, "agent_missing", lambda kind: None)
    monkeypatch.setattr(topologies, "missing_capabilities", lambda spec: [])
    with pytest.raises(scenario.ScenarioError, match=r"topology.params.cpu_pin: cpu_pin: CPU "
                       r"0, 1 already hold the pinned hosts of another testbed "
                       r"\(mcastlab-zz9/h1, mcastlab-zz9/h2\)"):
        scenario.validate(_pinned_scenario(tmp_path / "a.toml", 0.3))
    _other_testbed(root, {"h2": ""})  # its h2 unpinned (only h1, on CPU 0, is)
    _affinity(monkeypatch, {1})
    scenario.validate(_pinned_scenario(tmp_path / "b.toml", 0.3))
