"""tcpdump lifecycle for a run: one tcpdump per capture point, in that point's namespace.

    handle = start(net, {"h1-eth0": ("h1", "h1-eth0")}, run_dir / "pcaps",
                   snaplen=0, ring_files=0, ring_mb=0)
    ...                                   # the run
    drops = handle.stop()                 # {"h1-eth0": {"captured": .., "dropped": ..}}

``net`` is the network object of docs/contracts.md §2; only ``net.popen`` is required.
With ``ring_files`` > 0 tcpdump keeps at most that many files of ``ring_mb`` MB each
(``<point>.pcap0``, ``<point>.pcap1``...). ``pcaps/points.json`` records each point's node,
interface and the IPv4 addresses local to it, so the wire analysis knows directions.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # importing captures needs no mcastlab
    from mcastlab.testbed import Testbed

STATS_RE = {
    "captured": re.compile(r"^(\d+) packets? captured", re.M),
    "received": re.compile(r"^(\d+) packets? received by filter", re.M),
    "dropped": re.compile(r"^(\d+) packets? dropped by kernel", re.M),
    "dropped_by_interface": re.compile(r"^(\d+) packets? dropped by interface", re.M),
}
READY_TIMEOUT_S = 10.0
BUFFER_KIB = 32768
STOP_TIMEOUT_S = 10.0


class CaptureError(Exception):
    """A capture could not start (one line naming the point and the reason)."""


def tcpdump_argv(ifname: str, path: Path, snaplen: int, ring_files: int, ring_mb: int,
                 expression: list[str] | None = None, buffer_kib: int = BUFFER_KIB,
                 nice: int = 0) -> list[str]:
    """The tcpdump command line for one point (``-Z root``: write into root's run dir;
    ``-B``: a 32 MiB kernel buffer by default, so bursts on 2 busy cores are not dropped;
    ``expression``: a capture filter, e.g. ``["igmp", "or", "pim"]``; ``nice`` < 0: run
    above the agents, ``nice -n N tcpdump ...``)."""
    argv = ["tcpdump", "-n", "-i", ifname, "-s", str(int(snaplen)), "-w", str(path), "-Z", "root",
            "-B", str(int(buffer_kib))]
    if nice:
        argv = ["nice", "-n", str(int(nice)), *argv]
    if ring_files > 0:
        if ring_mb <= 0:
            raise CaptureError(f"ring_files={ring_files} needs ring_mb > 0 (got {ring_mb})")
        argv += ["-C", str(int(ring_mb)), "-W", str(int(ring_files))]
    return argv + list(expression or [])


def parse_stats(text: str) -> dict[str, int | None]:
    """tcpdump's exit statistics (stderr) -> counts; None when a line is missing."""
    out: dict[str, int | None] = {}
    for k, rx in STATS_RE.items():
        m = rx.findall(text)
        out[k] = int(m[-1]) if m else None
    return out


@dataclass
class _Point:
    name: str
    node: str
    ifname: str
    proc: subprocess.Popen[bytes]
    log: Path
    pcap: Path


@dataclass
class Capture:
    """Running captures; ``stop()`` ends them (SIGINT by recorded pid) and reports drops."""

    out_dir: Path
    points: list[_Point] = field(default_factory=list)
    stopped: dict[str, dict[str, Any]] | None = None
    net: Testbed | None = None

    def stop(self) -> dict[str, dict[str, Any]]:
        if self.stopped is not None:
            return self.stopped
        for p in self.points:
            if p.proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    if self.net is not None:
                        self.net.interrupt(p.proc)  # reaches a node on another server
                    else:
                        os.kill(p.proc.pid, signal.SIGINT)
        result: dict[str, dict[str, Any]] = {}
        deadline = time.monotonic() + STOP_TIMEOUT_S
        for p in self.points:
            killed = False
            try:
                p.proc.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(p.proc.pid, signal.SIGKILL)
                p.proc.wait()
                killed = True
            if self.net is not None:
                self.net.fetch(p.node, p.pcap)  # from another server of a cluster
            stats = parse_stats(p.log.read_text(errors="replace") if p.log.exists() else "")
            files = sorted(x.name for x in self.out_dir.glob(f"{p.pcap.name}*")
                           if not x.name.endswith(".log"))
            result[p.name] = {**stats, "exit_code": p.proc.returncode, "killed": killed,
                              "files": files,
                              "dropped_any": bool(stats["dropped"]
                                                  or stats["dropped_by_interface"])}
        self.stopped = result
        return result


def _read(path: Path) -> str:
    return path.read_text(errors="replace") if path.exists() else ""


def _local_ips(net: Testbed, node: str, ifname: str) -> list[str]:
    """IPv4 addresses behind a point: the interface's own address for a host/router,
    the attached node's addresses for a switch port (best effort, [] if unknown)."""
    addrs = net.spec.addresses if net.spec is not None else {}
    try:
        if node in addrs:
            a = addrs[node].get(ifname)
            return [a.split("/")[0]] if a else []
        for _logical, real, peer in net.switch_ports(node):
            if real == ifname:
                return [a.split("/")[0] for a in addrs.get(peer, {}).values()]
    except Exception:  # not a mcastlab network (e.g. a test lab): directions inferred later
        return []
    return []


def start(net: Testbed, points: dict[str, tuple[str, str]], out_dir: Path, snaplen: int,
          ring_files: int, ring_mb: int, local_ips: dict[str, list[str]] | None = None,
          tag: str = "", expression: list[str] | None = None, buffer_kib: int = BUFFER_KIB,
          nice: int = 0) -> Capture:
    """Start one tcpdump per point through ``net.popen`` and wait until each listens.

    ``local_ips`` overrides the addresses recorded as local to a point (default: read
    from ``net.spec.addresses``). ``tag`` names the files ``<point>.<tag>.pcap`` (a
    capture window ``w1``, the whole-run ``control`` capture: captures/windows.py);
    ``expression``, ``buffer_kib`` and ``nice`` as for :func:`tcpdump_argv`."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    cap = Capture(out_dir, net=net)
    meta: dict[str, dict[str, Any]] = {}
    try:
        for name, (node, ifname) in sorted(points.items()):
            stem = f"{name}.{tag}" if tag else name
            pcap = out_dir / f"{stem}.pcap"
            log = out_dir / f"{stem}.tcpdump.log"
            where = net.output_path(node, pcap)
            argv = tcpdump_argv(ifname, Path(where), snaplen, ring_files, ring_mb, expression,
                                buffer_kib, nice)
            with log.open("wb") as lf:
                # the capture is apparatus: outside a CPU-limited host's allocation
                # A user-mode router's link is captured on the host's kernel, where its veth
                # is (topologies/uml.py), not inside the router's own kernel.
                proc = net.popen(node, argv, stdout=lf, stderr=lf, host_cpu=False,
                                 outside=node in net.uml)
            cap.points.append(_Point(name, node, ifname, proc, log, pcap))
            ips = (local_ips or {}).get(name) or _local_ips(net, node, ifname)
            meta[name] = {"node": node, "ifname": ifname, "ips": ips,
                          "snaplen": snaplen, "ring_files": ring_files, "ring_mb": ring_mb}
        deadline = time.monotonic() + READY_TIMEOUT_S
        for p in cap.points:
            while "listening on" not in _read(p.log):
                if p.proc.poll() is not None:
                    raise CaptureError(f"capture point {p.name}: tcpdump on {p.node}:{p.ifname} "
                                       f"exited: {_read(p.log).strip()[-300:]}")
                if time.monotonic() > deadline:
                    raise CaptureError(f"capture point {p.name}: tcpdump not listening after "
                                       f"{READY_TIMEOUT_S:.0f} s")
                time.sleep(0.05)
    except BaseException:
        cap.stop()
        raise
    (out_dir / "points.json").write_text(json.dumps(meta, indent=2) + "\n")
    return cap
