"""A topology's nodes on several real servers, controlled over ssh.

   server 1: "localhost" (the controller)          server 2: ssh root@10.0.0.2
   +-------------------------------------+         +-------------------------------------+
   | mcastlab probe / run                |  ssh -M | mcastlab cluster-session --tag T    |
   | ledger T: nodes, ssh clients,       |========>| ledger T (its own): node shells,    |
   |   "remote srv2" (how to clean it)   |         |   every command run for the nodes   |
   | s1  h1  h3                          |         | h2  h4  (shell: ssh -tt ... mnexec) |
   |  s1-eth2 = VXLAN, socket in the     |  UDP    |  h2-eth0 = VXLAN, socket in the     |
   |  root namespace, local .1 remote .2 |<=======>|  root namespace, local .2 remote .1 |
   +-------------------------------------+  4789   +-------------------------------------+

The engine is Mininet's: nodes are Mininet nodes whose shell runs on their server, the way
``mininet.examples.cluster.RemoteMixin`` does it (``ssh -tt server mnexec -cn bash``, the
node's pid read back with ``echo $$``), and links between servers are layer-2 tunnels moved
into the nodes' namespaces, as its ``RemoteLink.makeTunnel`` does. Three things of
cluster.py are not used, and why (docs/cluster-plan.md): its cleanup runs ``mn -c`` on every
server (it would remove other testbeds' nodes); its tunnels are gretap (absent from this
kernel) or tap over ssh (TCP in TCP, encrypted, on the agents' CPUs), so a VXLAN pair is
made instead; its ssh commands go through ``sudo -u`` (the testbed runs as root).

What keeps "clean up exactly what you created" true across machines: every server keeps
its own ledger under the controller's tag, owned by a ``mcastlab cluster-session`` process
that lives as long as the controller's ssh master connection (its stdin reaching end of
file releases the ledger: everything recorded there is stopped). Every process started on a
server is started by ``mcastlab cluster-exec``, which appends its own pid to that ledger and
then execs the command (same pid, same start time). The controller's ledger records, before
anything is made remotely, the ssh command that cleans the server's ledger, so ``mcastlab
clean`` on the controller cleans every server too, also after a SIGKILL.

Tags are unique per machine only, so a server may hold the controller's tag already (its
own testbed, another controller's session). Each session therefore has a random id (16 hex
digits) that its ledger's owner line carries: the session takes the tag on its server
atomically with that line and is refused if the tag is taken; the recorded clean command,
``mcastlab clean --tag T --session S``, cleans only the ledger session S owns (another
testbed with tag T there is left alone), and ``cluster-exec`` appends only to it. That is
why the clean command can be recorded before the session exists: it can never touch more
than what session S made. A clean that fails (the server does not answer) keeps its entry
in the controller's ledger, said, for a later ``mcastlab clean``.

Assumptions, checked before anything is built (:meth:`Cluster.preflight`,
:func:`code_problems`): key-based ssh as root in batch mode with known host keys; the same
mcastlab install, at the same path and the same committed git revision (no changed tracked
file), on every server and the controller (``allow_unverified_revision = true`` accepts an
unknown revision or changed files, recorded); VXLAN in every server's kernel; sshd's
MaxSessions large enough for one multiplexed session per remote node plus the commands in
flight.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shlex
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcastlab.errors import BuildError, TopologyParamError
from mcastlab.paths import REPO_ROOT
from topologies.servers import (
    ServerSite,
    describe_layout,
    place,
    server_name,
    tunnelled,
    vxlan_add,
)
from topologies.spec import Spec

MCASTLAB = REPO_ROOT / ".venv" / "bin" / "mcastlab"  # the same path on every server
LOCAL = "localhost"
# A testbed's VNIs: VNI_SPAN per tag, so two testbeds between the same servers (each
# server's VXLAN sockets are in its root namespace) never pick the same VNI.
VNI_SPAN = 320
# Sessions each remote node holds open on its server's sshd (its shell), and the margin
# for commands in flight at once (probe receivers, daemons, one-off commands).
SESSION_MARGIN = 16
SSH_OPTIONS = ("-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=yes",
               "-o", "ConnectTimeout=10", "-o", "ServerAliveInterval=5",
               "-o", "ServerAliveCountMax=6", "-o", "LogLevel=ERROR")
# [root@]IPv4 address: the VXLAN tunnels (ip link ... local A remote B) and the route lookup
# towards a server take addresses, not host names.
_DEST = re.compile(r"^(?:(?P<user>[a-z_][a-z0-9_-]*)@)?(?P<host>[0-9]{1,3}(?:\.[0-9]{1,3}){3})$",
                   re.ASCII)
# The override of the same-code check: an unknown revision or changed tracked files.
UNVERIFIED_KEY = "allow_unverified_revision"


@dataclass(frozen=True)
class ClusterConfig:
    """The scenario's ``[cluster]`` section."""

    servers: tuple[str, ...]  # "localhost" (only first) or [root@]address
    identity: str | None = None  # ssh private key (default: ssh's own)
    known_hosts: str | None = None  # known_hosts file (default: ssh's own)
    port: int = 22
    source: str = "[cluster]"  # the file, for messages
    # Explicit placement: {node: server (1-based)} for the nodes named; the others
    # round-robin (see placement).
    place: tuple[tuple[str, int], ...] = ()
    # Run although a server's code cannot be verified (see code_problems); recorded.
    allow_unverified_revision: bool = False

    KEYS = ("servers", "identity", "known_hosts", "port", "place", UNVERIFIED_KEY)

    @classmethod
    def from_section(cls, section: Any, source: str) -> ClusterConfig:
        """Validate a ``[cluster]`` table; ValueError names the file, key and allowed values."""
        where = f"{source}: [cluster]"
        if not isinstance(section, dict):
            raise ValueError(f"{where} must be a table")
        unknown = sorted(set(section) - set(cls.KEYS))
        if unknown:
            raise ValueError(f"{where}: unknown key(s) {', '.join(unknown)}; allowed: "
                             f"{', '.join(cls.KEYS)}")
        servers = section.get("servers")
        if (not isinstance(servers, list) or len(servers) < 2
                or not all(isinstance(s, str) for s in servers)):
            raise ValueError(f"{where} servers: expected a list of at least 2 strings "
                             f"(\"localhost\" first, then [root@]address), got {servers!r}")
        for i, s in enumerate(servers):
            m = _DEST.match(s)
            if s == LOCAL and i == 0:
                continue
            if (s == LOCAL or not m or (m["user"] or "root") != "root"
                    or not _is_ipv4(m["host"])):
                raise ValueError(f"{where} servers[{i}] = {s!r}: allowed: \"localhost\" as the "
                                 f"first server only, else an IPv4 address (not a host name: "
                                 f"the VXLAN tunnels need addresses), optionally as "
                                 f"root@address (the testbed runs as root on every server)")
        hosts = [s.rpartition("@")[2] for s in servers]
        twice = sorted({h for h in hosts if hosts.count(h) > 1})
        if twice:
            raise ValueError(f"{where} servers: server {', '.join(twice)} is listed twice "
                             f"({servers!r}); allowed: each server once")
        port = section.get("port", 22)
        if isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535:
            raise ValueError(f"{where} port: expected an integer 1-65535, got {port!r}")
        place = section.get("place", {})
        if not isinstance(place, dict) or not all(
                isinstance(n, str) and isinstance(k, int) and not isinstance(k, bool)
                and 1 <= k <= len(servers) for n, k in place.items()):
            raise ValueError(f"{where} place: expected a table {{node = server number}} with "
                             f"server numbers 1-{len(servers)} (the order of servers), got "
                             f"{place!r}")
        unverified = section.get(UNVERIFIED_KEY, False)
        if not isinstance(unverified, bool):
            raise ValueError(f"{where} {UNVERIFIED_KEY}: expected true or false, got "
                             f"{unverified!r}")
        paths = {}
        for key in ("identity", "known_hosts"):
            value = section.get(key)
            if value is not None and (not isinstance(value, str) or not Path(value).is_file()):
                raise ValueError(f"{where} {key}: expected the path of an existing file, "
                                 f"got {value!r}")
            # Absolute (from the current directory, where it was found): the ledger's
            # recorded clean command must work from any directory.
            paths[key] = None if value is None else os.path.abspath(value)
        return cls(servers=tuple(servers), port=port, source=source,
                   place=tuple(sorted(place.items())), allow_unverified_revision=unverified,
                   **paths)


def placement(spec: Spec, config: ClusterConfig) -> dict[str, int]:
    """{node: server (1-based)}: round-robin as for emulated servers (topologies.servers),
    then the section's explicit `place` for the nodes it names. Raises TopologyParamError
    for what a cluster cannot build (yet), naming it."""
    p = spec.params
    refused = []
    if spec.routers and p.get("mrouting") == "pimd" and p.get("pim_daemon") == "frr":
        refused.append("pim_daemon = 'frr' (its daemons' files and vtysh sockets are not "
                       "carried to other servers; allowed: pim_daemon = 'pimd')")
    if spec.routers and p.get("router_kernel") == "uml":
        refused.append("router_kernel = 'uml' (a user-mode router's state and work directory "
                       "are the controller's; allowed: router_kernel = 'host', on servers "
                       "whose kernel routes multicast)")
    if p.get("switch", "linuxbridge") != "linuxbridge":
        refused.append(f"switch = {p['switch']!r} (Open vSwitch keeps its database and "
                       f"sockets in the controller's state directory; allowed: linuxbridge)")
    if p.get("cpu"):
        refused.append("cpu (CPU limits are cgroups of the controller; allowed: no cpu)")
    if (p.get("emulated_servers") or 1) > 1:
        refused.append("emulated_servers > 1 (either emulated or real servers)")
    if refused:
        raise TopologyParamError(f"{config.source}: [cluster] cannot build " + "; ".join(refused))
    where = place(spec, len(config.servers))
    nodes = [*spec.switches, *spec.routers, *spec.hosts]
    unknown = [n for n, _ in config.place if n not in nodes]
    if unknown:
        raise TopologyParamError(f"{config.source}: [cluster] place: unknown node(s) "
                                 f"{', '.join(unknown)}; allowed: {', '.join(nodes)}")
    where.update(dict(config.place))
    empty = [server_name(k) for k in range(1, len(config.servers) + 1)
             if k not in where.values()]
    if empty:
        raise TopologyParamError(f"{config.source}: [cluster] place leaves {', '.join(empty)} "
                                 f"without a node; allowed: every server holds at least one")
    return where


# What a fetch may bring back from a server (a compromised one must not fill the
# controller's disk): at most FETCH_MAX_MEMBERS archive members (a capture's ring is at most
# 1,000 files), no sparse member (its few bytes stand for any size), and no more bytes than
# leave FETCH_RESERVE_SHARE of the destination's file system (at least 1 GiB) free.
FETCH_MAX_MEMBERS = 1024
FETCH_RESERVE_SHARE = 0.05


def _fetch_room(directory: Path) -> int:
    """Bytes a fetch into `directory` may write."""
    import shutil

    du = shutil.disk_usage(directory)
    return du.free - max(1 << 30, int(du.total * FETCH_RESERVE_SHARE))


def _refused_member(member: Any, n: int, room: int) -> str | None:
    """Why the `n`-th member of a fetched archive is not copied (None: it may be)."""
    if n > FETCH_MAX_MEMBERS:
        return f"more than {FETCH_MAX_MEMBERS} files in its archive (allowed: at most that many)"
    if member.issparse():
        return f"{member.name!r} is a sparse file (allowed: regular files only)"
    if member.size > room:
        return (f"{member.name!r} is {member.size} bytes, more than the {max(room, 0)} this "
                f"machine's disk can take while keeping {FETCH_RESERVE_SHARE:.0%} (at least "
                "1 GiB) free")
    return None


def _is_ipv4(text: str) -> bool:
    import ipaddress

    try:
        ipaddress.IPv4Address(text)
    except ValueError:
        return False
    return True


class Remote:
    """One server other than the controller, for the testbed `tag` and its `session` there:
    the ssh commands that reach it."""

    def __init__(self, k: int, dest: str, config: ClusterConfig, control_dir: Path, tag: str,
                 session: str):
        m = _DEST.match(dest)
        assert m is not None  # validated by ClusterConfig
        self.k, self.name, self.tag, self.session = k, server_name(k), tag, session
        self.dest = dest if m["user"] else f"root@{dest}"
        self.host = m["host"]
        self.control = control_dir / f"{self.name}.ctl"
        opts = [*SSH_OPTIONS, "-p", str(config.port)]
        if config.identity:
            opts += ["-i", config.identity, "-o", "IdentitiesOnly=yes"]
        if config.known_hosts:
            opts += ["-o", f"UserKnownHostsFile={config.known_hosts}"]
        self.options = opts

    def ssh(self, command: list[str], tty: bool = False, master: bool = False,
            shared: bool = True) -> list[str]:
        """The local argv running `command` (quoted for the remote shell) on this server:
        over the master connection when `shared`, a new connection otherwise."""
        mux = (["-o", "ControlMaster=yes", "-S", str(self.control)] if master
               else ["-o", "ControlMaster=no", "-S", str(self.control)] if shared else [])
        return ["ssh", *self.options, *mux, *(["-tt"] if tty else ["-T"]), self.dest, "--",
                " ".join(shlex.quote(a) for a in command)]

    def command(self, node: str, what: str, argv: list[str], record_link: str | None = None,
                interruptible: bool = False, tty: bool = False) -> list[str]:
        """The local argv running `argv` for `node` on this server, over the master
        connection, recorded first in the server's ledger by ``mcastlab cluster-exec``
        (`interruptible`: as its child, sent SIGINT when the ssh client's stdin closes)."""
        extra = ["--record-link", record_link] if record_link else []
        extra += ["--interrupt-on-eof"] if interruptible else []
        return self.ssh([str(MCASTLAB), "cluster-exec", "--tag", self.tag, "--session",
                         self.session, "--node", node, "--what", what, *extra, "--", *argv],
                        tty=tty)

    def clean_command(self) -> list[str]:
        """The local argv cleaning on this server what this session made there (its own
        connection: it must work after the controller died)."""
        return self.ssh([str(MCASTLAB), "clean", "--tag", self.tag, "--session", self.session,
                         "--include-live"], shared=False)


@dataclass
class Session:
    """The master connection to one server and its ``cluster-session`` (the ledger owner)."""

    remote: Remote
    proc: subprocess.Popen[Any]
    check: dict[str, Any] = field(default_factory=dict)

    def close(self, timeout: float = 30) -> bool:
        """End of file on the session's stdin: the server stops what its ledger lists and
        says "released" (the master connection itself ends when the controller's ledger
        stops it, with the node shells' sessions). False when it did not say so in time."""
        import select

        with contextlib.suppress(OSError):
            if self.proc.stdin:
                self.proc.stdin.close()
        out = self.proc.stdout
        deadline = time.monotonic() + timeout
        while out is not None and time.monotonic() < deadline:
            ready, _, _ = select.select([out], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                break
            line = out.readline()
            if not line:  # the session ended without saying it
                return False
            if line.strip() == "released":
                return True
        return False


def local_address_towards(host: str) -> str:
    """The controller's source address for `host` (the kernel's route lookup)."""
    out = subprocess.run(["ip", "-o", "route", "get", host], capture_output=True, text=True,
                         check=False)
    m = re.search(r"\bsrc (\d+\.\d+\.\d+\.\d+)", out.stdout)
    if out.returncode != 0 or not m:
        raise TopologyParamError(f"[cluster]: no route from this machine to server {host} "
                                 f"({(out.stderr or out.stdout).strip()})")
    return m.group(1)


class Cluster:
    """The servers of one :class:`~topologies.net.Network` built over a cluster: sessions,
    remote node classes, VXLAN tunnels between servers. Plays the role
    :class:`topologies.servers.EmulatedServers` plays for emulated servers."""

    MANIFEST_KEY = "cluster"

    def __init__(self, net: ServerSite, config: ClusterConfig):
        self.net, self.config = net, config
        self.where = placement(net.spec, config)
        self.control_dir = net.private / "ssh"
        self.session = secrets.token_hex(8)  # names this testbed's ledger on every server
        self.remotes = {k: Remote(k, dest, config, self.control_dir, net.tag, self.session)
                        for k, dest in enumerate(config.servers, start=1) if dest != LOCAL}
        links = tunnelled(net.spec, self.where)
        if len(links) > VNI_SPAN:
            raise TopologyParamError(f"{config.source}: [cluster] {len(links)} links cross "
                                     f"servers; at most {VNI_SPAN} are supported")
        base = int(net.tag[1:], 36) * VNI_SPAN + 1
        self.vni = {link: base + i for i, link in enumerate(links)}
        self.sessions: dict[int, Session] = {}
        self.addresses: dict[int, str] = {}
        self.staging: dict[int, str] = {}  # server -> its directory for the nodes' files
        self.code: dict[str, dict[str, Any]] = {}  # server -> its code (code_problems)
        self.unverified: dict[str, str] = {}  # server -> why, run by the override

    # --- placement ------------------------------------------------------------------------
    def remote_of(self, node: str) -> Remote | None:
        return self.remotes.get(self.where.get(node, 1))

    def nodes(self) -> list[str]:
        return []  # the servers are machines, not nodes of the network

    # --- sessions ---------------------------------------------------------------------------
    def start(self) -> None:
        pass  # the servers are joined by their own network: nothing to start once nodes exist

    def open(self) -> None:
        """Check every server (nothing is made anywhere until all passed), then open a
        session on each (before any node is made); each session raises its server's
        neighbour table limits for the network, as Network does here."""
        from topologies.neighbours import neighbour_need

        if not self.net.private.exists():
            self.net.ledger.record_dir(self.net.private)  # ssh's control sockets live there
        self.control_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        need = {k: sum(1 for n, s in self.where.items() if s == k) + SESSION_MARGIN
                for k in self.remotes}
        checks = {}
        for k, remote in self.remotes.items():
            self.net.step = ("checking the server", remote.name)
            checks[k] = self.preflight(remote, need[k])
        self.net.step = ("checking the servers' code", "-")
        self.check_code(checks)
        for k, remote in self.remotes.items():
            check = checks[k]
            # Recorded before anything exists there: `mcastlab clean` here cleans it there,
            # only what this session made (the tag alone may be another testbed's there).
            self.net.ledger.record_remote(remote.name, self.session, remote.clean_command())
            self.net.step = ("opening the session", remote.name)
            proc = self.net.ledger.spawn(
                remote.ssh([str(MCASTLAB), "cluster-session", "--tag", self.net.tag,
                            "--session", self.session,
                            "--neighbours", str(neighbour_need(self.net.spec))], master=True),
                remote.name, "ssh", stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, text=True)
            session = Session(remote, proc, check)
            self.sessions[k] = session
            line = proc.stdout.readline() if proc.stdout else ""
            # "ready <ledger> <staging directory> <its neighbour table record, JSON>"
            words = line.split(maxsplit=3)
            if len(words) != 4 or words[0] != "ready":
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(timeout=10)  # its output ended: its exit status follows
                err = proc.stderr.read() if proc.stderr and proc.poll() is not None else ""
                refused = proc.poll() == 3  # the tag is another testbed's there
                raise TopologyParamError(
                    f"[cluster] server {remote.dest}: the session did not start: "
                    f"{(line + err).strip() or 'no answer'}"
                    + ("; nothing was changed there; run again (a new testbed, a new tag)"
                       if refused else ""))
            self.addresses[k] = remote.host
            self.staging[k] = words[2]
            session.check["neighbour_table"] = json.loads(words[3])
            session.check.update(self.clock(remote))
        first_remote = next(iter(self.remotes.values()))
        self.addresses[1] = (local_address_towards(first_remote.host)
                             if self.config.servers[0] == LOCAL else first_remote.host)
        self.net.log("== cluster: " + json.dumps(self.describe()))

    def preflight(self, remote: Remote, sessions: int) -> dict[str, Any]:
        """Refuse a server that cannot take part, naming what is wrong."""
        t0 = time.time()
        r = subprocess.run(remote.ssh([str(MCASTLAB), "cluster-check", "--json"],
                                      shared=False),
                           capture_output=True, text=True, check=False, timeout=60)
        t1 = time.time()
        where = f"[cluster] server {remote.dest}"
        if r.returncode != 0:
            raise TopologyParamError(f"{where}: ssh or `{MCASTLAB} cluster-check` failed (exit "
                                     f"{r.returncode}): {r.stderr.strip()[-300:]}; needed: key-"
                                     f"based ssh as root, a known host key, the same mcastlab "
                                     f"install at {REPO_ROOT}")
        info = json.loads(r.stdout)
        from mcastlab import __version__

        problems = []
        if info.get("version") != __version__ or info.get("repo") != str(REPO_ROOT):
            problems.append(f"mcastlab {info.get('version')} at {info.get('repo')}, here "
                            f"{__version__} at {REPO_ROOT}")
        if not info.get("vxlan"):
            problems.append("no VXLAN devices (CONFIG_VXLAN)")
        if not info.get("mnexec"):
            problems.append("no mnexec (Mininet)")
        if info.get("max_sessions") is not None and info["max_sessions"] < sessions:
            problems.append(f"sshd MaxSessions {info['max_sessions']} < {sessions} (one per "
                            f"node placed there + {SESSION_MARGIN}); raise it in sshd_config")
        if problems:
            raise TopologyParamError(f"{where}: " + "; ".join(problems))
        info["check_s"] = round(t1 - t0, 3)
        del info["time"]  # taken at an unknown point of a long check: see clock()
        return info

    def check_code(self, checks: dict[int, dict[str, Any]]) -> None:
        """Refuse unless every server, and the controller, runs the same committed code
        (see code_problems); keep what each runs for the manifest."""
        from mcastlab.provenance import code_state

        states: dict[str, tuple[str, dict[str, Any]]] = {}
        if self.config.servers[0] != LOCAL:
            states["controller"] = ("this machine", code_state())
        for k, dest in enumerate(self.config.servers, start=1):
            if k not in self.remotes:
                states[server_name(k)] = ("localhost", code_state())
            else:
                states[server_name(k)] = (dest, checks[k].get("code") or {
                    "revision": None, "dirty": None,
                    "unknown": "its mcastlab does not report its code (cluster-check)"})
        refusals, self.unverified = code_problems(states, self.config.allow_unverified_revision)
        if refusals:  # the servers and why first: the line is bounded (the log has it all)
            revisions = {state.get("revision") for _, state in states.values()} - {None}
            refused = [n for n, (_, state) in states.items()
                       if (n in self.unverified and not self.config.allow_unverified_revision)
                       or (len(revisions) > 1 and state.get("revision"))]
            self.net.log(f"== {self.config.source}: [cluster] refused: " + "; ".join(refusals))
            raise BuildError("checking the code on every server", ", ".join(refused) or "-",
                             "; ".join(refusals))
        self.code = {name: state for name, (_, state) in states.items()}
        if self.unverified:
            self.net.log(f"== cluster: {UNVERIFIED_KEY} = true, run on unverified code: "
                         + json.dumps(self.unverified))

    def clock(self, remote: Remote, tries: int = 3) -> dict[str, float]:
        """The server's clock minus ours, from the quickest of `tries` round trips over
        the session (its error is at most half that round trip): one-way latencies
        across servers are only as good as this."""
        best: tuple[float, float] | None = None
        for _ in range(tries):
            t0 = time.time()
            r = subprocess.run(remote.command("-", "date", ["date", "+%s.%N"]),
                               capture_output=True, text=True, check=False, timeout=30)
            t1 = time.time()
            if r.returncode != 0:
                continue
            sample = (t1 - t0, float(r.stdout.strip()) - (t0 + t1) / 2)
            best = sample if best is None or sample[0] < best[0] else best
        if best is None:
            return {}
        return {"clock_offset_s": round(best[1], 4), "clock_error_s": round(best[0] / 2, 4)}

    def close(self) -> None:
        """Every server stops what it recorded (the controller's ledger, released next,
        cleans any server that did not: see Ledger.record_remote)."""
        for k, session in self.sessions.items():
            if not session.close():
                self.net.log(f"== {server_name(k)}: the session did not confirm its release; "
                             f"the remote clean entry of the ledger cleans it")
    def read_on_servers(self, path: str) -> dict[str, str | None]:
        """{server: the text of `path` in its root namespace} (None where unreadable): a
        machine-wide file such as /proc/pressure/cpu, from every server."""
        out: dict[str, str | None] = {}
        for k in range(1, len(self.config.servers) + 1):
            remote = self.remotes.get(k)
            if remote is None:
                try:
                    out[server_name(k)] = Path(path).read_text()
                except OSError:
                    out[server_name(k)] = None
                continue
            r = subprocess.run(remote.command("-", "cat", ["cat", path]),
                               capture_output=True, text=True, check=False, timeout=30)
            out[server_name(k)] = r.stdout if r.returncode == 0 else None
        return out

    # --- files ----------------------------------------------------------------------------------
    def staging_path(self, node: str, local: Path) -> str:
        """Where a process on remote `node` writes the file that belongs at `local`."""
        return f"{self.staging[self.where[node]]}/{node}.{local.name}"

    def put(self, node: str, local: Path) -> str:
        """Send the file `local` to remote `node`'s server; returns its path there."""
        k = self.where[node]
        remote = self.remotes[k]
        there = self.staging_path(node, local)
        argv = remote.command(node, "cat", ["sh", "-c", f"cat > {shlex.quote(there)}"])
        r = subprocess.run(argv, input=local.read_bytes(), capture_output=True, check=False,
                           timeout=60)
        if r.returncode != 0:
            raise RuntimeError(f"sending {local.name} to {remote.name} failed (exit "
                               f"{r.returncode}): {r.stderr.decode(errors='replace')[-200:]}")
        return there

    def fetch(self, node: str, local: Path) -> list[Path]:
        """Copy back every file a process on `node` wrote at :meth:`staging_path` (and
        its siblings with suffixes: a capture's ring files) next to `local`."""
        import tarfile

        k = self.where[node]
        remote = self.remotes[k]
        prefix = f"{node}.{local.name}"
        # An empty archive when nothing was written (a sampler that never started).
        script = (f"cd {shlex.quote(self.staging[k])} && set -- {shlex.quote(prefix)}* && "
                  f"if [ -e \"$1\" ]; then tar -cf - \"$@\"; else tar -cf - -T /dev/null; fi")
        argv = remote.command(node, "tar", ["sh", "-c", script])
        got: list[Path] = []
        room = _fetch_room(local.parent)
        with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
            assert proc.stdout is not None
            with tarfile.open(fileobj=proc.stdout, mode="r|") as tar:
                for n, member in enumerate(tar, start=1):
                    why = _refused_member(member, n, room)
                    if why:
                        proc.kill()
                        raise RuntimeError(f"fetching {prefix}* from {remote.name}: {why}; "
                                           f"kept the {len(got)} file(s) copied before")
                    name = member.name
                    if not member.isfile() or "/" in name or not name.startswith(prefix):
                        continue
                    room -= member.size
                    dest = local.parent / (local.name + name[len(prefix):])
                    part = dest.with_name(dest.name + ".part")
                    src = tar.extractfile(member)
                    assert src is not None
                    with part.open("wb") as f:
                        while chunk := src.read(1 << 20):
                            f.write(chunk)
                    part.replace(dest)
                    got.append(dest)
            err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
        if proc.returncode != 0:
            raise RuntimeError(f"fetching {prefix}* from {remote.name} failed (exit "
                               f"{proc.returncode}): {err.strip()[-200:]}")
        return got

    # --- tunnels ------------------------------------------------------------------------------
    def carries(self, a: str, b: str) -> bool:
        return (a, b) in self.vni

    def tunnel(self, a: str, b: str, ia: str, ib: str) -> None:
        """The link a -- b as a VXLAN pair: each end made in its server's root namespace
        under a tagged name, moved into its node, renamed there."""
        net, vni = self.net, self.vni[(a, b)]
        for end, (node, intf, other) in enumerate(((a, ia, b), (b, ib, a))):
            here, there = self.where[node], self.where[other]
            tmp = f"{net.tag}x{vni - int(net.tag[1:], 36) * VNI_SPAN}{'ab'[end]}"
            script = (f"{vxlan_add(tmp, vni, self.addresses[here], self.addresses[there])}"
                      f" && ip link set {tmp} netns {net.node(node).pid}")
            remote = self.remotes.get(here)
            if remote is None:
                net.ledger.record_link(tmp)
                argv = ["sh", "-c", script]
            else:
                argv = remote.command(node, "ip", ["sh", "-c", script], record_link=tmp)
            r = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=60)
            net.log(f"== {server_name(here)}: tunnel {a}-{b} end {intf} (exit {r.returncode})"
                    f"\n{script}\n{(r.stdout + r.stderr).strip()}")
            if r.returncode != 0:
                raise BuildError(f"creating the tunnel {a}-{b}", server_name(here),
                                 (r.stdout + r.stderr).strip()[-200:] or f"exit {r.returncode}",
                                 str(net.build_log))
            net.sh(node, [f"ip link set {tmp} name {intf}"], f"naming the tunnel {a}-{b}")

    def describe(self) -> dict[str, Any]:
        """The manifest's record: servers, what was checked on each, placement, tunnels."""
        return {
            **describe_layout(len(self.config.servers), self.where, self.vni),
            "emulated": False,
            "servers": {server_name(k): {
                "dest": dest, "address": self.addresses.get(k),
                **(self.sessions[k].check if k in self.sessions else {}),
                "code": self.code.get(server_name(k))}
                for k, dest in enumerate(self.config.servers, start=1)},
            **({"controller_code": self.code["controller"]} if "controller" in self.code
               else {}),
            UNVERIFIED_KEY: self.config.allow_unverified_revision,
            "unverified": self.unverified,
        }


def code_problems(states: dict[str, tuple[str, dict[str, Any]]],
                  allow_unverified: bool) -> tuple[list[str], dict[str, str]]:
    """What refuses a cluster for the code it would run: (refusals, unverified), from
    `states` = {server: (who, mcastlab.provenance.code_state() there)}. Unverified: a
    revision git could not tell (e.g. root in a checkout owned by another user) or tracked
    files changed since it, {server: why}; refused unless `allow_unverified`. Known
    revisions that differ are always refused.

    >>> ok = {"revision": "a" * 40, "dirty": False}
    >>> code_problems({"srv1": ("localhost", ok), "srv2": ("10.0.0.2", ok)}, False)
    ([], {})
    >>> dirty = {"revision": "a" * 40, "dirty": True, "diff_sha256": "f" * 64}
    >>> code_problems({"srv1": ("localhost", ok), "srv2": ("10.0.0.2", dirty)}, True)[1]
    {'srv2': 'tracked files changed since aaaaaaaaaaaa'}
    """
    unverified: dict[str, str] = {}
    for name, (_who, state) in states.items():
        if not state.get("revision"):
            unverified[name] = f"git revision unknown: {state.get('unknown') or 'not reported'}"
        elif state.get("dirty") is not False:
            unverified[name] = f"tracked files changed since {state['revision'][:12]}"
    refusals = []
    revisions = {name: state["revision"] for name, (_who, state) in states.items()
                 if state.get("revision")}
    if len(set(revisions.values())) > 1:
        refusals.append(", ".join(f"{name} ({states[name][0]}) at {rev[:12]}"
                                  for name, rev in revisions.items())
                        + ": check out the same revision on every server")
    if unverified and not allow_unverified:
        refusals += [f"{name} ({states[name][0]}): {why}" for name, why in unverified.items()]
        refusals.append(f"every server must run one committed revision, or set "
                        f"{UNVERIFIED_KEY} = true in [cluster] (recorded)")
    return refusals, unverified


def check_info() -> dict[str, Any]:
    """What ``mcastlab cluster-check`` reports about this server (run there over ssh)."""
    import shutil

    from mcastlab import __version__, capabilities

    max_sessions = None
    sshd = shutil.which("sshd") or "/usr/sbin/sshd"
    r = None
    if os.path.exists(sshd):  # the effective MaxSessions of this server's sshd_config
        r = subprocess.run([sshd, "-T", "-C", "user=root,host=localhost,addr=127.0.0.1"],
                           capture_output=True, text=True, check=False)
    if r is not None and r.returncode == 0:
        m = re.search(r"^maxsessions (\d+)$", r.stdout, re.M)
        max_sessions = int(m.group(1)) if m else None
    from mcastlab.provenance import provenance

    have = capabilities.detect()
    from mcastlab.provenance import code_state

    return {"version": __version__, "repo": str(REPO_ROOT), "vxlan": have.get("vxlan", False),
            "mnexec": shutil.which("mnexec") is not None, "max_sessions": max_sessions,
            "kernel": os.uname().release, "host": os.uname().nodename, "time": time.time(),
            "provenance": provenance(), "code": code_state()}
