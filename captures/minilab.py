"""A tiny real-namespace lab for producing reference captures (tests, benchmark).

Builds N ``ip netns`` hosts on one Linux bridge with
names carrying a per-instance tag, records everything it creates in a testbed ledger
(mcastlab/ledger.py: namespaces, root-namespace links and the bridge address 10.77.0.254,
processes started behind the ledger's gate, the private work directory, the directory its
processes have as /dev/shm: see mcastlab.ledger.enter_private_shm), and removes
exactly that on exit -- also when the body raises (the work directory too, unless
MCASTLAB_KEEP_LAB is set). After a SIGKILL, ``mcastlab clean`` removes it from the ledger.
Needs root; importing it does not (nor does it import mcastlab or Mininet).

    with BridgeLab(hosts=2, snooping=False) as lab:
        lab.popen(0, ["ddsperf", "-D", "3", "sub"])
        ...
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

QUERIER_SETTLE_S = 2.5  # first query + one 1 s response interval, with margin


def _run(argv: list[str], check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, check=check, capture_output=True, text=True)


CYCLONE_XML = """<CycloneDDS><Domain id="any"><General>
<Interfaces><NetworkInterface name="eth0"/></Interfaces>
<AllowMulticast>{allow}</AllowMulticast></General>
<Discovery><ParticipantIndex>auto</ParticipantIndex><MaxAutoParticipantIndex>60</MaxAutoParticipantIndex>
</Discovery></Domain></CycloneDDS>"""


class Lab:
    """Records namespaces, links and processes; ``close()`` removes exactly those.

    A testbed for captures (mcastlab.testbed.Testbed, with node names = namespace names,
    None = the root namespace): it has no topology spec, switch objects, routers' daemons
    or other servers, so those members answer trivially (nothing, local, no-op)."""

    spec: Any = None
    switch_kind: str = "linuxbridge"
    servers: Any = None

    def __init__(self) -> None:
        from mcastlab.ledger import Ledger  # here: importing captures needs no mcastlab

        self.ledger = Ledger.create()
        self.tag = self.ledger.tag  # 4 characters: interface names stay <= 15
        self.procs: list[subprocess.Popen[bytes]] = []
        self.hosts: list[str] = []
        self.switches: list[str] = []
        self.routers: list[str] = []
        self.daemons: dict[str, Any] = {}
        self.uml: dict[str, Any] = {}  # no router has a kernel of its own here
        self.querier_ready_at: dict[str, float] = {}
        # Made fresh and private (0700) on __enter__: never an existing, guessable path.
        self.workdir = Path()
        self.shm = ""  # every process's /dev/shm, likewise (gone with the ledger)

    # -- creation (each recorded in the ledger before it exists) --------------------
    def add_ns(self, name: str) -> str:
        ns = f"mclcap-{self.tag}-{name}"
        self.ledger.record_netns(ns)
        _run(["ip", "netns", "add", ns])
        self.ns_exec(ns, ["ip", "link", "set", "lo", "up"])
        return ns

    def add_link(self, name: str, argv: list[str]) -> None:
        self.ledger.record_link(name)
        _run(argv)

    def add_root_addr(self, dev: str, addr: str) -> None:
        """An address in the root namespace (on one of our links)."""
        self.ledger.record_addr(dev, addr)
        _run(["ip", "addr", "add", addr, "dev", dev])

    def ns_exec(self, ns: str, argv: list[str], check: bool = True) -> str:
        return _run(["ip", "netns", "exec", ns, *argv], check=check).stdout

    def popen(self, ns: str | None, argv: Sequence[str], env: dict[str, str] | None = None,
              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
              host_cpu: bool = True, network_plane: bool = False,
              outside: bool = False) -> subprocess.Popen[bytes]:
        """Start argv in namespace ``ns`` (None: the root namespace), recorded in the
        ledger. ``host_cpu`` and ``network_plane`` are the network's signature; this lab
        limits no CPU and raises no priority."""
        full = list(argv) if ns is None else ["ip", "netns", "exec", ns, *argv]
        # `ip netns exec` execs (no fork), so the recorded pid is argv's.
        p = self.ledger.spawn(full, ns or "root", Path(argv[0]).name, stdout=stdout,
                              stderr=stderr, env={**os.environ, **(env or {})},
                              start_new_session=True, preexec_fn=self._private_shm())
        self.procs.append(p)
        return p

    # -- the testbed's members (mcastlab.testbed.Testbed) ---------------------------
    def node(self, name: str) -> Any:
        raise KeyError(f"{name}: a lab's namespaces are not Mininet nodes")

    def real_name(self, node: str) -> str:
        return node

    def popen_ready(self, node: str, argv: Sequence[str], ready: str, doing: str,
                    **kwargs: Any) -> subprocess.Popen:
        raise NotImplementedError("the lab starts no helpers that report readiness")

    def run(self, node: str, argv: Sequence[str], timeout: float = 30,
            outside: bool = False) -> subprocess.CompletedProcess:
        full = list(argv) if node is None else ["ip", "netns", "exec", node, *argv]
        return subprocess.run(full, capture_output=True, text=True, timeout=timeout,
                              check=False, preexec_fn=self._private_shm())

    def _private_shm(self) -> Callable[[], None]:
        """A preexec_fn giving the process the lab's /dev/shm (what a killed DDS process
        leaves goes with the lab); made here, before the fork: the child imports nothing."""
        from mcastlab.ledger import enter_private_shm

        shm = self.shm
        return lambda: enter_private_shm(shm)

    def cmd(self, node: str, command: str) -> str:
        return self.run(node, ["sh", "-c", command]).stdout

    def host_ip(self, host: str) -> str:
        return self.ns_exec(host, ["ip", "-4", "-o", "addr", "show", "dev", "eth0"]
                            ).split()[3].split("/")[0]

    def is_remote(self, node: str) -> bool:
        return False  # every namespace is on this machine

    def output_path(self, node: str, local: Path) -> str:
        return str(local)

    def put(self, node: str, local: Path) -> str:
        return str(local)

    def fetch(self, node: str, local: Path) -> list[Path]:
        return []  # written in place: nothing to bring back

    def interrupt(self, proc: subprocess.Popen, wait: float | None = None) -> None:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGINT)
        if wait is not None:
            proc.wait(timeout=wait)

    def switch_ports(self, sw: str) -> list[tuple[str, str, str]]:
        return []

    def switch_state(self, sw: str) -> dict[str, Any]:
        return {}

    def switch_not_ready(self, sw: str) -> str | None:
        return None

    def peer_of(self, router: str, intf: str) -> str | None:
        return None

    def capture_points(self) -> dict[str, tuple[str, str]]:
        return {}

    def multicast_state(self) -> dict[str, Any]:
        return {}

    def wait_converged(self, timeout: float = 60) -> dict[str, Any]:
        return {}

    def cpu_limits(self) -> Any:
        return None

    def describe(self) -> dict[str, Any]:
        return {"tag": self.tag, "hosts": list(self.hosts)}

    def cyclone_env(self, multicast: bool) -> dict[str, str]:
        xml = CYCLONE_XML.format(allow="true" if multicast else "spdp")
        return {"CYCLONEDDS_URI": xml}

    # -- teardown ---------------------------------------------------------------------
    def stop(self, p: subprocess.Popen[bytes], sig: int = signal.SIGINT, wait: float = 5.0) -> None:
        """Signal one recorded process (by its pid) and reap it; SIGKILL if it lingers."""
        if p.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(p.pid, sig)
            try:
                p.wait(wait)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(p.pid, signal.SIGKILL)
                p.wait()

    def close(self) -> None:
        """Stop our processes, then undo the ledger: links, address, namespaces, workdir."""
        for p in reversed(self.procs):
            self.stop(p, signal.SIGTERM, 3.0)
        self.procs = []
        self.ledger.release()

    def __enter__(self) -> Lab:
        self.workdir = Path(tempfile.mkdtemp(prefix=f"mcl-cap-{self.tag}-"))
        if not os.environ.get("MCASTLAB_KEEP_LAB"):  # keep daemon configs/logs on request
            self.ledger.record_dir(self.workdir)
        self.shm = str(self.ledger.make_shm_dir())
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class BridgeLab(Lab):
    """``hosts`` namespaces, each with eth0 = 10.77.0.(i+1)/24 on one Linux bridge.

    Root-side veth ports are ``p{tag}{i}`` (bridge ports: capture there to see what the
    bridge delivers to each host). ``snooping`` turns bridge IGMP snooping on with the
    bridge as querier; off, the bridge floods multicast to every port.
    """

    def __init__(self, hosts: int = 2, snooping: bool = False) -> None:
        super().__init__()
        self.n = hosts
        self.snooping = snooping
        self.hosts: list[str] = []
        self.ports: list[str] = []
        self.bridge = f"cbr{self.tag}"

    def __enter__(self) -> BridgeLab:
        super().__enter__()
        try:
            snoop = "1" if self.snooping else "0"
            # IGMPv3 queries (v3 hosts never suppress their reports, so every member shows
            # in its port's capture), from the bridge's address, and a 1 s response
            # interval. The bridge floods until one response interval after the querier is
            # enabled, with the interval in force *then*: so enable it in a second step.
            self.add_link(self.bridge, ["ip", "link", "add", self.bridge, "type", "bridge",
                                        "mcast_snooping", snoop,
                                        "mcast_igmp_version", "3", "mcast_query_use_ifaddr", "1",
                                        "mcast_query_interval", "1000",
                                        "mcast_query_response_interval", "100",
                                        "mcast_startup_query_interval", "100"])
            _run(["ip", "link", "set", self.bridge, "type", "bridge", "mcast_querier", snoop])
            if self.snooping:
                self.add_root_addr(self.bridge, "10.77.0.254/24")
            _run(["ip", "link", "set", self.bridge, "up"])
            for i in range(self.n):
                ns = self.add_ns(f"h{i + 1}")
                port, peer = f"p{self.tag}{i}", f"q{self.tag}{i}"
                self.add_link(port, ["ip", "link", "add", port, "type", "veth", "peer",
                                     "name", peer])
                _run(["ip", "link", "set", peer, "netns", ns])
                self.ns_exec(ns, ["ip", "link", "set", peer, "name", "eth0"])
                self.ns_exec(ns, ["ip", "addr", "add", f"10.77.0.{i + 1}/24", "dev", "eth0"])
                self.ns_exec(ns, ["ip", "link", "set", "eth0", "up"])
                self.ns_exec(ns, ["ip", "route", "add", "224.0.0.0/4", "dev", "eth0"])
                _run(["ip", "link", "set", port, "master", self.bridge])
                _run(["ip", "link", "set", port, "up"])
                self.hosts.append(ns)
                self.ports.append(port)
            if self.snooping:
                time.sleep(QUERIER_SETTLE_S)
        except BaseException:
            self.close()
            raise
        return self


SENDER = r"""
import socket, struct, sys, time
group, port, ttl = sys.argv[1], int(sys.argv[2]), int(sys.argv[5])
rate, dur = float(sys.argv[3]), float(sys.argv[4])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, ttl)
hdr = b"RTPS\x02\x01\x01\x10" + bytes.fromhex("0110cccccccccccccccccccc")
end = time.time() + dur
seq = 0
while time.time() < end:
    seq += 1
    ts = struct.pack("<BBHII", 0x09, 1, 8, int(time.time()), 0)
    body = struct.pack("<HH", 0, 16) + struct.pack(">II", 0, 0x102) + struct.pack("<iI", 0, seq)
    body += b"\x00\x01\x00\x00" + b"x" * 64
    s.sendto(hdr + ts + struct.pack("<BBH", 0x15, 5, len(body)) + body, (group, port))
    time.sleep(1.0 / rate)
"""
RECEIVER = r"""
import socket, struct, sys, time
group, port, dur = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("", port))
mreq = socket.inet_aton(group) + socket.inet_aton("0.0.0.0")
s.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP, mreq)
s.settimeout(0.2)
end, n = time.time() + dur, 0
while time.time() < end:
    try:
        s.recv(65536); n += 1
    except OSError:
        pass
print(n)
"""


def mcast_sender(lab: Lab, ns: str, group: str, port: int = 7411, rate: float = 50,
                 duration: float = 5, ttl: int = 16) -> subprocess.Popen[bytes]:
    return lab.popen(ns, ["python3", "-c", SENDER, group, str(port), str(rate), str(duration),
                          str(ttl)])


def mcast_receiver(lab: Lab, ns: str, group: str, port: int = 7411,
                   duration: float = 5) -> subprocess.Popen[bytes]:
    return lab.popen(ns, ["python3", "-c", RECEIVER, group, str(port), str(duration)],
                     stdout=subprocess.PIPE)
