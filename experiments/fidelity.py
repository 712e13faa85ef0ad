"""Emulation fidelity: did the testbed keep up, or did the hosts' CPUs decide the result?

Mininet-HiFi (Handigol et al., CoNEXT 2012) monitors whether the emulator kept up and
calls a run whose emulator fell behind invalid. This module does that per run, over the
*measurement window*: from the moment every agent reported discovery complete to the moment
the first agent exits (discovery at 75 + 75 participants saturates two cores for tens of
seconds on its own; that is not what the throughput and latency tables measure).

In the window it records, per emulated host and for the run:

- ``socket_drop_share``: datagrams the kernel dropped at full socket receive buffers
  (``RcvbufErrors``) / datagrams that reached the host's sockets (``/proc/net/snmp`` of the
  host's namespace). DDS repairs them like network loss, but no network lost them.
- ``cpu_pressure_some_share``: the share of the window in which some runnable task waited
  for a CPU (``/proc/pressure/cpu``, machine-wide).
- ``cpu_busy_share``: CPU time of the agent processes / (window × online cores).
- ``wakeup_p99_us``, ``wakeup_max_us``: how late a 1 ms periodic timer fired in each agent
  host's namespace (``cyclictest`` of rt-tests at SCHED_OTHER, like an agent thread).
- ``throttled_share``: with CPU-limited hosts, CFS periods throttled / periods.
- ``pub_rate_achieved_share``: paced runs, publication rate achieved / requested.
- ``capture_drop_share``: packets tcpdump lost in the kernel / packets it received. A
  warning, not a bound: it makes the wire evidence undercount, not the agents' figures.

A run is ``host``-bound when any threshold of :class:`Thresholds` is crossed, else
``network``-bound. The thresholds are a scenario's ``[fidelity]`` table (defaults and the
measurements that justify them: experiments/README.md).

Example::

    >>> judge({"socket_drop_share": 0.2, "cpu_pressure_some_share": 0.1}, Thresholds())
    ('host', ['datagrams dropped at full socket buffers: 20.0% (limit 1.0%)'])
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from experiments import udpstats

PSI_CPU = Path("/proc/pressure/cpu")
CYCLICTEST = "cyclictest"


class Thresholds(BaseModel):
    """Limits beyond which a run is host-bound: a scenario's ``[fidelity]`` table.

    Defaults and the measurements behind them: experiments/README.md, "Fidelity".
    """

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    max_socket_drop_share: float = Field(default=0.01, ge=0, le=1, allow_inf_nan=False)
    # CPU pressure is recorded, not a bound by default: an unpaced throughput test keeps
    # the CPUs busy by design (measured: 10x10 at 1000 samples/s per publisher, pressure
    # 0.85-0.97 with every sample delivered and no drop). What makes a run unfaithful is
    # the consequence: drops, a rate not reached, timers firing late. Set it below 1 to
    # exclude CPU queueing altogether (e.g. for latency studies).
    max_cpu_pressure_share: float = Field(default=1.0, ge=0, le=1, allow_inf_nan=False)
    # Measured p99 of a 1 ms timer in the hosts, unpaced study matrix on 2 cores: 2.5-2.7 ms
    # at 1x1, 3.0-3.6 at 3x3, 4.0-5.5 at 10x10, 7.0-7.2 at 25x25, 10.6-11.3 at 50x50,
    # 14.8-16.6 at 75x75 (where 27-37% of datagrams were also dropped); 75x75 paced at
    # 2-10 samples/s: 2.1-5.7 ms. 9 ms lies between 25 and 50 with ~1.5 ms to spare.
    max_wakeup_p99_us: float = Field(default=9000.0, gt=0, le=1e7, allow_inf_nan=False)
    max_throttled_share: float = Field(default=0.5, ge=0, le=1, allow_inf_nan=False)
    min_pub_rate_share: float = Field(default=0.95, ge=0, le=1, allow_inf_nan=False)

    @classmethod
    def from_dict(cls, d: dict[str, Any] | None) -> Thresholds:
        return cls.model_validate(d or {})


# metric -> (label, value format, threshold attribute, "max" | "min")
CHECKS: dict[str, tuple[str, str, str, str]] = {
    "socket_drop_share": ("datagrams dropped at full socket buffers", "{:.1%}",
                          "max_socket_drop_share", "max"),
    "cpu_pressure_some_share": ("share of time tasks waited for a CPU", "{:.0%}",
                                "max_cpu_pressure_share", "max"),
    "wakeup_p99_us": ("timer wake-up latency p99", "{:.0f} µs", "max_wakeup_p99_us", "max"),
    "throttled_share": ("CFS periods throttled", "{:.0%}", "max_throttled_share", "max"),
    "pub_rate_achieved_share": ("publication rate achieved", "{:.0%}",
                                "min_pub_rate_share", "min"),
}


def judge(metrics: dict[str, float | None], th: Thresholds) -> tuple[str, list[str]]:
    """``("network" | "host", reasons)`` for run-level metrics (None: not measured)."""
    reasons = []
    for key, (label, fmt, attr, kind) in CHECKS.items():
        v = metrics.get(key)
        if v is None or not math.isfinite(v):
            continue
        limit = getattr(th, attr)
        if (kind == "max" and v > limit) or (kind == "min" and v < limit):
            word = "limit" if kind == "max" else "at least"
            reasons.append(f"{label}: {fmt.format(v)} ({word} {fmt.format(limit)})")
    return ("host" if reasons else "network"), reasons


def read_psi_total_us(path: Path = PSI_CPU) -> int | None:
    """The ``some`` total (µs of waiting) of a PSI file; None where the kernel has no PSI."""
    try:
        text = path.read_text()
    except OSError:
        return None
    return parse_psi_total_us(text)


def parse_psi_total_us(text: str | None) -> int | None:
    """The ``some`` total of a PSI file's text.

    >>> parse_psi_total_us("some avg10=0.00 avg60=0.00 avg300=0.00 total=1234\\n")
    1234
    """
    m = re.search(r"^some .*total=(\d+)", text or "", re.M)
    return int(m.group(1)) if m else None


def wakeup_percentiles(histogram: dict[str, int]) -> tuple[float, float]:
    """(p99, max) in µs of a cyclictest JSON histogram {"latency µs": count}.

    >>> wakeup_percentiles({"10": 98, "20": 1, "500": 1})
    (20.0, 500.0)
    """
    pairs = sorted((int(k), int(v)) for k, v in histogram.items() if int(v) > 0)
    total = sum(c for _, c in pairs)
    if not total:
        return math.nan, math.nan
    need, seen = math.ceil(0.99 * total), 0
    p99 = float(pairs[-1][0])
    for lat, c in pairs:
        seen += c
        if seen >= need:
            p99 = float(lat)
            break
    return p99, float(pairs[-1][0])


def _share(num: float, den: float) -> float | None:
    return num / den if den > 0 else None


def pub_rate_share(agents_dir: Path, publishers: int, rate: int) -> float | None:
    """Mean achieved / requested rate over publishers, from their 'sent N samples ... in S s'."""
    if not rate:
        return None
    rates = []
    for i in range(publishers):
        with contextlib.suppress(OSError):
            text = (agents_dir / f"pub{i}.stderr").read_text(errors="replace")
            m = re.search(r"sent (\d+) samples .*? in ([\d.]+) s", text)
            if m and float(m.group(2)) > 0:
                rates.append(int(m.group(1)) / float(m.group(2)))
    if not rates:
        return None
    return sum(rates) / len(rates) / rate


class Monitor:
    """Fidelity of one run: :meth:`open_window` when discovery completed, :meth:`close_window`
    when the first agent exits, then :meth:`result`.

    ``net`` is the built network (``popen``/``run`` in a node's namespace, pids recorded in
    its ledger); ``cgroups`` maps CPU-limited hosts to their cpu.stat files.
    """

    def __init__(self, net: Any, hosts: list[str], logs: Path, thresholds: Thresholds,
                 cgroups: dict[str, Path] | None = None) -> None:
        self.net, self.hosts, self.logs, self.th = net, hosts, logs, thresholds
        self.cgroups = cgroups or {}
        self.t_open: float | None = None
        self.t_close: float | None = None
        self._psi0: dict[str, int | None] = {}  # server -> PSI "some" total (µs)
        self._psi1: dict[str, int | None] = {}
        self._udp0: dict[str, dict[str, int]] = {}
        self._udp1: dict[str, dict[str, int]] = {}
        self._thr0: dict[str, dict[str, int]] = {}
        self._thr1: dict[str, dict[str, int]] = {}
        self._samplers: dict[str, subprocess.Popen[bytes]] = {}
        self.notes: list[str] = []

    # --- window -----------------------------------------------------------------------
    def open_window(self) -> None:
        if self.t_open is not None:
            return
        self.t_open = time.monotonic()
        self._psi0 = self._psi_per_server()
        self._udp0 = udpstats.read(self.net, self.hosts)
        self._thr0 = {h: _cpu_stat(p) for h, p in self.cgroups.items()}
        for h in self.hosts:
            out = self.logs / f"wakeup_{h}.json"
            where = self.net.output_path(h, out) if hasattr(self.net, "output_path") else out
            argv = [CYCLICTEST, "-q", "--laptop", "-p", "0", "--policy=other", "-i", "1000",
                    "-t", "1", "-h", "100000", f"--json={where}"]
            try:
                log = (self.logs / f"wakeup_{h}.log").open("wb")
                self._samplers[h] = self.net.popen(h, argv, stdout=log, stderr=log)
                log.close()
            except OSError as exc:
                self.notes.append(f"wake-up sampler not started on {h}: {exc}")

    def close_window(self) -> None:
        if self.t_open is None or self.t_close is not None:
            return
        self.t_close = time.monotonic()
        self._psi1 = self._psi_per_server()
        self._udp1 = udpstats.read(self.net, self.hosts)
        self._thr1 = {h: _cpu_stat(p) for h, p in self.cgroups.items()}
        self.stop_samplers()

    def _psi_per_server(self) -> dict[str, int | None]:
        """PSI is per machine: this one's, and over ssh each other server's of a cluster."""
        servers = getattr(self.net, "servers", None)
        if servers is None or not hasattr(servers, "read_on_servers"):
            return {"local": read_psi_total_us()}
        return {srv: parse_psi_total_us(text)
                for srv, text in servers.read_on_servers(str(PSI_CPU)).items()}

    def stop_samplers(self) -> None:
        interrupt = getattr(self.net, "interrupt", None)  # reaches another server's node
        for p in self._samplers.values():
            with contextlib.suppress(ProcessLookupError):
                if interrupt is not None:
                    interrupt(p)
                else:
                    os.kill(p.pid, signal.SIGINT)
        for h, p in self._samplers.items():
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(timeout=2)
                self.notes.append(f"wake-up sampler on {h} did not stop on SIGINT")
            if hasattr(self.net, "fetch"):
                try:
                    self.net.fetch(h, self.logs / f"wakeup_{h}.json")
                except (OSError, RuntimeError) as exc:
                    self.notes.append(f"wake-up sample of {h} not fetched: {exc}")
        self._samplers = {}

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
             "pub_rate_achieved_share"])
        per_host: dict[str, dict[str, float | None]] = {h: {} for h in self.hosts}
        window = None
        if self.t_open is not None and self.t_close is not None:
            window = self.t_close - self.t_open
        per_server: dict[str, dict[str, float | None]] = {}
        if window and window > 0:
            for srv, a in self._psi0.items():
                b = self._psi1.get(srv)
                share = None if a is None or b is None else round((b - a) / 1e6 / window, 4)
                per_server[srv] = {"cpu_pressure_some_share": share}
            known = [v["cpu_pressure_some_share"] for v in per_server.values()
                     if v["cpu_pressure_some_share"] is not None]
            if known:  # the most pressed server decides
                metrics["cpu_pressure_some_share"] = max(known)
            udp = udpstats.delta(self._udp0, self._udp1)
            drops = sum(c["RcvbufErrors"] for c in udp.values())
            recv = sum(c["InDatagrams"] for c in udp.values())
            metrics["socket_drop_share"] = _round(_share(drops, recv + drops))
            for h, c in udp.items():
                per_host[h]["socket_drop_share"] = _round(
                    _share(c["RcvbufErrors"], c["InDatagrams"] + c["RcvbufErrors"]))
            lo, hi = self.t_open - t_rows0, self.t_close - t_rows0
            busy = _busy_core_seconds(resource_rows, lo, hi)
            metrics["cpu_busy_share"] = _round(
                sum(busy.values()) / (window * (os.cpu_count() or 1)))
            for h, secs in busy.items():
                per_host.setdefault(h, {})["cpu_cores_used"] = round(secs / window, 3)
            worst_p99: list[float] = []
            worst_max: list[float] = []
            for h in self.hosts:
                p99, mx = _read_wakeup(self.logs / f"wakeup_{h}.json")
                per_host[h]["wakeup_p99_us"] = None if math.isnan(p99) else p99
                per_host[h]["wakeup_max_us"] = None if math.isnan(mx) else mx
                if not math.isnan(p99):
                    worst_p99.append(p99)
                    worst_max.append(mx)
            if worst_p99:
                metrics["wakeup_p99_us"] = max(worst_p99)
                metrics["wakeup_max_us"] = max(worst_max)
            shares = []
            for h in self._thr1:
                a, b = self._thr0.get(h, {}), self._thr1[h]
                periods = b.get("nr_periods", 0) - a.get("nr_periods", 0)
                thr = b.get("nr_throttled", 0) - a.get("nr_throttled", 0)
                s = _share(thr, periods)
                per_host[h]["throttled_share"] = _round(s)
                if s is not None:
                    shares.append(s)
            if shares:
                metrics["throttled_share"] = _round(max(shares))
        else:
            self.notes.append("no measurement window: the agents never all reported discovery "
                              "complete, so the host metrics were not taken")
        metrics["pub_rate_achieved_share"] = _round(
            pub_rate_share(agents_dir, cfg["publishers"], cfg.get("pub_rate") or 0))
        if capture_drops:
            got = sum(int(v.get("received") or 0) for v in capture_drops.values())
            lost = sum(int(v.get("dropped") or 0) for v in capture_drops.values())
            metrics["capture_drop_share"] = _round(_share(lost, got + lost))
        bound, reasons = judge(metrics, self.th)
        warnings = list(self.notes)
        cds = metrics["capture_drop_share"]
        if cds is not None and cds > 0.01:
            warnings.append(f"tcpdump lost {cds:.0%} of the packets: wire evidence undercounts")
        out = {"bound": bound, "reasons": reasons, "metrics": metrics, "per_host": per_host,
               "window_s": None if window is None else round(window, 3),
               "warnings": warnings, "thresholds": self.th.model_dump()}
        if len(per_server) > 1:
            out["per_server"] = per_server
        return out


def _round(v: float | None, nd: int = 5) -> float | None:
    return None if v is None else round(v, nd)


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


def _read_wakeup(path: Path) -> tuple[float, float]:
    try:
        data = json.loads(path.read_text())
        thread = data["thread"]["0"]
        hist = thread["histogram"]
    except (OSError, ValueError, KeyError):
        return math.nan, math.nan
    p99, mx = wakeup_percentiles(hist)
    # the histogram stops at 100 ms; cyclictest's own maximum does not
    if isinstance(thread.get("max"), int | float):
        mx = float(thread["max"])
    return p99, mx


def _cpu_stat(path: Path) -> dict[str, int]:
    try:
        return {k: int(v) for k, v in (line.split() for line in path.read_text().splitlines())}
    except (OSError, ValueError):
        return {}
