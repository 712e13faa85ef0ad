"""Who used the CPU outside the emulated hosts during a run's measurement window.

A busy CPU-limited host that got less than its allocation while it had work was kept
from a CPU by something outside the hosts: the network plane, the kernel's threads, the
runner and its samplers, or a process that has nothing to do with the testbed. The
fidelity check says *that* the emulator broke its promise; this record says *who* took
the time. Each process's user and system time comes from ``/proc/<pid>/stat`` at both
edges of the window; the processes in the hosts' cgroups are left out, and the rest are
summed by command name. A process that started and ended inside the window is not seen;
one that started inside it counts all its time.

>>> a = {(10, 5): ("tcpdump", 1.0), (11, 5): ("python3", 2.0), (12, 6): ("agent", 3.0)}
>>> b = {(10, 5): ("tcpdump", 1.5), (11, 5): ("python3", 6.0), (12, 6): ("agent", 9.0),
...      (13, 7): ("apt-get", 2.0)}
>>> outside(a, b, 10.0, inside={12})
{'cores': 0.65, 'top': [('python3', 0.4), ('apt-get', 0.2), ('tcpdump', 0.05)]}
>>> outside_text({'cores': 0.65, 'top': [('python3', 0.4), ('apt-get', 0.2)]})
'0.65 core outside the hosts (python3 0.40, apt-get 0.20)'
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

PROC = Path("/proc")
TOP = 3  # command names listed
_TICK = os.sysconf("SC_CLK_TCK")

Snapshot = dict[tuple[int, int], tuple[str, float]]  # (pid, start tick) -> (comm, CPU s)


def parse_stat(text: str) -> tuple[str, int, float] | None:
    """(comm, start tick, user + system seconds) from a ``/proc/<pid>/stat`` line.

    >>> parse_stat("42 (my (odd) cmd) S 1 42 42 0 -1 4194560 1 0 0 0 250 50 0 0 20 0 1 0 "
    ...            "777 0 0")
    ('my (odd) cmd', 777, 3.0)
    """
    left, right = text.find("("), text.rfind(")")
    if left < 0 or right < left:
        return None
    fields = text[right + 2:].split()  # from field 3 (state) on
    try:
        utime, stime, start = int(fields[11]), int(fields[12]), int(fields[19])
    except (IndexError, ValueError):
        return None
    return text[left + 1:right], start, (utime + stime) / _TICK


def snapshot(proc: Path = PROC) -> Snapshot:
    """Every process's command and CPU seconds so far, keyed by pid and start time (a
    reused pid is another process)."""
    out: Snapshot = {}
    for d in proc.iterdir():
        if not d.name.isdigit():
            continue
        try:
            parsed = parse_stat((d / "stat").read_text())
        except OSError:  # ended meanwhile
            continue
        if parsed is not None:
            comm, start, secs = parsed
            out[(int(d.name), start)] = (comm, secs)
    return out


def outside(a: Snapshot, b: Snapshot, window_s: float, inside: set[int]) -> dict[str, Any]:
    """Cores used over the window by the processes not in ``inside`` (the hosts' pids),
    in total and by command name, largest first (``TOP`` of them; ties by name)."""
    by_comm: dict[str, float] = {}
    for key, (comm, secs) in b.items():
        if key[0] in inside:
            continue
        used = secs - a[key][1] if key in a else secs
        if used > 0:
            by_comm[comm] = by_comm.get(comm, 0.0) + used
    total = sum(by_comm.values())
    top = sorted(by_comm.items(), key=lambda kv: (-kv[1], kv[0]))[:TOP]
    return {"cores": round(total / window_s, 3),
            "top": [(comm, round(secs / window_s, 3)) for comm, secs in top]}


def outside_text(rec: dict[str, Any]) -> str:
    """'0.65 core outside the hosts (python3 0.40, apt-get 0.20)', and the cores of the
    kernel's interrupt handlers when known (``interrupt_cores``, all CPUs together);
    commands that used under 0.005 core are left out of the text.

    >>> outside_text({"cores": 0.04, "top": [("cyclictest", 0.01)], "interrupt_cores": 0.3})
    '0.04 core outside the hosts (cyclictest 0.01), 0.30 core in interrupt handlers'
    """
    top = ", ".join(f"{comm} {cores:.2f}" for comm, cores in rec.get("top", [])
                    if cores >= 0.005)
    text = f"{rec['cores']:.2f} core outside the hosts" + (f" ({top})" if top else "")
    irq = rec.get("interrupt_cores")
    return text if irq is None else f"{text}, {irq:.2f} core in interrupt handlers"
