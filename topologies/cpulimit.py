"""CPU-limited emulated hosts: a CFS bandwidth limit per host, on cgroup v1 or v2.

An emulated host then models a machine of fixed capacity (as the study's VMs were), and
runs on differently sized machines become comparable (Mininet-HiFi's CPU isolation).
``cpu`` is in cores: 0.5 lets the host's processes use half of one core's time per
100 ms period, whatever the machine has. (Mininet's ``CPULimitedHost.setCPUFrac`` takes a
fraction of the *whole machine*; measured here, 0.2 gave 0.40 of a core on 2 cores. This
module's unit does not depend on the machine.)

- cgroup v1 (the project's machines): ``/sys/fs/cgroup/cpu/mcastlab-<tag>/<host>/``,
  ``cpu.cfs_period_us`` and ``cpu.cfs_quota_us``; counters in ``cpu.stat``.
- cgroup v2 (Debian 12 and Ubuntu 22.04+ defaults): ``/sys/fs/cgroup/mcastlab-<tag>/<host>/``
  with ``cpu.max`` (``+cpu`` enabled in the parent's ``cgroup.subtree_control``).

Every cgroup is recorded in the testbed's ledger before it is made; teardown and
``mcastlab clean`` remove exactly those (rmdir, once their processes are gone). A
process joins its host's cgroup before it executes (``preexec``), so no instruction of it
runs unlimited.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

CGROUP_ROOT = Path("/sys/fs/cgroup")
PERIOD_US = 100_000


def version(root: Path = CGROUP_ROOT) -> int | None:
    """1 or 2: which cgroup hierarchy can limit CPU here; None when neither can."""
    if (root / "cgroup.controllers").exists():
        ctrls = (root / "cgroup.controllers").read_text().split()
        return 2 if "cpu" in ctrls else None
    if (root / "cpu" / "cpu.cfs_quota_us").exists():
        return 1
    return None


def why_unavailable(root: Path = CGROUP_ROOT) -> str | None:
    if version(root) is not None:
        return None
    if (root / "cgroup.controllers").exists():
        return f"cgroup v2 at {root} has no cpu controller"
    return f"no cgroup v1 cpu controller ({root}/cpu/cpu.cfs_quota_us) and no cgroup v2 at {root}"


class CpuLimits:
    """The per-host cgroups of one testbed. ``ledger`` records each before it exists."""

    def __init__(self, tag: str, ledger: Any, root: Path = CGROUP_ROOT) -> None:
        v = version(root)
        if v is None:
            raise RuntimeError(f"CPU-limited hosts need a cgroup CPU controller: "
                               f"{why_unavailable(root)}")
        self.version = v
        self.ledger = ledger
        base = root / "cpu" if v == 1 else root
        self.parent = base / f"mcastlab-{tag}"
        self.hosts: dict[str, Path] = {}
        self.cores: dict[str, float] = {}

    def _mkdir(self, path: Path) -> None:
        self.ledger.record_cgroup(path)
        path.mkdir()

    def limit(self, host: str, cores: float) -> Path:
        """Create ``host``'s cgroup with ``cores`` of CPU time; returns its directory."""
        if not self.parent.exists():
            self._mkdir(self.parent)
            if self.version == 2:
                (self.parent / "cgroup.subtree_control").write_text("+cpu")
        cg = self.parent / host
        self._mkdir(cg)
        quota = max(int(cores * PERIOD_US), 1000)
        if self.version == 1:
            (cg / "cpu.cfs_period_us").write_text(str(PERIOD_US))
            (cg / "cpu.cfs_quota_us").write_text(str(quota))
        else:
            (cg / "cpu.max").write_text(f"{quota} {PERIOD_US}")
        self.hosts[host] = cg
        self.cores[host] = cores
        return cg

    def preexec(self, host: str) -> Callable[[], None] | None:
        """A Popen ``preexec_fn`` that moves the child into ``host``'s cgroup (None if the
        host is not limited)."""
        cg = self.hosts.get(host)
        if cg is None:
            return None
        procs = str(cg / "cgroup.procs")

        def join() -> None:
            fd = os.open(procs, os.O_WRONLY)
            try:
                os.write(fd, b"0")  # "0": the writing process itself
            finally:
                os.close(fd)

        return join

    def stat_files(self) -> dict[str, Path]:
        """{host: cpu.stat} (nr_periods, nr_throttled, throttled time)."""
        return {h: cg / "cpu.stat" for h, cg in self.hosts.items()}

    def describe(self) -> dict[str, Any]:
        return {"cgroup_version": self.version, "period_us": PERIOD_US,
                "cores": dict(self.cores),
                "paths": {h: str(p) for h, p in self.hosts.items()}}
