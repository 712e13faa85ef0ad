"""Build a :class:`~topologies.spec.Spec` into real namespaces, veths, bridges and daemons.

Every node — host, router *and switch* — gets its own network, mount and System V IPC
namespace (Mininet's ``mnexec`` plus ``unshare --ipc``; each also has its own
/dev/shm), so nothing is created in the root namespace: no foreign bridge,
OVS bridge or interface can ever be touched, and killing a node's recorded processes
removes its namespace and links. Switch names still carry the testbed tag (``mk3zs1``)
so Mininet's delete-before-create calls cannot match anything of another testbed.
Every process is recorded in the ledger (pid + start time) the moment it exists.

Commands reach a node two ways. Mininet's ``node.cmd`` writes the command line into the
node's shell through a pty, and a pty in canonical mode holds at most 4095 bytes per line
(the kernel's N_TTY_BUF_SIZE, 4096, less the newline): anything longer is cut silently,
which is how a 40-host bridge start once reached the shell as ``... master m5``. So every
command longer than :data:`PTY_LINE_MAX` (Mininet's own included: the check sits in the
node class) goes through argv instead (``nsenter --target PID ... sh -c ...``, up to
128 KiB per argument), and scripts longer than that through a file. Build steps run as
one script per node whose exit status is checked (:meth:`Network.sh`); a failing step raises
:class:`~mcastlab.errors.BuildError` naming the step, the node and ``build.log``.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mcastlab import capabilities
from mcastlab.errors import BuildError, ConvergenceError, TopologyParamError
from mcastlab.ledger import Ledger
from mcastlab.paths import STATE_DIR
from multicast import convergence, routing
from topologies import shaping
from topologies.neighbours import neighbour_need, neighbour_room
from topologies.spec import Spec
from topologies.switches import switch_kind


def enter(pid: int) -> list[str]:
    """The command prefix that runs a program in the namespaces of the node whose shell is
    `pid`: network, mount (its /dev/shm, a router's /var/run) and System V IPC. Each node's
    shell has its own IPC namespace (GatedNode._popen), so neither POSIX (/dev/shm) nor
    System V shared memory (RTI Connext's) can reach another emulated host. One exec, as
    ``mnexec -a`` (which joins only the network and mount namespaces). Entering a mount
    namespace resets the working directory to its root, so it is set back to ours
    (``--wd``): relative paths (``--results results/x``) mean the same inside a node."""
    return ["nsenter", f"--target={pid}", "--net", "--mount", "--ipc", f"--wd={os.getcwd()}",
            "--"]


# The longest command sent through a node's pty. A canonical-mode pty line holds 4096
# bytes with its newline; Mininet appends up to ~30 bytes (a pid printf for `&`
# commands, `mnexec -p`). Longer commands go through argv.
PTY_LINE_MAX = 4000
# Longest script passed as one argv string (the kernel's MAX_ARG_STRLEN is 128 KiB);
# longer ones are written to a file in the work directory and run from there.
ARGV_SCRIPT_MAX = 100_000
# How long teardown waits for the user-mode routers' kernels to be gone (see stop).
UML_EXIT_WAIT_S = 10.0
# Scripts run through argv at once by sh_each (each a process of its own: a gate, nsenter,
# and for a user-mode router its command client).
ARGV_PARALLEL = 8
# Where a failed build's log is kept when its work directory was private and removed.
FAILED_LOG_DIR = Path("/var/log/mcastlab")
# The network's own daemons (ovs-vswitchd, pimd, smcroute, FRR) stand for switch and router
# control planes, which in a real network never wait for the hosts' CPUs. Here they share
# the machine with the agents: at 75x75 over 150 hosts on 2 cores, ovs-vswitchd at normal
# priority waited up to 19.7 s for a CPU ("Unreasonably long 19689ms poll interval", 22,348
# involuntary context switches), learnt nothing in that time, and no subscriber matched a
# publisher in 15 s (the Linux bridge, forwarding in the kernel's softirq, matched 34).
# So they run SCHED_RR priority 1, above every agent; none of them spins, and the
# kernel's RT throttling (sched_rt_runtime_us) still keeps 5% for everything else. Where the
# kernel refuses a realtime policy (a cgroup without RT runtime), nice -10 instead, said
# in the build log and the manifest (`network_plane_priority`).
PLANE_REALTIME = ("chrt", "--rr", "1")
PLANE_FALLBACK = ("nice", "-n", "-10")
_RC_MARK = "mcastlab-rc="


class Network:
    """A built topology. Use :func:`topologies.build` (a context manager) to get one."""

    def __init__(self, spec: Spec, workdir: Path | None = None, state_dir: Path = STATE_DIR,
                 cluster: Any = None, fail_on: str = ""):
        self.spec = spec
        self.cluster_config = cluster  # topologies.cluster.ClusterConfig: nodes on servers
        # For the build-failure test (tests/topologies/test_build_errors_netns.py): the node
        # named here gets one real command that fails (bringing up a device that does not
        # exist) in its configuration.
        self.fail_on = fail_on
        self.ledger = Ledger.create(state_dir)
        self.tag = self.ledger.tag
        self.private = state_dir / self.tag  # OVS databases and sockets
        self.private_workdir = workdir is None  # removed at teardown
        if workdir is None:
            # Fresh and private (mkdtemp: 0700, never an existing path), so no local user
            # can plant a symlink there for root to write or delete through.
            workdir = Path(tempfile.mkdtemp(prefix=f"mcastlab-{self.tag}-"))
            self.ledger.record_dir(workdir)
        self.workdir = Path(workdir)
        if self.workdir.is_symlink():
            raise RuntimeError(f"work directory {self.workdir} is a symlink; refusing to use it")
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.build_log = self.workdir / "build.log"
        self.step: tuple[str, str] = ("creating the nodes", "-")  # (what, node) under way
        self.hosts: list[str] = list(spec.hosts)
        self.routers: list[str] = list(spec.routers)
        self.switches: list[str] = list(spec.switches)
        self._nodes: dict[str, Any] = {}
        self._procs: list[subprocess.Popen] = []
        self._remote_procs: set[int] = set()  # local pids of ssh clients (see interrupt)
        self._proc_names: dict[int, str] = {}  # pid -> "what on node", for messages
        self._ports: dict[str, list[tuple[str, str]]] = {}  # switch -> [(real port, peer)]
        self.daemons: dict[str, Any] = {}
        self.uml: dict[str, Any] = {}  # router -> topologies.uml.UmlRouter (router_kernel=uml)
        # The switch kind built (topologies.switches; "ovs" resolved to a datapath), its
        # name, and per switch what the kind keeps to control it (OVS: its OvsInstance).
        self.switch_impl = switch_kind(spec.params.get("switch", "linuxbridge")).resolve()
        self.switch_kind = self.switch_impl.name
        self.switch_control: dict[str, Any] = {}
        self._stopped = False
        self.querier_ready_at: dict[str, float] = {}  # switch -> monotonic time
        self.cpu: Any = None  # topologies.cpulimit.CpuLimits when hosts are CPU-limited
        self.shaping: dict[str, Any] = {}  # read back after building (topologies.shaping)
        self.neighbours: dict[str, Any] = {}  # the ARP table's room (see _neighbour_room)
        self.plane_priority: tuple[str, ...] | None = None  # see PLANE_REALTIME
        # topologies.servers.EmulatedServers with emulated_servers > 1, or
        # topologies.cluster.Cluster with a [cluster] of real servers.
        self.servers: Any = None

    # --- naming -----------------------------------------------------------------------
    def real_name(self, node: str) -> str:
        """Name of a node's Mininet object: switches (and the emulated servers' underlay
        bridge) carry the tag, hosts/routers/servers do not."""
        from topologies.servers import UNDERLAY

        return f"{self.tag}{node}" if node in self.spec.switches or node == UNDERLAY else node

    def node(self, name: str) -> Any:
        try:
            return self._nodes[name]
        except KeyError:
            known = ", ".join([*self.hosts, *self.routers, *self.switches])
            raise KeyError(f"unknown node {name!r}; known: {known}") from None

    # --- processes --------------------------------------------------------------------
    def popen(self, node: str, argv: Sequence[str], network_plane: bool = False,
              host_cpu: bool = True, outside: bool = False, what: str | None = None,
              **kwargs: Any) -> subprocess.Popen:
        """Start `argv` inside `node`'s namespaces; the pid is recorded for cleanup.
        `network_plane`: a switch or router daemon, run above the hosts (PLANE_REALTIME).
        `host_cpu`: on a CPU-limited host, inside the host's CPU allocation (an agent, a
        sampler of the host's own timers); False for the measuring apparatus (tcpdump),
        whose CPU time is not the emulated machine's. `outside`: on a user-mode router, in
        its namespace on the host's kernel (its kernel itself, a capture of its links)
        rather than inside its own kernel."""
        n = self.node(node)
        what = what or Path(argv[0]).name
        if network_plane:
            argv = [*self._plane_priority(), *argv]
        kwargs.setdefault("stdin", subprocess.DEVNULL)
        kwargs.setdefault("start_new_session", True)
        join = self.cpu.preexec(node) if self.cpu is not None and host_cpu else None
        if join is not None:
            kwargs["preexec_fn"] = join  # into the host's CPU cgroup before exec
        remote = getattr(n, "remote", None) is not None
        if remote:
            # The environment travels in the remote command; ssh itself keeps ours. Its
            # stdin is the way to interrupt it (see interrupt).
            env = kwargs.pop("env", None) or os.environ
            argv = ["env", *(f"{k}={v}" for k, v in env.items() if os.environ.get(k) != v),
                    *argv]
            kwargs["stdin"] = subprocess.PIPE
        # Held behind a gate until its pid is in the ledger (see Ledger.spawn).
        proc = self.ledger.spawn(n.wrap(argv, what, interruptible=remote, outside=outside),
                                 node, what, **kwargs)
        if remote:
            self._remote_procs.add(proc.pid)
        self._proc_names[proc.pid] = f"{what} on {node}"
        self._procs.append(proc)
        return proc

    def is_remote(self, node: str) -> bool:
        """Whether `node` lives on another server of a cluster (its pid is that server's)."""
        return getattr(self.node(node), "remote", None) is not None

    def output_path(self, node: str, local: Path) -> str:
        """The path a process on `node` writes the file that belongs at `local`: `local`
        itself, or on another server of a cluster a file there (:meth:`fetch` brings it)."""
        return self.servers.staging_path(node, local) if self.is_remote(node) else str(local)

    def put(self, node: str, local: Path) -> str:
        """The path at which a process on `node` reads the file `local`: `local`, or a
        copy sent to its server when the node is on another server of a cluster."""
        return self.servers.put(node, local) if self.is_remote(node) else str(local)

    def fetch(self, node: str, local: Path) -> list[Path]:
        """Bring back what a process on a remote `node` wrote for `local` (with suffixed
        siblings, e.g. a capture's ring files); nothing to do for a local node."""
        return self.servers.fetch(node, local) if self.is_remote(node) else []

    def interrupt(self, proc: subprocess.Popen, wait: float | None = None) -> None:
        """SIGINT to a process :meth:`popen` started, wherever its node is: on another
        server, by closing its ssh client's stdin (cluster-exec relays it as SIGINT).
        With `wait`, then wait that long for it to end; killed and RuntimeError if not."""
        if proc.pid in self._remote_procs:
            with contextlib.suppress(OSError):
                if proc.stdin:
                    proc.stdin.close()
            proc.stdin = None  # so that communicate() does not flush it
        elif proc.poll() is None:
            proc.send_signal(signal.SIGINT)
        if wait is None:
            return
        try:
            proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            raise RuntimeError(f"{self._proc_names.get(proc.pid, proc.pid)} did not stop "
                               f"within {wait:g} s of SIGINT") from None

    def popen_ready(self, node: str, argv: Sequence[str], ready: str, doing: str,
                    **kwargs: Any) -> subprocess.Popen:
        """:meth:`popen` a helper that prints `ready` once it is (joined its groups, opened
        its socket), with its output as text on a pipe; wait for that line. RuntimeError
        naming what it was `doing`, `node` and what it said instead (it is killed then)."""
        kwargs.setdefault("stderr", subprocess.STDOUT)
        proc = self.popen(node, argv, stdout=subprocess.PIPE, text=True, **kwargs)
        line = proc.stdout.readline() if proc.stdout else ""
        if line.strip() != ready:
            proc.kill()
            out, err = proc.communicate()
            said = (line + (out or "") + (err or "")).strip()[-300:]
            raise RuntimeError(f"{doing} on {node} failed: {said or 'no output'}")
        return proc

    def _plane_priority(self) -> tuple[str, ...]:
        """The command prefix for network daemons, decided once (see PLANE_REALTIME)."""
        if self.plane_priority is None:
            probe = subprocess.run([*PLANE_REALTIME, "true"], capture_output=True, text=True,
                                   check=False)
            if probe.returncode == 0:
                self.plane_priority = PLANE_REALTIME
            else:
                self.plane_priority = PLANE_FALLBACK
                self.log(f"== network daemons: {' '.join(PLANE_REALTIME)} refused "
                         f"({probe.stderr.strip()}); using {' '.join(PLANE_FALLBACK)}")
        return self.plane_priority

    def cmd(self, node: str, command: str) -> str:
        """Run a shell command in `node` and return its output (stdout and stderr).

        Through the node's pty when short, through argv when longer than PTY_LINE_MAX
        (see the module's docstring); recorded in the ledger in the second case."""
        return self.node(node).cmd(command)

    def log(self, text: str) -> None:
        """Append `text` to the build log (``build.log`` in the work directory)."""
        with self.build_log.open("a") as f:
            f.write(text.rstrip("\n") + "\n")

    def sh(self, node: str, lines: Sequence[str], what: str) -> str:
        """Run `lines` in `node` as one script that stops at the first failing line.

        Raises BuildError naming `what`, the node and the build log (which gets the
        script and its output); returns the output otherwise. Example:
        ``net.sh("h1", ["ip link set lo up", "ip link set h1-eth0 up"], "configuring host")``
        """
        self.step = (what, node)
        script, command = self._script(node, lines)
        return self._script_done(node, what, script, self.cmd(node, command))

    def sh_each(self, scripts: Sequence[tuple[str, Sequence[str], str]]) -> None:
        """:meth:`sh` for several (node, lines, what) at once: every script that fits a pty
        line is sent to its node's shell before any is waited for, so the nodes work in
        parallel (150 hosts: 2.1 s one after the other). The others (too long for a pty, or
        for a user-mode router, which has no shell here) run through argv, ARGV_PARALLEL at
        a time (60 user-mode routers' configuration: 2 minutes one after the other)."""
        sent = []
        through_argv = []
        for node, lines, what in scripts:
            self.step = (what, node)
            script, command = self._script(node, lines)
            if len(command.encode()) <= PTY_LINE_MAX and not self.node(node).uml_exec:
                self.node(node).sendCmd(command)
                sent.append((node, what, script))
            else:
                through_argv.append((node, what, script, command))
        failure: BuildError | None = None
        with concurrent.futures.ThreadPoolExecutor(ARGV_PARALLEL) as pool:
            running = [(node, what, script, pool.submit(self.cmd, node, command))
                       for node, what, script, command in through_argv]
            for node, what, script in sent:  # collect every output, so no shell stays busy
                out = self.node(node).waitOutput()
                try:
                    self._script_done(node, what, script, out)
                except BuildError as e:
                    failure = failure or e
            for node, what, script, future in running:
                try:
                    self._script_done(node, what, script, future.result())
                except BuildError as e:
                    failure = failure or e
        if failure:
            raise failure

    def _script(self, node: str, lines: Sequence[str]) -> tuple[str, str]:
        """(the script as logged, the command that runs it in a subshell with -e: the
        first failing line ends it; its status follows a marker)."""
        script = "\n".join(lines)
        if len(script.encode()) > ARGV_SCRIPT_MAX:
            path = self.workdir / f"script_{node}_{len(list(self.workdir.glob('script_*')))}.sh"
            path.write_text(script + "\n")
            script = f". {shlex.quote(str(path))}"
        body = "; ".join(script.splitlines()) if len(script) <= PTY_LINE_MAX else script
        return script, f"( set -e; {body} ) 2>&1; echo {_RC_MARK}$?"

    def _script_done(self, node: str, what: str, script: str, out: str) -> str:
        """Log a script's output; raise BuildError unless it exited 0."""
        text = out.replace("\r", "")
        head, mark, tail = text.rpartition(_RC_MARK)
        rc = tail.split()[0] if mark and tail.split() else "?"  # "?": the shell never said
        if not mark:
            head = text
        self.log(f"== {node}: {what} (exit {rc})\n{script}\n{head.strip()}")
        if rc != "0":
            detail = head.strip().splitlines()[-1] if head.strip() else f"exit status {rc}"
            raise BuildError(what, node, detail, str(self.build_log))
        return head

    def run(self, node: str, argv: Sequence[str], timeout: float = 30,
            outside: bool = False) -> subprocess.CompletedProcess:
        """Run `argv` to completion inside `node`; a timeout gives returncode -9, no raise.
        `outside`: as :meth:`popen`'s (a user-mode router's namespace, not its kernel).

        Recorded like :meth:`popen`: a SIGKILL of the runner must not leave it running.
        On another server of a cluster a timeout reaches the command there too (through
        its ssh client's stdin, as :meth:`interrupt`), not only the local ssh client."""
        n = self.node(node)
        what = Path(argv[0]).name
        remote = self.is_remote(node)
        # A remote command's stdin: a pipe held open here, never written, so that it ends
        # only when its ssh client does (cluster-exec then sends it SIGINT).
        hold_r, hold_w = os.pipe() if remote else (None, None)
        try:
            proc = self.ledger.spawn(n.wrap(argv, what, interruptible=remote, outside=outside),
                                     node, what, stdin=hold_r if remote else subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        finally:
            if hold_r is not None:
                os.close(hold_r)
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            return subprocess.CompletedProcess(list(argv), -9, "", f"timed out after {timeout} s")
        finally:
            if hold_w is not None:
                os.close(hold_w)
        return subprocess.CompletedProcess(list(argv), proc.returncode, out, err)

    # --- build ------------------------------------------------------------------------
    def start(self) -> None:
        spec = self.spec
        self.neighbours = self._neighbour_room()
        self.servers = self._servers()
        if self.servers is not None:
            self.servers.open()  # a cluster checks its servers, opens sessions: before nodes
        extra = self.servers.nodes() if self.servers is not None else []
        for name in [*spec.switches, *spec.routers, *spec.hosts, *extra]:
            opts: dict[str, Any] = {"inNamespace": True}
            if name in spec.routers:
                # pimd's pid file and socket live in /var/run: give each router its own.
                opts["privateDirs"] = [("/var/run", self._run_dir(name))]
            self.step = ("creating the node", name)
            remote = self.servers.remote_of(name) if self.servers is not None else None
            n = _gated_node(self.ledger, name, remote)(self.real_name(name), **opts)
            self._nodes[name] = n
        if self.servers is not None:
            self.servers.start()
        if spec.params.get("cpu"):
            from topologies.cpulimit import CpuLimits

            pin = bool(spec.params.get("cpu_pin"))
            self.cpu = CpuLimits(self.tag, self.ledger,
                                 period_us=int(spec.params.get("cpu_period_us") or 10_000),
                                 period_step_us=int(spec.params.get("cpu_period_step_us") or 0),
                                 pin=pin,
                                 deferred=spec.params.get("cpu_from") == "measurement")
            # pinned to the CPUs this testbed may use (its affinity within its cpuset)
            cpus = self.cpu.plan(list(spec.hosts)) if pin else {}
            for h in spec.hosts:
                self.cpu.limit(h, float(spec.params["cpu"]), cpus.get(h))
        self._make_links()
        self._start_user_mode_routers()
        self._shape_routers()
        self.shaping = self._read_shaping()
        self._configure_nodes()
        for sw in spec.switches:
            self.switch_impl.start(self, sw)
        self._start_daemons()

    def _start_user_mode_routers(self) -> None:
        """With router_kernel=uml, give every router its own kernel (topologies/uml.py):
        the taps and their glue in its namespace, then all kernels at once, then wait for
        each one's command server; from then on every command for the router runs inside
        its kernel."""
        if self.spec.params.get("router_kernel") != "uml" or not self.spec.routers:
            return
        from topologies.uml import UmlRouter

        routers = {}
        for r in self.spec.routers:
            # Its init script and state: a fresh private directory whose path a kernel
            # command line can carry (the work directory's may hold spaces or commas), in
            # /tmp, which the router's mount namespace shares (its /run is its own).
            state = Path(tempfile.mkdtemp(prefix=f"mcastlab-{self.tag}-uml-{r}-"))
            self.ledger.record_dir(state)
            routers[r] = UmlRouter(self, r, state, umid=f"{self.tag}{r}", mtu=self.mtu())
        self.sh_each([(r, u.host_side_lines(), "joining the router's links to its kernel")
                      for r, u in routers.items()])
        for r, u in routers.items():
            self.step = ("starting the user-mode router", r)
            self.log(f"== {r}: user-mode router: {' '.join(u.start())}")
            self.uml[r] = u
        for r, u in routers.items():
            self.step = ("waiting for the user-mode router", r)
            u.wait_ready()
            self.node(r).uml_exec = u.exec_prefix()
        self.log("== routers: each its own user-mode Linux kernel (router_kernel=uml), booted in "
                 + ", ".join(f"{r} {u.booted_s} s" for r, u in routers.items()))

    def _servers(self) -> Any:
        """The servers the nodes are placed on: real ones of a [cluster]
        (topologies.cluster.Cluster), emulated ones (topologies.servers.EmulatedServers),
        or None for one machine."""
        if self.cluster_config is not None:
            from topologies.cluster import Cluster

            return Cluster(self, self.cluster_config)
        if self.spec.placement:
            from topologies.servers import EmulatedServers

            return EmulatedServers(self)
        return None

    def _run_dir(self, router: str) -> str:
        """The directory that is `router`'s /var/run, on its own server."""
        local = self.workdir / f"run_{router}"
        if self.servers is not None and self.servers.remote_of(router) is not None:
            return str(self.servers.staging_path(router, local))
        local.mkdir(parents=True, exist_ok=True)
        return str(local)

    def _neighbour_room(self) -> dict[str, Any]:
        """Make the machine-wide ARP table hold every entry this network can need.

        The limits are global (one table for all namespaces; see NEIGH_SYSCTL), so they are
        raised — never lowered — to the entries in use now + :func:`neighbour_need` +
        a margin, through the ledger, which puts the old values back at teardown or
        `mcastlab clean` (unless another live testbed still needs them). Returns the
        manifest's record (before/after values), also written to the build log.
        """
        self.step = ("making room in the neighbour (ARP) table", "-")
        record = neighbour_room(self.ledger, neighbour_need(self.spec))
        if record.get("after") != record.get("before"):  # neither: not visible here
            self.log(f"== neighbour table: this network may need {record['needed']} ARP "
                     f"entries, {record['in_use_before']} in use: raised {record['before']} "
                     f"to {record['after']}")
        return record

    def _link(self, a: str, b: str, ia: str, ib: str) -> None:
        """The link a -- b: a VXLAN tunnel when its ends are on two emulated servers
        (topologies.servers), else a veth pair."""
        if self.servers is not None and self.servers.carries(a, b):
            self.step = (f"creating the tunnel {a}-{b}", a)
            self.servers.tunnel(a, b, ia, ib)
        else:
            self.link_veth(a, b, ia, ib)

    def link_veth(self, a: str, b: str, ia: str, ib: str) -> None:
        """A veth pair between nodes a and b (interfaces `ia`, `ib`), shaped as the
        topology's bw/delay/loss ask."""
        from mininet.link import Link, TCIntf
        from mininet.log import lg

        self.step = (f"creating the link {a}-{b}", a)
        params: dict[str, Any] = shaping.link_params(self.spec.params)
        if params:
            params["intf"] = TCIntf
        level = lg.getEffectiveLevel()
        lg.setLevel(50)  # silence tc's "quantum is big" warnings Mininet prints as errors
        try:
            # up=None: no `ifconfig up` per interface (300 pty commands at 150 hosts); the
            # node and switch scripts bring every interface up.
            Link(self.node(a), self.node(b), intfName1=ia, intfName2=ib, fast=True, up=None,
                 **params)
        finally:
            lg.setLevel(level)

    def _make_links(self) -> None:
        for sw, members in self.spec.switches.items():
            real = self.real_name(sw)
            ports = []
            for idx, member in enumerate(members, start=1):
                port = f"{real}-eth{idx}"
                self._link(member, sw, f"{member}-eth0", port)
                ports.append((port, member))
            self._ports[sw] = ports
        for a, b in self.spec.router_links:
            ia = next(i for i in self.spec.addresses[a] if self.peer_of(a, i) == b)
            ib = next(i for i in self.spec.addresses[b] if self.peer_of(b, i) == a)
            self._link(a, b, ia, ib)

    def _link_devices(self) -> dict[str, list[str]]:
        """{node: its link interfaces (real names)}: every interface a link created."""
        devs = {n: list(self.spec.addresses[n]) for n in [*self.spec.hosts, *self.spec.routers]}
        for sw, ports in self._ports.items():
            devs[sw] = [port for port, _ in ports]
        return devs

    def _shape_routers(self) -> None:
        """router_delay/router_loss (topologies/routed.py): netem on the egress of every router
        link interface, in the kernel that routes; a user-mode router loads the sch_netem of
        its own kernel's modules first (the host's may have none)."""
        want = shaping.requested_routers(self.spec.params)
        if not want:
            return
        netem = shaping.netem_args(want)
        for r in self.spec.routers:
            self.step = ("shaping the router's links", r)
            if r in self.uml:
                from topologies.uml import netem_module

                module = netem_module()
                if module is None:
                    raise RuntimeError(f"{r}: the user-mode kernel's sch_netem module is missing "
                                       "(package user-mode-linux): router_delay/router_loss "
                                       "cannot be applied")
                res = self.run(r, ["insmod", str(module)])
                if res.returncode != 0 and "File exists" not in res.stderr:
                    raise RuntimeError(f"{r}: loading {module} in its kernel failed: "
                                       f"{res.stderr.strip()}")
            for intf in self.spec.addresses[r]:
                res = self.run(r, ["tc", "qdisc", "replace", "dev", intf, "root", "netem",
                                   *netem])
                if res.returncode != 0:
                    raise RuntimeError(f"{r}: tc qdisc replace dev {intf} root netem "
                                       f"{' '.join(netem)} failed: {res.stderr.strip()}")
        where = "their own user-mode kernels" if self.uml else "the host kernel"
        self.log(f"== routers: netem {' '.join(netem)} on the egress of every router link "
                 f"interface, in {where}")

    def _read_back(self, devices: dict[str, list[str]], want: dict[str, float], what: str,
                   params: str, classes: bool) -> dict[str, dict[str, Any]]:
        """The qdiscs tc shows on each node's ``devices`` (and the HTB classes, with
        ``classes``), per interface by logical name; raises RuntimeError naming the
        interfaces that differ from ``want`` (``what`` set by the topology's ``params``)."""
        links: dict[str, dict[str, Any]] = {}
        bad: list[str] = []
        for node, devs in devices.items():
            q = self.run(node, ["tc", "-j", "qdisc", "show"])
            class_text = ""
            if classes:
                script = "; ".join(f"echo {shlex.quote(d)}:; tc class show dev {shlex.quote(d)}"
                                   for d in devs)
                class_text = self.run(node, ["sh", "-c", script]).stdout
            if q.returncode != 0:
                raise RuntimeError(f"reading qdiscs of {node} failed: {q.stderr.strip()}")
            applied = shaping.parse_tc(q.stdout, class_text)
            bad += [f"{node} {line}" for line in shaping.mismatches(want, applied, devs)]
            real = self.real_name(node)
            for d in devs:
                links[d.replace(real, node, 1)] = applied.get(d, {"qdiscs": []})
        if bad:
            raise RuntimeError(f"{what} was not applied as asked (topology parameters "
                               f"{params}): " + "; ".join(bad[:5]))
        return links

    def _read_router_shaping(self) -> dict[str, Any]:
        """The routers' netem read back from each router's kernel (router_delay/router_loss);
        raises RuntimeError naming the interfaces that differ."""
        want = shaping.requested_routers(self.spec.params)
        if not want:
            return {}
        links = self._read_back({r: list(self.spec.addresses[r]) for r in self.spec.routers},
                                want, "router link shaping", "router_delay/router_loss",
                                classes=False)
        kernel = "user-mode" if self.uml else "host"
        return {"requested": want, "kernel": kernel, "links": links,
                "per": "egress of every router link interface"}

    def _read_shaping(self) -> dict[str, Any]:
        """Read the qdiscs back from every link interface and check them against the
        topology's bw/delay/loss; raises RuntimeError naming the interfaces that differ.

        Returns the manifest's record: what was asked for and, per interface (logical
        name), what tc shows; the routers' own shaping (router_delay/router_loss) under
        "routers".
        """
        want = shaping.requested(self.spec.params)
        routers = self._read_router_shaping()
        if not want:
            return {"requested": {}, "links": {}, **({"routers": routers} if routers else {})}
        links = self._read_back(self._link_devices(), want, "link shaping", "bw/delay/loss",
                                classes=True)
        return {"requested": want, "per": "egress of every link interface", "links": links}

    def peer_of(self, router: str, intf: str) -> str | None:
        """The router at the other end of a point-to-point interface (by subnet)."""
        addr = self.spec.addresses[router][intf]
        if not addr.startswith("10.255."):
            return None
        subnet = addr.rsplit(".", 1)[0]
        for other in self.spec.routers:
            if other != router and any(a.rsplit(".", 1)[0] == subnet
                                       for a in self.spec.addresses[other].values()):
                return other
        return None

    def mtu(self) -> str:
        """The `ip link set` words for the network's MTU: one MTU on every interface when
        links cross emulated servers (see topologies.servers), else the default."""
        if self.servers is None:
            return ""
        from topologies.servers import TUNNEL_MTU

        return f"mtu {TUNNEL_MTU} "

    def _offload_off(self) -> bool:
        return self.switch_impl.offload_off

    def _configure_nodes(self) -> None:
        spec = self.spec
        igmp = spec.params.get("igmp", "3")
        # A private /dev/shm in each node's own mount namespace, gone with it: a shared-memory
        # transport reaches only the participants of its own emulated host, whatever the
        # middleware decides "same host" from, and what any node's process leaves there
        # when killed (the wake-up sampler's cyclictest<pid> in a switch or router) never
        # reaches the machine's /dev/shm.
        shm = "mount -n -t tmpfs -o mode=1777 mcastlab-shm /dev/shm"
        scripts = [(sw, [shm], "configuring switch") for sw in spec.switches]
        for name in [*spec.hosts, *spec.routers]:
            lines = ["ip link set lo up", shm]
            for intf, addr in spec.addresses[name].items():
                lines.append(f"ip addr add {addr} dev {intf}")
                lines.append(f"ip link set {intf} {self.mtu()}up")
                lines.append(f"echo {igmp} > /proc/sys/net/ipv4/conf/{intf}/force_igmp_version")
                if self._offload_off() and name not in self.uml:
                    lines.append(f"ethtool -K {intf} tx off rx off >/dev/null 2>&1 || true")
            if name in spec.hosts:
                lines.append(f"ip route add 224.0.0.0/4 dev {name}-eth0")
                if name in spec.gateways:
                    lines.append(f"ip route add default via {spec.gateways[name]}")
            else:
                lines.append("sysctl -qw net.ipv4.ip_forward=1")
                for intf in ["all", "default", *spec.addresses[name]]:
                    lines.append(f"sysctl -qw net.ipv4.conf.{intf}.rp_filter=0")
                for dst, via in spec.routes.get(name, []):
                    lines.append(f"ip route add {dst} via {via}")
            if name == self.fail_on:
                lines.append("ip link set dev mcl-injected up")  # really fails: no such device
            role = "host" if name in spec.hosts else "router"
            scripts.append((name, lines, f"configuring {role}"))
        self.sh_each(scripts)

    def _start_daemons(self) -> None:
        daemon = routing.daemon_for(self.spec.params)
        if not self.spec.routers or daemon is None:
            return
        for r in self.spec.routers:
            self.step = (f"starting {daemon.mrouting}", r)
            d = daemon(self, r)
            d.start()
            self.daemons[r] = d

    # --- API --------------------------------------------------------------------------
    def host_ip(self, host: str) -> str:
        if host not in self.spec.hosts:
            raise KeyError(f"unknown host {host!r}; known: {', '.join(self.spec.hosts)}")
        return self.spec.host_ip(host)

    def capture_points(self) -> dict[str, tuple[str, str]]:
        """{point name: (node, interface name inside that node)}.

        Point names are logical (``s1-eth2``); the interface is the real one to pass to
        tcpdump in that node (``mk3zs1-eth2`` for switch ports).
        """
        points: dict[str, tuple[str, str]] = {}
        for name in [*self.spec.hosts, *self.spec.routers]:
            for intf in self.spec.addresses[name]:
                points[intf] = (name, intf)
        for sw, ports in self._ports.items():
            for port, _peer in ports:
                points[port.replace(self.real_name(sw), sw, 1)] = (sw, port)
        return points

    def switch_ports(self, sw: str) -> list[tuple[str, str, str]]:
        """[(logical port, real port, attached node)] of a switch."""
        real = self.real_name(sw)
        return [(port.replace(real, sw, 1), port, peer) for port, peer in self._ports[sw]]

    def multicast_state(self) -> dict[str, Any]:
        """JSON-able read-back: per switch mdb/settings, per router MFC/neighbours/IGMP."""
        state: dict[str, Any] = {"switches": {}, "routers": {}}
        for sw in self.spec.switches:
            state["switches"][sw] = self.switch_state(sw)
        for r in self.spec.routers:
            state["routers"][r] = convergence.router_state(self, r)
        return state

    def switch_state(self, sw: str) -> dict[str, Any]:
        """Switch `sw`'s snooping read-back (mdb, router ports, settings) by logical port."""
        return self.switch_impl.state(self, sw)

    def switch_not_ready(self, sw: str) -> str | None:
        """What switch `sw` itself (its kind) still lacks; None when ready."""
        return self.switch_impl.not_ready(self, sw)

    def describe(self) -> dict[str, Any]:
        d = self.spec.describe()
        d["tag"] = self.tag
        d["switch_kind"] = self.switch_kind
        d["shaping"] = self.shaping
        d["neighbour_table"] = self.neighbours
        if self.plane_priority is not None:
            d["network_plane_priority"] = " ".join(self.plane_priority)
        d["capture_points"] = {k: list(v) for k, v in self.capture_points().items()}
        d["daemons"] = {r: dm.describe() for r, dm in self.daemons.items()}
        if self.spec.routers:
            d["router_kernel"] = {
                "kind": self.spec.params.get("router_kernel", "host"),
                "routers": {r: u.describe() for r, u in self.uml.items()}}
        if self.cpu is not None:
            d["cpu_limits"] = self.cpu.describe()
        if self.servers is not None:
            d[self.servers.MANIFEST_KEY] = self.servers.describe()
        return d

    def cpu_limits(self) -> Any:
        """The hosts' CPU limits (topologies.cpulimit.CpuLimits), None when unlimited."""
        return self.cpu

    def wait_converged(self, timeout: float = 60) -> dict[str, Any]:
        """Block until routers have neighbours, RP and queriers; raises ConvergenceError."""
        return convergence.wait(self, timeout)

    # --- teardown ---------------------------------------------------------------------
    def stop(self) -> None:
        """Stop every recorded process (namespaces and links vanish with them)."""
        if self._stopped:
            return
        self._stopped = True
        for d in self.daemons.values():
            with contextlib.suppress(Exception):
                d.save_logs()
        if self.servers is not None:
            self.servers.close()  # each server of a cluster stops what its ledger lists
        kernels = [pid for u in self.uml.values() for pid in u.kernel_pids()]
        report = self.ledger.release()
        # The ledger waits for the recorded `unshare` of each user-mode router; its kernel
        # and helpers die after it: wait for them too, so that the next network (or
        # measurement) does not share the machine with a router still freeing its memory.
        deadline = time.monotonic() + UML_EXIT_WAIT_S
        while kernels and time.monotonic() < deadline:
            kernels = [p for p in kernels if Path(f"/proc/{p}").exists()]
            time.sleep(0.05)
        if self.ledger.path.exists():  # kept: a server of a cluster could not be cleaned
            for line in report:
                if "not cleaned" in line:
                    print(f"mcastlab: {self.tag}: {line}", file=sys.stderr)
        for proc in self._procs:
            with contextlib.suppress(Exception):
                proc.wait(timeout=2)
        for n in self._nodes.values():
            with contextlib.suppress(Exception):
                n.stdin.close()
                os.close(n.slave)
            with contextlib.suppress(Exception):
                n.shell.wait(timeout=2)
        if self.private.exists() and self.tag in str(self.private):
            shutil.rmtree(self.private, ignore_errors=True)


def _gated_node(ledger: Ledger, logical: str, remote: Any = None) -> Any:
    """A Mininet Node class whose shell starts behind the ledger's gate, recorded as
    `logical`'s "shell" before it runs (Mininet spawns it in ``Node._popen``).

    With `remote` (a :class:`topologies.cluster.Remote`), the node lives on that server: its
    shell is ``ssh -tt server mcastlab cluster-exec ... mnexec -cn bash`` (recorded here as
    "ssh", there as "shell"), its pid is the remote shell's (``echo $$``, as Mininet's
    RemoteMixin reads it) and every command for it runs there (:meth:`wrap`)."""
    from mininet.node import Node

    Node.checkSetup()  # Mininet's one-time check (mnexec on the path), once per process

    class GatedNode(Node):  # type: ignore[misc]
        isSetup = True  # a class per node: without this, the check ran for each (0.85 s/150)

        def __init__(self, name: str, **params: Any) -> None:
            self.remote = remote
            # A user-mode router's command client (topologies/uml.py), once its kernel is up.
            self.uml_exec: list[str] | None = None
            super().__init__(name, **params)

        def startShell(self, mnopts: str | None = None) -> None:
            if self.remote is None:
                super().startShell(mnopts)
                return
            super().startShell("-c")  # as RemoteMixin: no -d, the remote pty stays its tty
            self.sendCmd("echo $$")
            self.pid = int(self.waitOutput())

        def wrap(self, argv: Sequence[str], what: str, interruptible: bool = False,
                 outside: bool = False) -> list[str]:
            """The local argv running `argv` in this node's namespaces (on a user-mode router,
            inside its kernel unless `outside`)."""
            if self.uml_exec and not outside:
                argv = [*self.uml_exec, *argv]
            if self.remote is None:
                return [*enter(self.pid), *argv]
            inside = ["nsenter", f"--target={self.pid}", "--net", "--mount", "--ipc",
                      "--wd=/", "--", *argv]
            return self.remote.command(logical, what, inside, interruptible=interruptible)

        def mountPrivateDirs(self) -> None:  # Mininet calls it by this name
            """Mininet's, with each path quoted and each bind mount checked.

            Mininet formats the private directory into ``mkdir -p %s`` and ``mount --bind
            %s %s`` for the node's shell, unquoted, with ``% self.__dict__`` first: a
            results path with a space made the mount fail silently (the routers then
            shared the machine's /var/run: pimd's pid file and socket), a ``%`` crashed
            node creation and a ``;`` ran a command. Here the paths are quoted and the
            mount is proven: the mount point must then be the private directory itself
            (same device and inode), or the build stops naming the node."""
            for entry in self.privateDirs:
                if not isinstance(entry, tuple):
                    raise BuildError("mounting the private directories", logical,
                                     f"{entry!r}: only (mount point, directory) pairs are used")
                mount_point, private = (shlex.quote(str(p)) for p in entry)
                out = self.cmd(
                    f"mkdir -p -- {private} {mount_point} && mount --bind -- {private} "
                    f"{mount_point} && [ \"$(stat -L -c %d:%i -- {mount_point})\" = "
                    f"\"$(stat -L -c %d:%i -- {private})\" ] && echo {_RC_MARK}0")
                if f"{_RC_MARK}0" not in out:
                    raise BuildError(f"bind-mounting {entry[1]} on {entry[0]}", logical,
                                     " ".join(out.split()) or "the mount did not take effect")

        def _popen(self, cmd: list[str], **params: Any) -> subprocess.Popen:
            params.pop("close_fds", None)  # the gate passes its pipe: close_fds is forced on
            if cmd[:1] == ["mnexec"] and "n" in cmd[1]:
                # The shell in its own System V IPC namespace too (see enter): unshare
                # execs in place, so the shell keeps the pid Mininet records.
                cmd = [*cmd[:2], "unshare", "--ipc", *cmd[2:]]
            if self.remote is not None:
                cmd = self.remote.command(logical, "shell", cmd, tty=True)
                return ledger.spawn(cmd, logical, "ssh", **params)
            return ledger.spawn(cmd, logical, "shell", **params)

        def cmd(self, *args: Any, **kwargs: Any) -> str:
            """Mininet's cmd, except that a command too long for the pty (or of several
            lines) runs through argv in this node's namespaces: never cut, never split."""
            line = _command_line(args)
            if len(line.encode()) <= PTY_LINE_MAX and "\n" not in line and not self.uml_exec:
                return str(super().cmd(*args, **kwargs))
            proc = ledger.spawn(self.wrap(["sh", "-c", line], "sh"), logical, "sh",
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True)
            out, _ = proc.communicate()
            return str(out)

        def sendCmd(self, *args: Any, **kwargs: Any) -> None:
            line = _command_line(args)
            if len(line.encode()) > PTY_LINE_MAX:
                raise BuildError("sending a command to the node's shell", logical,
                                 f"{len(line)} bytes is longer than a pty line "
                                 f"({PTY_LINE_MAX}); it would be cut: {line[:60]}...")
            super().sendCmd(*args, **kwargs)

    return GatedNode


def _command_line(args: Sequence[Any]) -> str:
    """The command line Mininet's sendCmd would write for `args` (a string, a list, or
    several words)."""
    if len(args) == 1 and isinstance(args[0], list):
        args = args[0]
    if len(args) == 1 and isinstance(args[0], str):
        return args[0]
    return " ".join(str(a) for a in args)


def check_buildable(spec: Spec) -> None:
    """Raise TopologyParamError naming what is missing before anything is built."""
    missing = capabilities.missing(spec.needs)
    if missing:
        raise TopologyParamError(
            f"topology {spec.family} cannot be built here: " + "; ".join(missing))


def wait_for(predicate: Any, timeout: float, interval: float = 0.05) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return bool(predicate())


__all__ = ["BuildError", "ConvergenceError", "Network", "check_buildable"]
