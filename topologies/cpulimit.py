"""CPU-limited emulated hosts: each host a machine of fixed capacity, on cgroup v1 or v2.

A host with ``cpu = C`` may use C cores' worth of CPU time per CFS period, whatever the
machine has (Mininet-HiFi's CPU isolation; DieCast's scaled machines). Saturating such a
host is then a property of the emulated machine, as it is of a real one, and the fidelity
monitor (experiments/fidelity.py) checks the other thing: that the emulator gave each
host its allocation whenever the host could use it.

- **Period.** CFS bandwidth control stops a host that used its quota until the period
  ends. With a 100 ms period a saturated 0.4-core host stood still for up to 60 ms at a
  time (a 1 ms timer inside it fired 36.5 ms late at the 99th percentile), longer than the
  latencies the study measured; the default here is 10 ms (``cpu_period_us``), the
  smallest period whose quota stays above the kernel's 1 ms minimum down to 0.1 core.
- **Phase** (``cpu_period_step_us``). A host gets its quota back at one moment of its
  period's cycle and keeps that moment while it runs, a moment that differs from host to
  host and from build to build: hosts of equal periods keep, for a whole run, whatever
  offset between their refills the run began with (measured: 9.5 and 5.4 ms into the
  10 ms cycle in one build, 2.6 and 0.4 ms in the next). That offset is a state of the
  run, as it is of no real machine: with equal periods 10x10 unicast runs' median
  latencies fell at 2.0-2.2 or at 4.1-4.3 ms, with a 250 µs step at 3.2-3.5 ms. Host k's
  period ``cpu_period_us + k x step`` makes the refills drift through one another's
  cycles within every run.
- **Pinning** (``cpu_pin``): each host's processes may also be confined to one CPU
  (cpuset), hosts dealt round-robin over the CPUs the testbed may use (its own affinity
  within its cgroup's cpuset: under ``taskset -c 1`` that is CPU 1, not CPU 0); the host
  then never runs on two CPUs at once, as a one-core machine, and its throttled time is
  wall time. Each pin is read back once written: on cgroup v2 (or in a container's
  cpuset) the kernel runs a host whose CPU its parent lacks on the parent's CPUs instead,
  without an error. CPUs another testbed's hosts are pinned to are refused (at ``--check``
  and at build), not shared: each testbed's hosts would get less than their allocation.
- **What the counters are.** Throttling (periods, throttled periods, throttled time) comes
  from the CPU controller; CPU time used and pressure (PSI: time some / all of the host's
  runnable tasks waited for a CPU) from cgroup v2, which on a v1 machine is mounted beside
  it (``/sys/fs/cgroup/unified``): every host joins a cgroup in each hierarchy.
- **From the measurement on** (``cpu_from = "measurement"``): the hosts' cgroups exist
  from the start but their quota and pin take effect only when :meth:`CpuLimits.engage`
  is called, which the campaign runner does the moment every agent has matched its peers,
  as the fidelity window opens. Discovery then runs on the whole machine: at 75 + 75 on
  4 hosts of 0.4 core, discovery did not finish in 240 s (a subscriber matched 58 of 75
  publishers, with 5-8% of the datagrams dropped at full sockets), while on the
  whole machine it takes 80-120 s; the study measured its hosts after discovery.
- **Realtime runtime.** With ``CONFIG_RT_GROUP_SCHED`` (v1), a cgroup has no realtime
  runtime unless given some, and ``cyclictest`` (the wake-up sampler) exits at start when
  its privilege check (``sched_setscheduler(SCHED_FIFO)``) fails. Each host gets
  ``RT_RUNTIME_US`` per second; the samplers themselves run at SCHED_OTHER.

Layout: v1 ``/sys/fs/cgroup/{cpu,cpuset,unified}/mcastlab-<tag>/<host>/``; v2
``/sys/fs/cgroup/mcastlab-<tag>/<host>/`` with ``cpu.max`` (and ``cpuset.cpus``).

Every cgroup is recorded in the testbed's ledger before it is made; teardown and
``mcastlab clean`` remove exactly those (rmdir, children first, once their processes are
gone). A process joins its host's cgroups before it executes (``preexec``), so no
instruction of it runs unlimited.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcastlab.capabilities import CGROUP_ROOT, cgroup_cpu_version

PERIOD_US = 10_000  # default CFS period (see the module docstring)
# The CPU-limited host measured faithful (the shipped scaled presets): each setting a
# scenario with `cpu` leaves at another value is named by `mcastlab run --check`
# (faithful_cpu_gaps). A scenario that said only `cpu = 0.4` on 4 hosts (unpinned, limits
# from the build on, equal periods) was unfaithful at 75x75 in both runs tried: the timer
# outside the hosts fired 10.6 and 11.9 ms late at its 99th percentile (limit 5 ms).
FAITHFUL_HOSTS: dict[str, object] = {"cpu_pin": True, "cpu_period_us": PERIOD_US,
                                     "cpu_period_step_us": 250, "cpu_from": "measurement"}


def faithful_cpu_gaps(params: dict[str, object]) -> list[str]:
    """The settings of the faithful CPU-limited host that `params` (a topology's resolved
    parameters) leaves at another value, as ``key = value (here: value)``; empty without
    `cpu` or with all of them.

    >>> gaps = faithful_cpu_gaps({"cpu": 0.4, "cpu_pin": False, "cpu_period_us": 10000,
    ...                           "cpu_period_step_us": 0, "cpu_from": "start"})
    >>> gaps[0], gaps[-1], len(gaps)
    ('cpu_pin = true (here: false)', 'cpu_from = "measurement" (here: "start")', 3)
    """
    if not params.get("cpu"):
        return []

    def toml(v: object) -> str:
        return str(v).lower() if isinstance(v, bool) else f'"{v}"' if isinstance(v, str) \
            else str(v)

    return [f"{k} = {toml(v)} (here: {toml(params.get(k))})"
            for k, v in FAITHFUL_HOSTS.items() if params.get(k) != v]
MIN_QUOTA_US = 1_000  # the kernel refuses a smaller cfs quota
MAX_PERIOD_US = 1_000_000  # and a longer cfs period
RT_RUNTIME_US = 10_000  # realtime runtime per host per second (RT group scheduling only)
# CPU time the emulator itself needs beside the hosts, in cores: switch forwarding and the
# receivers' UDP delivery that softirq work leaves to ksoftirqd, tcpdump, the samplers and
# the runner. Measured: experiments/README.md, "Fixed-capacity hosts".
PLANE_RESERVE_CORES = 0.4
# A host idle less than this share of a window is busy: judged (see window_shares). Pinned
# hosts (cpu_pin) read exactly: a busy loop showed under 0.3% of the window in neither its
# CPU time nor its pressure. Unpinned, 7-19%: the kernel weights each CPU's stall by that
# CPU's busy time, so a task that migrates is undercounted, and an unpinned host starved
# by 20-30% can read as one with idle time and pass. Pin hosts to judge starvation.
BUSY_IDLE_SHARE = 0.15


def version(root: Path = CGROUP_ROOT) -> int | None:
    """1 or 2: which cgroup hierarchy can limit CPU here; None when neither can."""
    return cgroup_cpu_version(root)


def why_unavailable(root: Path = CGROUP_ROOT) -> str | None:
    if version(root) is not None:
        return None
    if (root / "cgroup.controllers").exists():
        return f"cgroup v2 at {root} has no cpu controller"
    return f"no cgroup v1 cpu controller ({root}/cpu/cpu.cfs_quota_us) and no cgroup v2 at {root}"


def parse_cpu_list(text: str) -> set[int]:
    """A kernel CPU list (``cpuset.cpus``, ``taskset -c``) as a set of CPU numbers.

    >>> sorted(parse_cpu_list("0-2,5\\n"))
    [0, 1, 2, 5]
    >>> parse_cpu_list("")
    set()
    """
    cpus: set[int] = set()
    for part in text.strip().split(","):
        if not part:
            continue
        low, _, high = part.partition("-")
        cpus.update(range(int(low), int(high or low) + 1))
    return cpus


def _cpuset_dir(root: Path) -> Path | None:
    """The cpuset directory the testbed's cgroups are made under, None without cpusets."""
    v = version(root)
    if v == 1:
        return root / "cpuset" if (root / "cpuset" / "cpuset.cpus").exists() else None
    if v == 2:
        return root
    return None


def cgroup_cpus(root: Path | None = None) -> set[int] | None:
    """The CPUs the cgroup under which the hosts' cgroups are made may use (its effective
    cpuset), None when no cpuset file says (then only the affinity limits the hosts)."""
    base = _cpuset_dir(CGROUP_ROOT if root is None else root)
    if base is None:
        return None
    for name in ("cpuset.effective_cpus", "cpuset.cpus.effective", "cpuset.cpus"):
        try:
            text = (base / name).read_text().strip()
        except OSError:
            continue
        if text:
            return parse_cpu_list(text)
    return None


def allowed_cpus(root: Path | None = None) -> list[int]:
    """The CPU numbers the testbed may use, ascending: this process's affinity within its
    cgroup's cpuset. Hosts are pinned to these and no others."""
    mine = set(os.sched_getaffinity(0))
    theirs = cgroup_cpus(root)
    return sorted(mine if theirs is None else mine & theirs)


def machine_cpus(root: Path | None = None) -> int:
    """How many CPUs the testbed may use (what the hosts share): :func:`allowed_cpus`."""
    return len(allowed_cpus(root))


def pin_unavailable(root: Path | None = None) -> str | None:
    """Why hosts cannot be pinned here (no cpuset controller), or None when they can."""
    root = CGROUP_ROOT if root is None else root
    v = version(root)
    if v == 1 and not (root / "cpuset" / "cpuset.cpus").exists():
        return (f"cpu_pin needs the cgroup v1 cpuset controller ({root}/cpuset), which this "
                "machine lacks")
    if v == 2:
        have = (root / "cgroup.controllers").read_text().split()
        if "cpuset" not in have:
            return (f"cpu_pin needs the cpuset controller, which cgroup v2 at {root} lacks "
                    f"(cgroup.controllers: {' '.join(have) or 'none'})")
        sub = root / "cgroup.subtree_control"
        if sub.exists() and "cpuset" not in sub.read_text().split():
            return (f"cpu_pin needs the cpuset controller enabled for child cgroups at {root} "
                    f"(cgroup.subtree_control: {sub.read_text().strip() or 'empty'})")
    return None


def min_cores(period_us: int) -> float:
    """The smallest ``cpu`` a period allows (the kernel's 1 ms minimum quota)."""
    return MIN_QUOTA_US / period_us


def pinned_elsewhere(tag: str | None = None, root: Path | None = None) -> dict[int, list[str]]:
    """The CPUs other testbeds' hosts are pinned to now, each with those hosts
    (``mcastlab-<tag>/<host>``), read from their cpuset cgroups; ``tag``'s own are left
    out. A host whose pin is deferred to the measurement is seen once engaged."""
    base = _cpuset_dir(CGROUP_ROOT if root is None else root)
    if base is None:
        return {}
    taken: dict[int, list[str]] = {}
    for f in sorted(base.glob("mcastlab-*/*/cpuset.cpus")):
        testbed = f.parent.parent.name
        if tag is not None and testbed == f"mcastlab-{tag}":
            continue
        try:
            cpus = parse_cpu_list(f.read_text())
        except (OSError, ValueError):
            continue
        if len(cpus) == 1:  # a pin (an unpinned or not yet engaged host has its parent's)
            taken.setdefault(cpus.pop(), []).append(f"{testbed}/{f.parent.name}")
    return taken


def shared_pin_problem(cpus: set[int], tag: str | None = None, root: Path | None = None
                       ) -> str | None:
    """Why hosts cannot be pinned to ``cpus``: another testbed's hosts are pinned there
    (each would get less than its allocation), or None."""
    taken = pinned_elsewhere(tag, root)
    clash = sorted(cpus & set(taken))
    if not clash:
        return None
    hosts = sorted(h for c in clash for h in taken[c])
    return (f"cpu_pin: CPU {', '.join(map(str, clash))} already "
            f"{'holds' if len(clash) == 1 else 'hold'} the pinned hosts of another testbed "
            f"({', '.join(hosts)}): two testbeds pinned to one CPU each get less than their "
            "allocation; wait until it ends (`mcastlab clean` removes one left by a crash), "
            "or give this one other CPUs (taskset -c LIST mcastlab ...)")


def pin_plan(hosts: list[str], cpus: Sequence[int]) -> dict[str, int]:
    """Hosts dealt round-robin over the CPU numbers ``cpus`` (:func:`allowed_cpus`).

    >>> pin_plan(["h1", "h2", "h3", "h4"], [2, 3])
    {'h1': 2, 'h2': 3, 'h3': 2, 'h4': 3}
    """
    if not cpus:
        raise ValueError("no CPU to pin the hosts to")
    return {h: cpus[i % len(cpus)] for i, h in enumerate(hosts)}


def capacity_problem(hosts: list[str], cores: float, cpus: int, pin: bool,
                     reserve: float = PLANE_RESERVE_CORES) -> str | None:
    """Why the machine cannot honour ``cores`` for each of ``hosts`` with ``reserve`` left
    to the emulator itself, or None when it can (with ``pin``: per CPU, the reserve shared
    evenly).

    >>> capacity_problem(["h1", "h2", "h3", "h4"], 0.4, 2, False)
    >>> capacity_problem(["h1", "h2", "h3"], 0.9, 2, False)  # doctest: +ELLIPSIS
    '3 hosts x 0.9 cores = 2.7 cores, but this machine has 2 CPUs of which 0.4 ...'
    """
    if pin:
        if cores > 1:
            return (f"cpu = {cores:g} cores cannot be pinned to one CPU (cpu_pin = on needs "
                    "cpu <= 1)")
        per_cpu: dict[int, int] = {}
        for cpu in pin_plan(hosts, range(cpus)).values():
            per_cpu[cpu] = per_cpu.get(cpu, 0) + 1
        worst = max(per_cpu.values())
        room = 1.0 - reserve / cpus
        if worst * cores > room + 1e-9:
            return (f"{worst} hosts x {cores:g} cores pinned to one CPU = {worst * cores:g}, "
                    f"but each of this machine's {cpus} CPUs keeps {reserve / cpus:g} for the "
                    f"emulator (switching, captures, samplers): at most {room / worst:.3g} "
                    f"cores per host")
        return None
    total = len(hosts) * cores
    room = cpus - reserve
    if total > room + 1e-9:
        return (f"{len(hosts)} hosts x {cores:g} cores = {total:g} cores, but this machine "
                f"has {cpus} CPUs of which {reserve:g} are kept for the emulator (switching, "
                f"captures, samplers): at most {max(room, 0) / len(hosts):.3g} cores per host")
    return None


def host_period_us(period_us: int, step_us: int, index: int) -> int:
    """The CFS period of the host at ``index`` (0, 1, ... in the topology's order)."""
    return period_us + index * step_us


def limits_problem(hosts: list[str], cores: float, period_us: int, pin: bool, cpus: int,
                   step_us: int = 0) -> str | None:
    """Why hosts of ``cores`` each cannot be set up as asked on a machine of ``cpus`` CPUs
    (the kernel's minimum quota and longest period, pinning above one core, the capacity
    left to the emulator), or None.

    >>> limits_problem(["h1"], 0.05, 10_000, False, 2)[:51]
    'cpu = 0.05 with cpu_period_us = 10000: at least 0.1'
    >>> limits_problem(["h1", "h2", "h3"], 0.4, 10_000, False, 2, step_us=500_000)[:61]
    'cpu_period_us = 10000 and cpu_period_step_us = 500000 give h3'
    """
    longest = host_period_us(period_us, step_us, len(hosts) - 1)
    if hosts and longest > MAX_PERIOD_US:
        return (f"cpu_period_us = {period_us} and cpu_period_step_us = {step_us} give "
                f"{hosts[-1]} a period of {longest} µs: the kernel's longest is "
                f"{MAX_PERIOD_US} µs, so at most "
                f"{(MAX_PERIOD_US - period_us) // max(len(hosts) - 1, 1)} µs of step")
    low = min_cores(period_us)
    if cores < low - 1e-12:
        return (f"cpu = {cores:g} with cpu_period_us = {period_us}: at least {low:g} cores "
                f"(the kernel's smallest quota is {MIN_QUOTA_US} µs per period)")
    return capacity_problem(hosts, cores, cpus, pin)


def spec_problem(spec: Any) -> str | None:
    """:func:`limits_problem` for a resolved topology on this machine (None without ``cpu``)."""
    cores = spec.params.get("cpu")
    if not cores:
        asked = [f"{k} = {spec.params[k]}" for k, off in (("cpu_pin", False),
                                                          ("cpu_from", "start"),
                                                          ("cpu_period_step_us", 0))
                 if spec.params.get(k, off) != off]
        return (f"{' and '.join(asked)} take effect only on CPU-limited hosts: set cpu "
                "(cores per host)") if asked else None
    cpus = allowed_cpus()
    if not cpus:
        return (f"the testbed may use no CPU: its affinity "
                f"({sorted(os.sched_getaffinity(0))}) and its cgroup's cpuset "
                f"({sorted(cgroup_cpus() or [])}) have none in common")
    return (limits_problem(list(spec.hosts), float(cores),
                           int(spec.params.get("cpu_period_us") or PERIOD_US),
                           bool(spec.params.get("cpu_pin")), len(cpus),
                           int(spec.params.get("cpu_period_step_us") or 0))
            or spec_pin_problem(spec))


def spec_pin_problem(spec: Any) -> str | None:
    """Why a resolved topology's hosts cannot be pinned on this machine now (no cpuset
    controller; the CPUs they would get hold another testbed's pinned hosts), or None
    (also when they are not pinned)."""
    if not (spec.params.get("cpu") and spec.params.get("cpu_pin")):
        return None
    why = pin_unavailable()
    if why:
        return why
    cpus = allowed_cpus()
    if not cpus:
        return None  # spec_problem says why
    return shared_pin_problem(set(pin_plan(list(spec.hosts), cpus).values()))


def _write(path: Path, value: str) -> None:
    """Write a cgroup file unbuffered, so a refused value raises here (not at close)."""
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, value.encode())
    finally:
        os.close(fd)


def _read_flat(path: Path) -> dict[str, int]:
    """A ``key value`` per line file (cpu.stat) as ints; {} when unreadable."""
    try:
        return {k: int(v) for k, v in (line.split()[:2] for line in path.read_text().splitlines()
                                       if len(line.split()) >= 2)}
    except (OSError, ValueError):
        return {}


def read_pressure(path: Path) -> dict[str, int]:
    """{"some": µs, "full": µs} totals of a PSI file; {} when unreadable.

    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "cpu.pressure"
    >>> _ = p.write_text("some avg10=0.00 avg60=0.00 avg300=0.00 total=12\\n"
    ...                  "full avg10=0.00 avg60=0.00 avg300=0.00 total=5\\n")
    >>> read_pressure(p)
    {'some': 12, 'full': 5}
    """
    try:
        text = path.read_text()
    except OSError:
        return {}
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"^(some|full) .*total=(\d+)",
                                                            text, re.M)}


@dataclass(frozen=True)
class Counters:
    """One host's cumulative counters at one moment (None: not available here)."""

    periods: int
    throttled: int
    throttled_us: float
    usage_us: float | None
    pressure_some_us: float | None
    pressure_full_us: float | None


class CpuLimits:
    """The per-host cgroups of one testbed. ``ledger`` records each before it exists."""

    def __init__(self, tag: str, ledger: Any, root: Path = CGROUP_ROOT,
                 period_us: int = PERIOD_US, pin: bool = False,
                 deferred: bool = False, period_step_us: int = 0) -> None:
        v = version(root)
        if v is None:
            raise RuntimeError(f"CPU-limited hosts need a cgroup CPU controller: "
                               f"{why_unavailable(root)}")
        self.version = v
        self.ledger = ledger
        self.period_us = int(period_us)
        self.period_step_us = int(period_step_us)
        self.periods: dict[str, int] = {}  # host -> its CFS period, µs
        self.pin = pin
        self.root = root
        self.tag = tag
        name = f"mcastlab-{tag}"
        base = root / "cpu" if v == 1 else root
        self.parent = base / name
        # Further hierarchies a host joins (v1): its pinning, its usage and pressure.
        self.cpuset_parent: Path | None = None
        self.stats_parent: Path | None = None
        self.allowed: list[int] = []  # the CPUs hosts may be pinned to (allowed_cpus)
        if pin:
            why = pin_unavailable(root)
            if why:
                raise RuntimeError(why)
            self.allowed = allowed_cpus(root)
        if v == 1:
            if pin:
                self.cpuset_parent = root / "cpuset" / name
            if (root / "unified" / "cgroup.procs").exists():
                self.stats_parent = root / "unified" / name
        else:
            self.stats_parent = self.parent
        self.hosts: dict[str, list[Path]] = {}  # host -> every cgroup directory it joins
        self.cores: dict[str, float] = {}
        self.cpus: dict[str, int] = {}  # host -> the CPU it is pinned to
        self.rt_runtime_us: int | None = None
        self._parents_made = False
        # deferred: quotas and pins written by engage(), not by limit()
        self.deferred = deferred
        self.engaged = not deferred
        self.engaged_at: float | None = None  # time.monotonic() of engage()

    # --- building ---------------------------------------------------------------------
    def plan(self, hosts: list[str]) -> dict[str, int]:
        """The CPU each of ``hosts`` is pinned to: dealt over the CPUs the testbed may use."""
        if not self.allowed:
            raise RuntimeError(f"cpu_pin: the testbed may use no CPU (affinity "
                               f"{sorted(os.sched_getaffinity(0))} within the cpuset of "
                               f"{_cpuset_dir(self.root)})")
        plan = pin_plan(hosts, self.allowed)
        why = shared_pin_problem(set(plan.values()), self.tag, self.root)
        if why:
            raise RuntimeError(why)
        return plan

    def _mkdir(self, path: Path) -> None:
        self.ledger.record_cgroup(path)
        path.mkdir()

    def _make_parents(self) -> None:
        self._mkdir(self.parent)
        if self.version == 2:
            _write(self.parent / "cgroup.subtree_control", "+cpu +cpuset" if self.pin else "+cpu")
        if self.cpuset_parent is not None:
            self._mkdir(self.cpuset_parent)
            src = self.cpuset_parent.parent
            for f in ("cpuset.cpus", "cpuset.mems"):
                _write(self.cpuset_parent / f, (src / f).read_text().strip())
        if self.stats_parent is not None and self.stats_parent != self.parent:
            self._mkdir(self.stats_parent)
        self._parents_made = True

    def _rt_runtime(self, cg: Path) -> None:
        """Realtime runtime for the host (and room for it in the parent), where RT group
        scheduling exists (the file is there) — see the module docstring."""
        f = cg / "cpu.rt_runtime_us"
        if not f.exists():
            return
        need = RT_RUNTIME_US * (len(self.hosts) + 1)
        _write(self.parent / "cpu.rt_runtime_us", str(need))
        _write(f, str(RT_RUNTIME_US))
        self.rt_runtime_us = RT_RUNTIME_US

    def limit(self, host: str, cores: float, cpu: int | None = None) -> Path:
        """Create ``host``'s cgroups with ``cores`` of CPU time per period (pinned to CPU
        ``cpu`` when pinning); returns its CPU controller's directory. Deferred limits
        leave the host unlimited and unpinned until :meth:`engage`."""
        if not self._parents_made:
            self._make_parents()
        if self.pin and cpu not in self.allowed:
            raise ValueError(f"{host}: pinning needs one of the CPUs the testbed may use "
                             f"({', '.join(map(str, self.allowed))}); got {cpu}")
        cg = self.parent / host
        self._mkdir(cg)
        dirs = [cg]
        self.periods[host] = host_period_us(self.period_us, self.period_step_us,
                                            len(self.periods))
        if self.version == 1:
            _write(cg / "cpu.cfs_period_us", str(self.periods[host]))
            self._rt_runtime(cg)
        if self.pin:
            sets = cg if self.cpuset_parent is None else self.cpuset_parent / host
            if sets != cg:
                self._mkdir(sets)
                dirs.append(sets)
                _write(sets / "cpuset.mems", (self.cpuset_parent / "cpuset.mems").read_text()
                       .strip())  # type: ignore[operator]
            if self.deferred and self.version == 1:  # v1 needs CPUs before tasks join:
                # every CPU of the testbed's parent until engaged (v2 inherits them)
                _write(sets / "cpuset.cpus", (sets.parent / "cpuset.cpus").read_text().strip())
            self.cpus[host] = cpu  # type: ignore[assignment]
        if self.stats_parent is not None and self.stats_parent != self.parent:
            stats = self.stats_parent / host
            self._mkdir(stats)
            dirs.append(stats)
        self.hosts[host] = dirs
        self.cores[host] = cores
        if not self.deferred:
            self._apply(host)
        return cg

    def _quota_us(self, host: str) -> int:
        return max(round(self.cores[host] * self.periods[host]), MIN_QUOTA_US)

    def _apply(self, host: str) -> None:
        """Write ``host``'s quota (and pin)."""
        cg = self.parent / host
        if self.version == 1:
            _write(cg / "cpu.cfs_quota_us", str(self._quota_us(host)))
        else:
            _write(cg / "cpu.max", f"{self._quota_us(host)} {self.periods[host]}")
        if self.pin:
            sets = cg if self.cpuset_parent is None else self.cpuset_parent / host
            _write(sets / "cpuset.cpus", str(self.cpus[host]))
            self._check_pin(host, sets)

    def _check_pin(self, host: str, sets: Path) -> None:
        """Read ``host``'s pin back: the CPUs its cgroup runs on in effect. On cgroup v2 a
        CPU the parent lacks is accepted and the parent's CPUs used instead, silently."""
        want = self.cpus[host]
        for name in ("cpuset.effective_cpus", "cpuset.cpus.effective", "cpuset.cpus"):
            f = sets / name
            if f.exists():
                text = f.read_text().strip()
                if parse_cpu_list(text) != {want}:
                    raise RuntimeError(f"{host}: pinned to CPU {want}, but {f} reads "
                                       f"{text or 'empty'!r}: the kernel did not confine the "
                                       f"host to that CPU (the testbed may use "
                                       f"{', '.join(map(str, self.allowed))})")
                return
        raise RuntimeError(f"{host}: pinned to CPU {want}, but {sets} has no cpuset file to "
                           "read the pin back from")

    def set_cores(self, host: str, cores: float) -> None:
        """Give a built host ``cores`` from now on (in effect at once when the limits are
        engaged, else at :meth:`engage`). The known-answer tests change C within one run:
        runs built seconds apart differ by more than the C they compare."""
        if host not in self.hosts:
            raise KeyError(f"{host} is not a CPU-limited host of this testbed")
        self.cores[host] = cores
        if self.engaged:
            self._apply(host)

    def engage(self) -> bool:
        """Deferred limits take effect now (every host's quota, then its pin); True the
        first time, False when they already were in effect."""
        if self.engaged:
            return False
        for host in self.hosts:
            self._apply(host)
        self.engaged = True
        self.engaged_at = time.monotonic()
        return True

    def preexec(self, host: str) -> Callable[[], None] | None:
        """A Popen ``preexec_fn`` that moves the child into ``host``'s cgroups (None if the
        host is not limited)."""
        dirs = self.hosts.get(host)
        if dirs is None:
            return None
        procs = [str(d / "cgroup.procs") for d in dirs]

        def join() -> None:
            for path in procs:
                fd = os.open(path, os.O_WRONLY)
                try:
                    os.write(fd, b"0")  # "0": the writing process itself
                finally:
                    os.close(fd)

        return join

    # --- reading ----------------------------------------------------------------------
    def pids(self) -> set[int]:
        """The processes in the hosts' cgroups now."""
        out: set[int] = set()
        for host in self.hosts:
            try:
                text = (self.parent / host / "cgroup.procs").read_text()
                out.update(int(x) for x in text.split())
            except (OSError, ValueError):
                continue
        return out

    def _stats_dir(self, host: str) -> Path | None:
        if self.stats_parent is None:
            return None
        return self.stats_parent / host

    def snapshot(self) -> dict[str, Counters]:
        """Every host's cumulative counters now."""
        out = {}
        for host in self.hosts:
            cg = self.parent / host
            st = _read_flat(cg / "cpu.stat")
            if self.version == 1:
                throttled_us = st.get("throttled_time", 0) / 1000.0  # ns
            else:
                throttled_us = float(st.get("throttled_usec", 0))
            usage: float | None = None
            some: float | None = None
            full: float | None = None
            sd = self._stats_dir(host)
            if sd is not None:
                s2 = st if sd == cg else _read_flat(sd / "cpu.stat")
                if "usage_usec" in s2:
                    usage = float(s2["usage_usec"])
                psi = read_pressure(sd / "cpu.pressure")
                some, full = psi.get("some"), psi.get("full")
            out[host] = Counters(periods=st.get("nr_periods", 0),
                                 throttled=st.get("nr_throttled", 0),
                                 throttled_us=throttled_us, usage_us=usage,
                                 pressure_some_us=None if some is None else float(some),
                                 pressure_full_us=None if full is None else float(full))
        return out

    def describe(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "cgroup_version": self.version, "period_us": self.period_us,
            "cores": dict(self.cores), "pinned": self.pin,
            "paths": {h: str(self.parent / h) for h in self.hosts},
            "counters": ("usage and pressure from cgroup v2"
                         + (f" ({self.stats_parent.parent})" if self.stats_parent else "")
                         if self.stats_parent is not None
                         else "no cgroup v2: usage and pressure not measured"),
        }
        if self.period_step_us:
            d["periods_us"] = dict(self.periods)
        if self.pin:
            d["cpus"] = dict(self.cpus)
        if self.rt_runtime_us is not None:
            d["rt_runtime_us"] = self.rt_runtime_us
        # when the limits took effect is the run's (manifest cpu_engaged_s): this is
        # described when the network is built
        d["from"] = "measurement" if self.deferred else "start"
        return d


def window_shares(a: Counters, b: Counters, cores: float, window_s: float,
                  steal_share: float = 0.0) -> dict[str, float | None]:
    """One host's shares over a window from its counters at its start (``a``) and end.

    - ``cores_used``: CPU time / window;
    - ``allocation_share``: CPU time / (``cores`` × window);
    - ``throttled_share``: throttled periods / periods;
    - ``pressure_full_share``: share of the window in which none of the host's runnable
      tasks ran (throttled, or waiting for a CPU);
    - ``starved_share``: that share in the periods in which the host did not use its whole
      quota (``pressure_full_share × (1 − throttled_share)``): waiting for a CPU within its
      allocation. A lightly loaded host waits like that at each wake-up (scheduling
      latency: measured, 5-18% of the window for hosts with one or two agents beside
      saturated ones) and still gets all the CPU it asks for, so this is recorded, not
      judged;
    - ``idle_share``: the rest of the window, when the host had nothing to run
      (``1 − min(cores_used, 1) − pressure_full_share − steal_share``, at least 0).
      ``steal_share`` is the share of the window the hypervisor took from the host's CPU
      (steal): the kernel charges that time to no task and sees no task waiting (measured
      on pinned 1x1 hosts: idle share without it against steal, r = 0.99), so counted as
      idle it hid the allocation a host slowed by steal did not get;
    - ``shortfall_share``: for a busy host (``idle_share`` below ``BUSY_IDLE_SHARE``), the
      allocation it did not get while it had work,
      ``1 − CPU time / (cores × window × (1 − idle_share))``, at least 0; 0 for a host idle
      longer, which got what it asked for. This is what makes the emulator unfaithful to a
      host: a machine of C cores gets C whenever it has work. Over the whole window instead,
      a busy host's own idle time would read as shortfall (measured: hosts idle 11% of a
      window, waiting for a CPU 1-3% of it, read 10% short). A lightly loaded host is not
      judged: most of its runnable time is the wait at each wake-up described above.

    >>> a = Counters(0, 0, 0, 0, 0, 0)
    >>> saturated = Counters(100, 100, 600_000, 400_000, 900_000, 600_000)
    >>> s = window_shares(a, saturated, 0.4, 1.0)
    >>> s["starved_share"], s["shortfall_share"]
    (0.0, 0.0)
    >>> oversubscribed = Counters(100, 0, 0, 650_000, 280_000, 280_000)  # 0.9 core asked
    >>> window_shares(a, oversubscribed, 0.9, 1.0)["shortfall_share"]  # runnable 93%
    0.2234
    >>> busy = Counters(100, 90, 500_000, 360_000, 530_000, 530_000)  # idle 11%
    >>> s = window_shares(a, busy, 0.4, 1.0)
    >>> s["allocation_share"], s["shortfall_share"]
    (0.9, 0.0)
    >>> half = Counters(100, 50, 300_000, 300_000, 540_000, 540_000)  # nothing to run 16%
    >>> window_shares(a, half, 0.4, 1.0)["shortfall_share"]
    0.0
    >>> s = window_shares(a, half, 0.4, 1.0, steal_share=0.1)  # 10 of those 16 stolen
    >>> s["idle_share"], s["shortfall_share"]
    (0.06, 0.2021)
    """
    out: dict[str, float | None] = dict.fromkeys(
        ["cores_used", "allocation_share", "throttled_share", "pressure_full_share",
         "starved_share", "idle_share", "shortfall_share"])
    if window_s <= 0:
        return out
    periods = b.periods - a.periods
    thr = (b.throttled - a.throttled) / periods if periods > 0 else 0.0
    out["throttled_share"] = round(thr, 5)
    if a.usage_us is not None and b.usage_us is not None:
        used = (b.usage_us - a.usage_us) / 1e6 / window_s
        out["cores_used"] = round(used, 4)
        out["allocation_share"] = round(used / cores, 4) if cores > 0 else None
    if a.pressure_full_us is not None and b.pressure_full_us is not None:
        full = min(max((b.pressure_full_us - a.pressure_full_us) / 1e6 / window_s, 0.0), 1.0)
        out["pressure_full_share"] = round(full, 5)
        out["starved_share"] = round(full * (1.0 - thr), 5)
        alloc = out["allocation_share"]
        if out["cores_used"] is not None and alloc is not None:
            idle = max(0.0, 1.0 - min(out["cores_used"], 1.0) - full - steal_share)
            out["idle_share"] = round(idle, 5)
            out["shortfall_share"] = (round(max(0.0, 1.0 - alloc / (1.0 - idle)), 4)
                                      if idle < BUSY_IDLE_SHARE else 0.0)
    return out

