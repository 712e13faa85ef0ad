"""A small, self-cleaning network of ``ip netns`` namespaces on one Linux bridge.

::

        ns h1 (10.T.0.1)   ns h2 (10.T.0.2)  ...  ns hN (10.T.0.N)
            | eth0              | eth0                  | eth0
            +------ v<tag>N ----+------ bridge b<tag> ---+        (root namespace)

Every name carries the tag of a testbed ledger (mcastlab/ledger.py); everything is
recorded there before it is created (processes through the ledger's gate) and removed in
:meth:`NetLab.close`, also when a test fails, or by ``mcastlab clean`` after a SIGKILL.
Each namespace has ``lo`` up and a route ``224.0.0.0/4 dev eth0`` so multicast stays on
the lab link. The lab's processes share a /dev/shm of their own (a directory of the
ledger's, mounted on /dev/shm in a mount namespace per process): the shared memory a
SIGKILLed (or SIGTERMed: no DDS teardown) Fast DDS agent leaves goes with the lab, not
into the machine's /dev/shm.

Example (as root)::

    with NetLab(2) as lab:
        lab.run(0, ["ping", "-c1", lab.ip(1)])
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import time
from collections.abc import Sequence
from typing import IO, Any

from mcastlab.ledger import Ledger, enter_private_shm

_libc = ctypes.CDLL(None, use_errno=True)
_CLONE_NEWNET = 0x40000000


def _enter_netns(path: str, shm: str):  # type: ignore[no-untyped-def]
    """preexec_fn joining the namespace at path, with the lab's /dev/shm: much cheaper
    than `ip netns exec`, which matters when 150 agents must start within a second."""

    def enter() -> None:
        fd = os.open(path, os.O_RDONLY)
        if _libc.setns(fd, _CLONE_NEWNET) != 0:
            os._exit(127)
        os.close(fd)
        enter_private_shm(shm)

    return enter


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ip", *args], check=check, capture_output=True, text=True)


class NetLab:
    """N namespaces ``pt<tag>h<i>`` on bridge ``pt<tag>br``, addresses 10.<x>.<y>.<i+1>/16."""

    def __init__(self, hosts: int) -> None:
        self.ledger = Ledger.create()
        self.tag = self.ledger.tag
        self.n = hosts
        # A /16 per instance, derived from the tag, so concurrent labs never share a subnet.
        x = int(self.tag[1:], 36)
        self._net = f"10.{200 + x % 50}.{(x >> 8) % 256}"
        self.namespaces: list[str] = []
        self.links: list[str] = []
        self.bridge: str | None = None
        self.procs: list[subprocess.Popen[Any]] = []
        self.qdiscs: list[tuple[str, str]] = []
        self.shm = ""  # the lab's /dev/shm (made by _build; removed with the ledger)

    # ---- lifecycle ------------------------------------------------------------------
    def __enter__(self) -> NetLab:
        try:
            self._build()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def ns(self, i: int) -> str:
        return f"pt{self.tag}h{i}"

    def ip(self, i: int) -> str:
        return f"{self._net}.{i + 1}"

    def _build(self) -> None:
        self.shm = str(self.ledger.make_shm_dir())
        br = f"pt{self.tag}br"
        self.ledger.record_link(br)
        _ip("link", "add", br, "type", "bridge")
        self.bridge = br
        # No IGMP snooping: multicast is flooded on the bridge (a plain switched LAN).
        subprocess.run(["ip", "link", "set", br, "type", "bridge", "mcast_snooping", "0"],
                       check=True, capture_output=True)
        _ip("link", "set", br, "up")
        for i in range(self.n):
            ns = self.ns(i)
            self.ledger.record_netns(ns)
            _ip("netns", "add", ns)
            self.namespaces.append(ns)
            outer = f"pt{self.tag}v{i}"
            self.ledger.record_link(outer)
            _ip("link", "add", outer, "type", "veth", "peer", "name", "eth0", "netns", ns)
            self.links.append(outer)
            _ip("link", "set", outer, "master", br)
            _ip("link", "set", outer, "up")
            for cmd in (
                ["addr", "add", f"{self.ip(i)}/16", "dev", "eth0"],
                ["link", "set", "eth0", "up"],
                ["link", "set", "lo", "up"],
                ["route", "add", "224.0.0.0/4", "dev", "eth0"],
            ):
                _ip("-n", ns, *cmd)

    def close(self) -> None:
        """Stop recorded processes, then remove recorded links, bridge and namespaces."""
        for p in self.procs:
            if p.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(p.pid, signal.SIGKILL)
        for p in self.procs:
            with contextlib.suppress(Exception):
                p.wait(timeout=10)
        self.procs.clear()
        for link in self.links:
            _ip("link", "del", link, check=False)
        self.links.clear()
        if self.bridge:
            _ip("link", "del", self.bridge, check=False)
            self.bridge = None
        for ns in self.namespaces:
            _ip("netns", "del", ns, check=False)
        self.namespaces.clear()
        # anything left (e.g. run() children), the lab's /dev/shm, then the ledger file
        self.ledger.release()

    # ---- processes ------------------------------------------------------------------
    def popen(self, i: int, argv: Sequence[str], stdout: IO[Any] | int | None = subprocess.PIPE,
              stderr: IO[Any] | int | None = subprocess.PIPE,
              env: dict[str, str] | None = None,
              stdin: IO[Any] | int | None = None) -> subprocess.Popen[Any]:
        """Start argv in namespace i, in its own process group, with the lab's /dev/shm;
        the pid is recorded."""
        p = self.ledger.spawn(list(argv), self.ns(i), stdin=stdin, stdout=stdout, stderr=stderr,
                              text=True,
                              start_new_session=True, env=env,
                              preexec_fn=_enter_netns(f"/var/run/netns/{self.ns(i)}", self.shm))
        self.procs.append(p)
        return p

    def popen_root(self, argv: Sequence[str], **kw: Any) -> subprocess.Popen[Any]:
        """Start argv in the root namespace (e.g. tcpdump on a lab veth), recorded."""
        p = self.ledger.spawn(list(argv), "root", start_new_session=True, **kw)
        self.procs.append(p)
        return p

    def popen_gated(self, i: int, argv: Sequence[str], **kw: Any) -> subprocess.Popen[Any]:
        """Like :meth:`popen`, but the process stops itself before exec'ing argv; call
        :meth:`release` to start all gated processes at (nearly) the same instant, so
        the cost of spawning many processes is not part of what is measured."""
        return self.popen(i, ["/bin/sh", "-c", 'kill -STOP $$; exec "$@"', "gate", *argv], **kw)

    def release(self, procs: Sequence[subprocess.Popen[Any]]) -> None:
        """SIGCONT every gated process (waits until each has actually stopped)."""
        for p in procs:
            for _ in range(500):
                try:
                    with open(f"/proc/{p.pid}/stat") as f:
                        if f.read().rsplit(")", 1)[1].split()[0] == "T":
                            break
                except FileNotFoundError:
                    break
                time.sleep(0.01)
        for p in procs:
            with contextlib.suppress(ProcessLookupError):
                os.kill(p.pid, signal.SIGCONT)

    def run(self, i: int, argv: Sequence[str],
            timeout: float = 30) -> subprocess.CompletedProcess[str]:
        p = self.ledger.spawn(["ip", "netns", "exec", self.ns(i), *argv], self.ns(i),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              preexec_fn=lambda: enter_private_shm(self.shm))
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            p.communicate()
            raise
        return subprocess.CompletedProcess(p.args, p.returncode, out, err)

    def limit_rate(self, i: int, rate: str = "20mbit", burst: str = "32kbit",
                   latency: str = "20ms") -> None:
        """TBF on host i's eth0 (egress): a bandwidth-limited link (no netem here)."""
        subprocess.run(["ip", "netns", "exec", self.ns(i), "tc", "qdisc", "add", "dev", "eth0",
                        "root", "tbf", "rate", rate, "burst", burst, "latency", latency],
                       check=True, capture_output=True)


def wait_all(procs: Sequence[subprocess.Popen[Any]], timeout: float) -> float:
    """Waits for every process; returns the elapsed seconds. Raises TimeoutError naming them."""
    t0 = time.monotonic()
    for p in procs:
        left = timeout - (time.monotonic() - t0)
        try:
            p.wait(timeout=max(left, 0.01))
        except subprocess.TimeoutExpired as e:
            alive = [q.args for q in procs if q.poll() is None]
            raise TimeoutError(f"{len(alive)} processes still running after {timeout} s: "
                               f"{alive[:3]}") from e
    return time.monotonic() - t0
