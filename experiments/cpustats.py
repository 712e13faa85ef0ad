"""Each CPU of this machine over a run's window: how idle it was, what the hypervisor took,
how many local timer interrupts it served, and the socket drops of the hosts pinned to it.

Hosts of equal allocation pinned to different CPUs are promised the same machine. On a
2-vCPU VM at 75x75 multicast they did not behave alike: in each of 8 runs the two hosts on
CPU 0 dropped more datagrams at full socket buffers than either host on CPU 1, and swapping
the pinning moved the drops with CPU 0 (experiments/README.md, "Spread at 75×75
multicast"). The drops gather on the hosts of the CPU where work outside the hosts runs:
pinning the monitor's own 1 ms timer outside the hosts to the other CPU moved them there,
and the extra timer interrupts (1.6-2.1 times the other CPU's) with them; without that
timer they still fell on one CPU's hosts, at the same total. That timer at 1 ms also
tipped the hosts into dropping a fifth of their datagrams: at 10 ms, as it now runs, 75x75
multicast runs dropped 0.3-0.5% (experiments/fidelity.py). The fidelity record keeps
these per-CPU figures so that such an asymmetry is seen in every run, not found by a
pilot.

Example::

    >>> parse_timer_interrupts("   CPU0  CPU1\\nLOC:  16882  21469  Local timer interrupts\\n")
    {'cpu0': 16882, 'cpu1': 21469}
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import psutil

INTERRUPTS = Path("/proc/interrupts")
CPUS = Path("/sys/devices/system/cpu")
# Below this share on every CPU, which CPU's hosts dropped "most" is a few datagrams' noise.
DROP_FLOOR = 0.001


def parse_timer_interrupts(text: str) -> dict[str, int]:
    """Each CPU's local timer interrupts (the ``LOC`` row of ``/proc/interrupts``)."""
    lines = text.splitlines()
    if not lines:
        return {}
    cpus = [c.lower() for c in lines[0].split()]
    for line in lines[1:]:
        fields = line.split()
        if fields and fields[0] == "LOC:":
            counts = fields[1:1 + len(cpus)]
            return {c: int(v) for c, v in zip(cpus, counts, strict=False) if v.isdigit()}
    return {}


def idle_entries(cpu: str, cpus: Path = CPUS) -> int | None:
    """How many times ``cpu`` entered an idle state that stops it (every cpuidle state
    but ``POLL``; on a VM, a halt that hands the virtual CPU back to the hypervisor), or
    None without a cpuidle driver."""
    states = sorted((cpus / cpu / "cpuidle").glob("state*"))
    total, seen = 0, False
    for st in states:
        try:
            if (st / "name").read_text().strip() == "POLL":
                continue
            total += int((st / "usage").read_text())
            seen = True
        except (OSError, ValueError):
            continue
    return total if seen else None


def read(interrupts: Path = INTERRUPTS, cpus: Path = CPUS) -> dict[str, dict[str, float]]:
    """Per CPU now: idle, steal and interrupt seconds (idle and iowait; steal; hardware
    and software interrupts, from ``/proc/stat``), local timer interrupts and idle entries
    so far."""
    try:
        timers = parse_timer_interrupts(interrupts.read_text())
    except OSError:
        timers = {}
    out: dict[str, dict[str, float]] = {}
    for i, t in enumerate(psutil.cpu_times(percpu=True)):
        cpu = f"cpu{i}"
        out[cpu] = {"idle_s": t.idle + getattr(t, "iowait", 0.0),
                    "steal_s": getattr(t, "steal", 0.0),
                    "interrupt_s": t.irq + t.softirq}
        if cpu in timers:
            out[cpu]["timer_irqs"] = timers[cpu]
        entries = idle_entries(cpu, cpus)
        if entries is not None:
            out[cpu]["idle_entries"] = entries
    return out


# counter read by read(), its rate over a window in window(), and the rate's rounding
_PER_WINDOW = (("steal_s", "steal_share", 4), ("interrupt_s", "interrupt_share", 4),
               ("timer_irqs", "timer_irq_per_s", 1), ("idle_entries", "idle_entries_per_s", 1))


def window(a: dict[str, dict[str, float]], b: dict[str, dict[str, float]], window_s: float,
           pins: dict[str, int], udp: dict[str, dict[str, int]]) -> dict[str, dict[str, Any]]:
    """Per CPU over a window: ``idle_share``, ``steal_share``, ``interrupt_share`` (time
    in hardware and software interrupt handlers, the kernel's packet work among it; with
    IRQ time accounting the kernel charges it to no process), ``timer_irq_per_s``,
    ``idle_entries_per_s`` (halts), the ``hosts`` pinned to it and their
    ``socket_drop_share`` (drops / datagrams that reached their sockets).

    ``pins`` maps host to CPU; ``udp`` is each host's change of UDP counters
    (:func:`experiments.udpstats.delta`).

    >>> a = {"cpu0": {"idle_s": 10.0, "timer_irqs": 100}, "cpu1": {"idle_s": 10.0}}
    >>> b = {"cpu0": {"idle_s": 12.0, "timer_irqs": 2100}, "cpu1": {"idle_s": 10.0}}
    >>> udp = {"h1": {"InDatagrams": 980, "RcvbufErrors": 20},
    ...        "h2": {"InDatagrams": 1000, "RcvbufErrors": 0}}
    >>> window(a, b, 10.0, {"h1": 0, "h2": 1}, udp)["cpu0"]
    {'idle_share': 0.2, 'timer_irq_per_s': 200.0, 'hosts': ['h1'], 'socket_drop_share': 0.02}
    """
    out: dict[str, dict[str, Any]] = {}
    for cpu, before in a.items():
        after = b.get(cpu)
        if after is None or window_s <= 0:
            continue
        rec: dict[str, Any] = {
            "idle_share": round(min(max((after["idle_s"] - before["idle_s"]) / window_s,
                                        0.0), 1.0), 4)}
        for key, name, digits in _PER_WINDOW:
            if key in before and key in after:
                rec[name] = round((after[key] - before[key]) / window_s, digits)
        hosts = sorted((h for h, c in pins.items() if f"cpu{c}" == cpu),
                       key=lambda h: (len(h), h))
        if hosts:
            rec["hosts"] = hosts
            counted = [udp[h] for h in hosts if h in udp]
            if counted:
                drops = sum(c.get("RcvbufErrors", 0) for c in counted)
                got = sum(c.get("InDatagrams", 0) for c in counted) + drops
                rec["socket_drop_share"] = round(drops / got, 5) if got else None
        out[cpu] = rec
    return out


def interrupt_cores(per_cpu: dict[str, dict[str, Any]]) -> float | None:
    """Cores spent in interrupt handlers over the window, all CPUs together (None when
    unknown).

    >>> interrupt_cores({"cpu0": {"interrupt_share": 0.12}, "cpu1": {"interrupt_share": 0.05}})
    0.17
    """
    shares = [r["interrupt_share"] for r in per_cpu.values() if "interrupt_share" in r]
    return round(sum(shares), 3) if shares else None


def drops_by_cpu(per_cpu: dict[str, dict[str, Any]]) -> dict[str, float]:
    """Socket drop share of each CPU's pinned hosts, CPUs with hosts and counters only."""
    return {c: r["socket_drop_share"] for c, r in per_cpu.items()
            if r.get("hosts") and r.get("socket_drop_share") is not None}


def most_dropping_cpu(per_cpu: dict[str, dict[str, Any]]) -> str | None:
    """The CPU whose pinned hosts dropped the largest share, when hosts on two or more CPUs
    were counted and some CPU's hosts dropped at least ``DROP_FLOOR``; else None (ties: the
    first CPU).

    >>> most_dropping_cpu({"cpu0": {"hosts": ["h1"], "socket_drop_share": 0.02},
    ...                    "cpu1": {"hosts": ["h2"], "socket_drop_share": 0.004}})
    'cpu0'
    >>> most_dropping_cpu({"cpu0": {"hosts": ["h1"], "socket_drop_share": 0.0002},
    ...                    "cpu1": {"hosts": ["h2"], "socket_drop_share": 0.0}}) is None
    True
    """
    drops = drops_by_cpu(per_cpu)
    if len(drops) < 2 or max(drops.values()) < DROP_FLOOR:
        return None
    return max(drops, key=lambda c: drops[c])


def drops_text(per_cpu: dict[str, dict[str, Any]]) -> str:
    """'CPU 0 (h1, h3) 2.10%, CPU 1 (h2, h4) 0.40%', with each CPU's timer interrupts and
    idle entries; '' when no pinned host was counted.

    >>> drops_text({"cpu0": {"hosts": ["h1", "h3"], "socket_drop_share": 0.021,
    ...                      "timer_irq_per_s": 2300.0, "idle_entries_per_s": 410.0},
    ...             "cpu1": {"hosts": ["h2", "h4"], "socket_drop_share": 0.004}})
    'CPU 0 (h1, h3) 2.10% (2300 timer interrupts/s, 410 idle entries/s), CPU 1 (h2, h4) 0.40%'
    """
    parts = []
    for cpu, share in drops_by_cpu(per_cpu).items():
        rec = per_cpu[cpu]
        text = f"CPU {cpu.removeprefix('cpu')} ({', '.join(rec['hosts'])}) {share:.2%}"
        rates = [f"{rec[k]:.0f} {what}/s" for k, what in
                 (("timer_irq_per_s", "timer interrupts"), ("idle_entries_per_s", "idle entries"))
                 if rec.get(k) is not None]
        if rates:
            text += f" ({', '.join(rates)})"
        parts.append(text)
    return ", ".join(parts)
