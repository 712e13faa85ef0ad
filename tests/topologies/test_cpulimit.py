"""What CpuLimits writes, on a cgroup v2 tree made of plain files (no root, no kernel):
a host's quota at build time, and again when :meth:`CpuLimits.set_cores` changes it.
A real cgroupfs makes a cgroup's files with its directory; here each write makes its file."""

from __future__ import annotations

from pathlib import Path

import pytest

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
