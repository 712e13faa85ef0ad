"""CPU time outside the emulated hosts, from /proc texts (no root)."""

from __future__ import annotations

import os
from pathlib import Path

from experiments import proctime

TICK = os.sysconf("SC_CLK_TCK")


def _stat(pid: int, comm: str, ticks: int, start: int) -> str:
    # fields after the command: state ppid pgrp session tty tpgid flags minflt cminflt
    # majflt cmajflt utime stime cutime cstime priority nice threads itrealvalue starttime
    return (f"{pid} ({comm}) S 1 {pid} {pid} 0 -1 4194560 0 0 0 0 {ticks} 0 0 0 20 0 1 0 "
            f"{start} 0 0\n")


def _proc(root: Path, rows: list[tuple[int, str, int, int]]) -> Path:
    root.mkdir()
    for pid, comm, ticks, start in rows:
        (root / str(pid)).mkdir()
        (root / str(pid) / "stat").write_text(_stat(pid, comm, ticks, start))
    (root / "self").mkdir()  # not a pid: skipped
    return root


def test_outside_the_hosts_by_command(tmp_path: Path) -> None:
    a = proctime.snapshot(_proc(tmp_path / "a", [
        (10, "tcpdump", 1 * TICK, 5), (11, "cyclictest", 0, 5), (12, "agent", 0, 6),
        (20, "old", 4 * TICK, 3)]))
    b = proctime.snapshot(_proc(tmp_path / "b", [
        (10, "tcpdump", 2 * TICK, 5), (11, "cyclictest", 1 * TICK, 5),
        (12, "agent", 9 * TICK, 6),
        (20, "new", 3 * TICK, 9),  # pid 20 reused by another process: all its time counts
        (30, "new", 3 * TICK, 9)]))
    rec = proctime.outside(a, b, 10.0, inside={12})
    assert rec == {"cores": 0.8, "top": [("new", 0.6), ("cyclictest", 0.1), ("tcpdump", 0.1)]}
    assert proctime.outside_text(rec) == (
        "0.80 core outside the hosts (new 0.60, cyclictest 0.10, tcpdump 0.10)")


def test_this_process_is_seen() -> None:
    snap = proctime.snapshot()
    mine = [v for (pid, _), v in snap.items() if pid == os.getpid()]
    assert len(mine) == 1 and mine[0][1] > 0, mine
