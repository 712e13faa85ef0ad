"""Emulation fidelity: did the emulator keep its promises, and were the emulated hosts saturated?

Mininet-HiFi (Handigol et al., CoNEXT 2012) calls a run whose emulator fell behind invalid;
what it checks is whether each host and link got what it was promised, not whether a host
was busy. This module does that per run, over the *measurement window*: from the moment
every agent reported discovery complete to the moment the first agent exits (discovery
at 75 + 75 participants saturates the machine on its own; the tables do not measure it).

Two kinds of run, two sets of questions:

* **Unlimited hosts** (no ``cpu`` parameter): the emulated hosts *are* the machine, so a
  host that could not keep up means the emulator could not. ``host``-bound (testbed-bound)
  when socket drops, late timers, a paced rate not reached or (if set) CPU pressure cross
  the :class:`Thresholds`; else ``network``-bound.
* **CPU-limited hosts** (``cpu = C``: machines of fixed capacity,
  :mod:`topologies.cpulimit`): (a) *was the emulator faithful?* — every host got its
  allocation whenever it could use it (``shortfall_share``: how much less than its
  allocation a busy host got while it had work), the network plane kept up (a 10 ms timer
  outside the hosts, softnet backlog drops); if not, ``host``-bound: testbed-bound, no
  verdict. (b) *was an emulated host saturated?* — throttling, socket drops inside it,
  late timers inside it, a paced rate not reached: properties of the emulated machine,
  as of a saturated VM, reported (``saturated``, "hosts saturated at 0.4 core: 1.0% socket
  drops") and never a reason to withhold a verdict.

Window metrics (``metrics``; per host in ``per_host``):

- ``socket_drop_share``: datagrams the kernel dropped at full socket receive buffers
  (``RcvbufErrors``) / datagrams that reached the hosts' sockets (``/proc/net/snmp``).
- ``cpu_pressure_some_share``: share of the window in which some task of the machine
  waited for a CPU (``/proc/pressure/cpu``); with CPU-limited hosts it counts throttled
  time too, so it is recorded, never judged, there.
- ``cpu_busy_share``: CPU time of the agent processes / (window × online cores).
- ``wakeup_p99_us``, ``wakeup_max_us``: how late a 1 ms periodic timer fired in each
  host's namespace (``cyclictest`` at SCHED_OTHER, like an agent thread; worst host).
- ``plane_wakeup_p99_us``: the same kind of timer outside every host's cgroup, in a
  switch's (or router's) namespace, at a 10 ms period (:data:`PLANE_PERIOD_US`):
  whether the machine left the emulator its share.
- ``softnet_drop_share``: packets the kernel dropped at full per-CPU backlogs
  (``/proc/net/softnet_stat``) / packets processed.
- ``throttled_share``, ``shortfall_share``, ``starved_share``, ``allocation_share``: CPU-limited
  hosts with agents (worst host;
  :func:`topologies.cpulimit.window_shares`).
- ``pub_rate_achieved_share``: paced runs, publication rate achieved / requested.
- ``capture_drop_share``: packets tcpdump lost in the kernel / packets it received: a
  warning on the wire evidence, not a bound.
- ``steal_share``: on a virtual machine, the largest share of the window the hypervisor
  kept one of this machine's CPUs from running it (steal time, ``/proc/stat``; per CPU in
  ``steal_per_cpu``). A CPU whose hosts are pinned to it loses that much of its capacity
  to another tenant: a warning above ``STEAL_WARNING_SHARE``; a bound (with either kind
  of host) only when ``max_steal_share`` is set below 1.

Per CPU of this machine (``per_cpu``, :mod:`experiments.cpustats`): idle share, steal share,
local timer interrupts and idle entries (halts) per second and, with pinned hosts, the
hosts on that CPU and their socket drop share. Recorded, never judged: hosts of equal
allocation on different CPUs are meant to be equal machines, and this shows when they
were not. When pinned hosts of two CPUs were counted and some dropped, ``most_drops_cpu``
names the CPU whose hosts dropped the largest share and ``drops_by_cpu_text`` gives the
figures.

A sampler that gives nothing (cyclictest refused to start, say) is a warning in the run
and in the report, never a silent gap. A check that could not run (a sampler that gave
nothing, the hosts' cgroup v2 counters or a router's counters missing, no measurement
window at all) makes the run *unverified*: ``verified`` is false, ``unverified`` names what
is missing, ``emulator.faithful`` is false, and analysis gives such a run no verdict;
``bound`` is still the one judged on what was measured. A record without ``verified``
(made before it existed) reads as verified (:func:`is_verified`).

The checks themselves (thresholds, groups and ids, judgements, counter parsers) are
:mod:`experiments.fidelity_checks`; this module is the monitor that runs them.

Example::

    >>> judge({"socket_drop_share": 0.2, "cpu_pressure_some_share": 0.1}, Thresholds())
    ('host', ['datagrams dropped at full socket buffers: 20.0% (limit 1.0%)'])
"""

from __future__ import annotations

import contextlib
import math
import os
import subprocess
import time
from pathlib import Path
from typing import Any

from experiments import cpustats, proctime, udpstats
from experiments.fidelity_checks import (
    CYCLICTEST,
    EMULATOR_CHECKS,
    HOST_PERIOD_US,
    PLANE,
    PLANE_PERIOD_US,
    PSI_CPU,
    STEAL_WARNING_SHARE,
    Thresholds,
    _round,
    _share,
    cyclictest_args,
    failed_checks,
    host_steal,
    is_verified,
    judge,
    judge_limited,
    ksoftirqd_delays_ns,
    parse_psi_total_us,
    pub_rate_share,
    read_psi_total_us,
    read_softnet,
    read_steal,
    read_wakeup,
    router_counters,
    router_window,
    saturation_text,
    short_window_warning,
    steal_shares,
    steal_warning,
    stolen_only,
    unfaithful_emulation,
    worst_steal,
)
from mcastlab.testbed import Testbed

# The checks' public names stay reachable here (callers import them from either module).
__all__ = [
    "CYCLICTEST",
    "EMULATOR_CHECKS",
    "HOST_PERIOD_US",
    "PLANE",
    "PLANE_PERIOD_US",
    "PSI_CPU",
    "STEAL_WARNING_SHARE",
    "Monitor",
    "Thresholds",
    "cyclictest_args",
    "failed_checks",
    "host_steal",
    "is_verified",
    "judge",
    "judge_limited",
    "ksoftirqd_delays_ns",
    "parse_psi_total_us",
    "pub_rate_share",
    "read_psi_total_us",
    "read_softnet",
    "read_steal",
    "read_wakeup",
    "router_counters",
    "router_window",
    "saturation_text",
    "short_window_warning",
    "steal_shares",
    "steal_warning",
    "stolen_only",
    "unfaithful_emulation",
    "worst_steal",
]



class Monitor:
    """Fidelity of one run: :meth:`open_window` when discovery completed, :meth:`close_window`
    when the first agent exits, then :meth:`result`.

    ``net`` is the built network (``popen``/``run`` in a node's namespace, pids recorded in
    its ledger); ``hosts`` the hosts with agents (the judged ones; every CPU-limited host is
    recorded); ``cpu`` the hosts' CPU limits
    (:class:`topologies.cpulimit.CpuLimits`, None when unlimited); ``plane_node`` a node
    outside every host (a switch or router) for the timer outside the hosts.
    """

    def __init__(self, net: Testbed, hosts: list[str], logs: Path, thresholds: Thresholds,
                 cpu: Any = None, plane_node: str | None = None) -> None:
        self.net, self.logs, self.th = net, logs, thresholds
        self.cpu = cpu
        # every CPU-limited host is watched, with agents or not (an idle host still shows
        # whether it got the CPU it asked for)
        limited = list(cpu.hosts) if cpu is not None else []
        self.hosts = list(dict.fromkeys([*hosts, *limited]))
        self.agent_hosts = list(hosts)
        self.plane_node = plane_node if cpu is not None else None
        self.t_open: float | None = None
        self.t_close: float | None = None
        self._psi0: dict[str, int | None] = {}  # server -> PSI "some" total (µs)
        self._psi1: dict[str, int | None] = {}
        self._udp0: dict[str, dict[str, int]] = {}
        self._udp1: dict[str, dict[str, int]] = {}
        self._cpu0: dict[str, Any] = {}
        self._cpu1: dict[str, Any] = {}
        self._routers0: dict[str, dict[str, int]] = {}  # user-mode routers' counters
        self._routers1: dict[str, dict[str, int]] = {}
        self._softnet0: tuple[int, int] | None = None
        self._softnet1: tuple[int, int] | None = None
        self._ksoft0: dict[str, int] = {}
        self._ksoft1: dict[str, int] = {}
        self._percpu0: dict[str, dict[str, float]] = {}
        self._percpu1: dict[str, dict[str, float]] = {}
        self._procs0: proctime.Snapshot = {}
        self._procs1: proctime.Snapshot = {}
        self._host_pids: set[int] = set()
        self._samplers: dict[str, subprocess.Popen[bytes]] = {}
        self._sampler_exit: dict[str, int | None] = {}  # exit status before we stopped it
        self.notes: list[str] = []
        self.missing: list[str] = []  # checks that could not run: the run is unverified
        self.routers: dict[str, dict[str, Any]] = {}  # user-mode router -> router_window

    # --- window -----------------------------------------------------------------------
    def _sampler_argv(self, out: Path, period_us: int) -> list[str]:
        return [CYCLICTEST, *cyclictest_args(period_us), f"--json={out}"]

    def _start_sampler(self, name: str, node: str) -> None:
        out = self.logs / f"wakeup_{name}.json"
        where = self.net.output_path(node, out)
        try:
            with (self.logs / f"wakeup_{name}.log").open("wb") as log:
                period = PLANE_PERIOD_US if name == PLANE else HOST_PERIOD_US
                argv = self._sampler_argv(Path(where), period)
                self._samplers[name] = self.net.popen(node, argv,
                                                      stdout=log, stderr=log)
        except OSError as exc:
            self.notes.append(f"wake-up sampler not started on {node}: {exc}")

    def open_window(self) -> None:
        if self.t_open is not None:
            return
        self.t_open = time.monotonic()
        self._psi0 = self._psi_per_server()
        self._udp0 = udpstats.read(self.net, self.agent_hosts)
        self._percpu0 = cpustats.read()
        self._routers0 = router_counters(self.net)
        if self.cpu is not None:
            self._cpu0 = self.cpu.snapshot()
            self._procs0 = proctime.snapshot()
            self._host_pids = self.cpu.pids()
            self._softnet0 = read_softnet()
            self._ksoft0 = ksoftirqd_delays_ns()
        for h in self.hosts:
            self._start_sampler(h, h)
        if self.plane_node is not None:
            self._start_sampler(PLANE, self.plane_node)

    def close_window(self) -> None:
        if self.t_open is None or self.t_close is not None:
            return
        self.t_close = time.monotonic()
        self._psi1 = self._psi_per_server()
        self._udp1 = udpstats.read(self.net, self.agent_hosts)
        self._percpu1 = cpustats.read()
        self._routers1 = router_counters(self.net)
        if self.cpu is not None:
            self._cpu1 = self.cpu.snapshot()
            self._procs1 = proctime.snapshot()
            # with those at the open: an agent that exited just now is no longer in its
            # cgroup but still in /proc until it is reaped
            self._host_pids |= self.cpu.pids()
            self._softnet1 = read_softnet()
            self._ksoft1 = ksoftirqd_delays_ns()
        self.stop_samplers()

    def _psi_per_server(self) -> dict[str, int | None]:
        """PSI is per machine: this one's, and over ssh each other server's of a cluster."""
        servers = self.net.servers
        if servers is None or not hasattr(servers, "read_on_servers"):
            return {"local": read_psi_total_us()}
        return {srv: parse_psi_total_us(text)
                for srv, text in servers.read_on_servers(str(PSI_CPU)).items()}

    def stop_samplers(self) -> None:
        for name, p in self._samplers.items():
            self._sampler_exit[name] = p.poll()  # not None: it ended by itself
            with contextlib.suppress(ProcessLookupError):
                if p.poll() is not None:
                    continue
                self.net.interrupt(p)  # reaches another server's node
        for name, p in self._samplers.items():
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(timeout=2)
                self.notes.append(f"wake-up sampler {name} did not stop on SIGINT")
            node = self.plane_node if name == PLANE else name
            if node is not None:
                try:
                    self.net.fetch(node, self.logs / f"wakeup_{name}.json")
                except (OSError, RuntimeError) as exc:
                    self.notes.append(f"wake-up sample of {name} not fetched: {exc}")
        self._samplers = {}

    def _wakeup(self, name: str, where: str) -> tuple[float | None, float | None]:
        """(p99, max) of one sampler; a sampler that gave nothing is a warning."""
        p99, mx, _ = read_wakeup(self.logs / f"wakeup_{name}.json")
        if math.isnan(p99):
            code = self._sampler_exit.get(name)
            said = _tail(self.logs / f"wakeup_{name}.log")
            how = f"exited with status {code} at start" if code is not None else "gave no data"
            self.notes.append(f"wake-up sampler {where} {how}"
                              + (f": {said}" if said else "")
                              + " (timer lateness not measured there)")
            self.missing.append(f"timer lateness {where} (its sampler {how})")
            return None, None
        return p99, mx

    # --- result -----------------------------------------------------------------------
    def result(self, resource_rows: list[dict[str, Any]], t_rows0: float, cfg: dict[str, Any],
               agents_dir: Path, capture_drops: dict[str, Any] | None) -> dict[str, Any]:
        """The run's fidelity record (manifest ``fidelity``).

        ``resource_rows``: the ResourceSampler rows, whose ``t_s`` counts from monotonic
        time ``t_rows0``.
        """
        metrics: dict[str, float | None] = dict.fromkeys(
            ["socket_drop_share", "capture_drop_share", "cpu_pressure_some_share",
             "cpu_busy_share", "wakeup_p99_us", "wakeup_max_us", "throttled_share",
             "pub_rate_achieved_share", "steal_share"])
        if self.cpu is not None:
            metrics.update(dict.fromkeys(
                ["shortfall_share", "starved_share", "allocation_share", "plane_wakeup_p99_us",
                 "softnet_drop_share", "ksoftirqd_delay_share"]))
        per_host: dict[str, dict[str, float | None]] = {h: {} for h in self.hosts}
        window = None
        if self.t_open is not None and self.t_close is not None:
            window = self.t_close - self.t_open
        per_server: dict[str, dict[str, float | None]] = {}
        steal: dict[str, float] = {}
        per_cpu: dict[str, dict[str, Any]] = {}
        if window and window > 0:
            steal, per_cpu = self._window_metrics(metrics, per_host, per_server, window,
                                                  resource_rows, t_rows0)
        else:
            self.notes.append("no measurement window: the agents never all reported discovery "
                              "complete, so the host metrics were not taken")
            self.missing.append("the measurement window (the agents never all reported "
                                "discovery complete)")
        metrics["pub_rate_achieved_share"] = _round(
            pub_rate_share(agents_dir, cfg["publishers"], cfg.get("pub_rate") or 0))
        if capture_drops:
            got = sum(int(v.get("received") or 0) for v in capture_drops.values())
            lost = sum(int(v.get("dropped") or 0) for v in capture_drops.values())
            metrics["capture_drop_share"] = _round(_share(lost, got + lost))
        out: dict[str, Any] = {"metrics": metrics, "per_host": per_host,
                               **({"routers": self.routers} if self.routers else {}),
                               "window_s": None if window is None else round(window, 3),
                               "steal_per_cpu": steal, "per_cpu": per_cpu,
                               "thresholds": self.th.model_dump()}
        if most := cpustats.most_dropping_cpu(per_cpu):  # pinned hosts of 2+ CPUs dropped
            out["most_drops_cpu"] = most
            out["drops_by_cpu_text"] = cpustats.drops_text(per_cpu)
        self._judge(out, metrics, window, per_cpu)
        out["verified"] = not self.missing
        out["unverified"] = list(self.missing)
        out["warnings"] = self._warnings(window, cfg, steal, metrics)
        if len(per_server) > 1:
            out["per_server"] = per_server
        return out

    def _window_metrics(self, metrics: dict[str, float | None],
                        per_host: dict[str, dict[str, float | None]],
                        per_server: dict[str, dict[str, float | None]], window: float,
                        resource_rows: list[dict[str, Any]], t_rows0: float
                        ) -> tuple[dict[str, float], dict[str, dict[str, Any]]]:
        """The metrics of the measurement window into `metrics`, `per_host` and
        `per_server`; returns (steal per CPU, the per-CPU record)."""
        pins = dict(getattr(self.cpu, "cpus", None) or {})
        udp = udpstats.delta(self._udp0, self._udp1)
        per_cpu = cpustats.window(self._percpu0, self._percpu1, window, pins, udp)
        steal = {c: r["steal_share"] for c, r in per_cpu.items() if "steal_share" in r}
        if steal:
            metrics["steal_share"] = worst_steal(steal)
        for srv, a in self._psi0.items():
            b = self._psi1.get(srv)
            share = None if a is None or b is None else round((b - a) / 1e6 / window, 4)
            per_server[srv] = {"cpu_pressure_some_share": share}
        known = [v["cpu_pressure_some_share"] for v in per_server.values()
                 if v["cpu_pressure_some_share"] is not None]
        if known:  # the most pressed server decides
            metrics["cpu_pressure_some_share"] = max(known)
        drops = sum(c["RcvbufErrors"] for c in udp.values())
        recv = sum(c["InDatagrams"] for c in udp.values())
        metrics["socket_drop_share"] = _round(_share(drops, recv + drops))
        for h, c in udp.items():
            per_host[h]["socket_drop_share"] = _round(
                _share(c["RcvbufErrors"], c["InDatagrams"] + c["RcvbufErrors"]))
        lo, hi = self.t_open - t_rows0, self.t_close - t_rows0  # type: ignore[operator]
        busy = _busy_core_seconds(resource_rows, lo, hi)
        metrics["cpu_busy_share"] = _round(
            sum(busy.values()) / (window * (os.cpu_count() or 1)))
        for h, secs in busy.items():
            per_host.setdefault(h, {})["cpu_cores_used"] = round(secs / window, 3)
        worst_p99: list[float] = []
        worst_max: list[float] = []
        for h in self.hosts:
            p99, mx = self._wakeup(h, f"in {h}")
            per_host[h]["wakeup_p99_us"] = p99
            per_host[h]["wakeup_max_us"] = mx
            if p99 is not None and mx is not None:
                worst_p99.append(p99)
                worst_max.append(mx)
        if worst_p99:
            metrics["wakeup_p99_us"] = max(worst_p99)
            metrics["wakeup_max_us"] = max(worst_max)
        if self.cpu is not None:
            self._limited_metrics(metrics, per_host, window, steal)
        self._router_metrics(metrics)
        return steal, per_cpu

    def _judge(self, out: dict[str, Any], metrics: dict[str, float | None],
               window: float | None, per_cpu: dict[str, dict[str, Any]]) -> None:
        """The bound, its reasons and the failed checks' ids into `out`; with CPU-limited
        hosts also the emulator's record, and what could not be verified."""
        out.update(failed_checks(metrics, self.th, limited=self.cpu is not None))
        if self.cpu is None:
            bound, reasons = judge(metrics, self.th)
            out.update(bound=bound, reasons=reasons)
            return
        bound, emulator, saturation = judge_limited(metrics, self.th)
        if window and self._procs0 and self._procs1:
            outside = proctime.outside(self._procs0, self._procs1, window, self._host_pids)
            outside["interrupt_cores"] = cpustats.interrupt_cores(per_cpu)
            out["outside_hosts"] = outside
            emulator = [_with_outside(r, outside) for r in emulator]
        out.update(bound=bound, reasons=emulator, saturation=saturation)
        cores = next(iter(self.cpu.cores.values()), None)
        if saturation:
            out["saturation_text"] = saturation_text(cores, metrics)
        if window and metrics.get("shortfall_share") is None:
            self.notes.append("the hosts' allocation was not verified: no cgroup v2 CPU "
                              "time and pressure on this machine")
            self.missing.append("the hosts' allocation (no cgroup v2 CPU time and "
                                "pressure)")
        if window and (self._softnet0 is None or self._softnet1 is None):
            self.missing.append("kernel backlog drops (/proc/net/softnet_stat not read)")
        out["emulator"] = {"faithful": not emulator and not self.missing,
                           "reasons": emulator, "failed": out["failed"],
                           "hosts": self.cpu.describe()}

    def _warnings(self, window: float | None, cfg: dict[str, Any], steal: dict[str, float],
                  metrics: dict[str, float | None]) -> list[str]:
        warnings = list(self.notes)
        short = short_window_warning(window, cfg.get("execution_time"))
        if short:
            warnings.append(short)
        stolen = steal_warning(steal)
        if stolen:
            warnings.append(stolen)
        cds = metrics["capture_drop_share"]
        if cds is not None and cds > 0.01:
            warnings.append(f"tcpdump lost {cds:.0%} of the packets: wire evidence undercounts")
        return warnings

    def _router_metrics(self, metrics: dict[str, float | None]) -> None:
        """The user-mode routers' share of packets not taken in (the worst router's)."""
        self.routers = {r: router_window(a, self._routers1.get(r, {}))
                        for r, a in self._routers0.items()}
        if not self.routers:
            return
        shares = [w["drop_share"] for w in self.routers.values()
                  if w["drop_share"] is not None]
        missing = sorted(r for r, w in self.routers.items() if w["drop_share"] is None)
        if missing:
            self.notes.append("user-mode router counters not read on " + ", ".join(missing)
                              + ": whether they kept up is unknown")
            self.missing.append("user-mode router counters on " + ", ".join(missing))
        metrics["router_drop_share"] = max(shares) if shares else None

    def _limited_metrics(self, metrics: dict[str, float | None],
                         per_host: dict[str, dict[str, float | None]], window: float,
                         steal: dict[str, float]) -> None:
        """The CPU-limited hosts' shares and the emulator's own checks; ``steal``: each
        CPU's steal share over the window (not the hosts' idle time)."""
        from topologies.cpulimit import window_shares

        pins = dict(getattr(self.cpu, "cpus", None) or {})

        worst: dict[str, list[float]] = {"throttled_share": [], "starved_share": [],
                                         "shortfall_share": [], "allocation_share": []}
        for h, cores in self.cpu.cores.items():
            a, b = self._cpu0.get(h), self._cpu1.get(h)
            if a is None or b is None:
                continue
            shares = window_shares(a, b, cores, window, host_steal(h, pins, steal))
            per_host.setdefault(h, {}).update(shares)
            if h not in self.agent_hosts:
                continue  # recorded; a host without agents decides nothing measured
            for k in worst:
                v = shares.get(k)
                if v is not None:
                    worst[k].append(v)
        if worst["throttled_share"]:
            metrics["throttled_share"] = max(worst["throttled_share"])
        if worst["starved_share"]:
            metrics["starved_share"] = max(worst["starved_share"])
        if worst["shortfall_share"]:
            metrics["shortfall_share"] = max(worst["shortfall_share"])
        if worst["allocation_share"]:
            metrics["allocation_share"] = min(worst["allocation_share"])
        p99, _mx = self._wakeup(PLANE, f"outside the hosts ({self.plane_node})")
        metrics["plane_wakeup_p99_us"] = p99
        if self._softnet0 is not None and self._softnet1 is not None:
            done = self._softnet1[0] - self._softnet0[0]
            dropped = self._softnet1[1] - self._softnet0[1]
            metrics["softnet_drop_share"] = _round(_share(dropped, done + dropped))
        delays = [(self._ksoft1[k] - v) / 1e9 / window for k, v in self._ksoft0.items()
                  if k in self._ksoft1]
        if delays:
            metrics["ksoftirqd_delay_share"] = _round(max(delays))


def _with_outside(reason: str, outside: dict[str, Any]) -> str:
    """A host's shortfall, with what ran outside the hosts meanwhile.

    >>> _with_outside("a busy host got less than its allocation while it had work: 39.4% "
    ...               "less (limit 10.0% less)", {"cores": 0.7, "top": [("dpkg", 0.5)]})[-56:]
    'less); meanwhile 0.70 core outside the hosts (dpkg 0.50)'
    """
    if not reason.startswith(EMULATOR_CHECKS["shortfall_share"][0]):
        return reason
    return f"{reason}; meanwhile {proctime.outside_text(outside)}"


def _tail(path: Path, n: int = 200) -> str:
    try:
        text = path.read_bytes()[-n:].decode(errors="replace")
    except OSError:
        return ""
    return " ".join(text.split())


def _busy_core_seconds(rows: list[dict[str, Any]], lo: float, hi: float) -> dict[str, float]:
    """Per host, CPU seconds of its agents between ``lo`` and ``hi`` (sampler time base):
    each sample's cpu_percent covers the interval since the previous sample of its process."""
    out: dict[str, float] = {}
    last: dict[str, float] = {}
    for r in sorted(rows, key=lambda r: r["t_s"]):
        name, t = r["process"], r["t_s"]
        prev = last.get(name)
        last[name] = t
        if prev is None:
            continue
        a, b = max(prev, lo), min(t, hi)
        if b > a:
            out[r["host"]] = out.get(r["host"], 0.0) + r["cpu_percent"] / 100.0 * (b - a)
    return out
