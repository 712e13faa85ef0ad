"""Routers that bring their own kernel: user-mode Linux (`router_kernel = "uml"`).

Where the host kernel has no multicast routing (no CONFIG_IP_MROUTE) or no netem, a router
of a routed topology runs as a user-mode Linux kernel (Debian's `user-mode-linux`, built with
multicast routing, PIM-SM v2 and netem) started inside the router's network namespace:

        switch s1 (host kernel)                         router r2's namespace
   ... [ s1 ]--veth--+                          +--veth-- [ s2 ] ...
                     |  router r1's namespace   |
                 r1-eth0 ==mirred== ut0    ut1 ==mirred== r1-eth1 --veth-- r2-eth1 ...
                                     \\      /
                               +---------------------+
                               |  linux.uml (r1)     |  r1-eth0, r1-eth1 inside: the
                               |  pimd / FRR /       |  router's addresses, routes,
                               |  smcroute, /proc/.. |  multicast routing, netem
                               +---------------------+
                                     |  umgmt (tap, 169.254.0.1 <-> .2)
                               uml_exec server  <-- uml_exec client (every command)

Each link interface of the router (``r1-eth0``) stays a veth in the router's namespace, with
no address there; a tap (``ut0``) carries its frames to and from the router's kernel, and
tc's mirred action joins the two in both directions (no bridge, no learning). Inside, the
interface gets the veth's name and MAC, so configurations, captures and read-backs name
the same interfaces whichever kernel routes. The router's root file system is the host's,
read-only (hostfs), with private tmpfs on /run, /tmp, /var/tmp and /dev/shm, the project
mounted back read-only where it lives under /tmp, and the network's work directory
read-write, so it runs this machine's pimd, FRR and smcroute with their usual
configuration and no image.

Commands reach the router through a management tap (``umgmt``) and
:mod:`topologies.uml_exec`: the node's `wrap` puts the client before every argv, so the
testbed's `cmd`, `run` and `popen` work on a user-mode router as on any node.

The kernel runs as pid 1 of its own pid namespace (``unshare --pid --kill-child``): its
helper processes die with it, whoever kills it (teardown, `mcastlab clean` after a SIGKILL).
Its state directory (``uml_dir``) is recorded in the ledger.
"""

from __future__ import annotations

import shlex
import shutil
import sys
import time
from pathlib import Path
from string import Template
from typing import Any

from mcastlab.paths import REPO_ROOT
from mcastlab.testbed import Testbed

UML_KERNEL = "linux.uml"
UML_MODULES = Path("/usr/lib/uml/modules")
EXEC_SCRIPT = Path(__file__).resolve().parent / "uml_exec.py"
INIT_TEMPLATE = Path(__file__).resolve().parent / "uml_init.sh.tmpl"
MGMT_INTF = "umgmt"
MGMT_HOST = "169.254.0.1"
MGMT_ROUTER = "169.254.0.2"
EXEC_PORT = 7077
MEMORY = "192M"
READY_LINE = "mcastlab-uml-ready"
BOOT_TIMEOUT_S = 90.0  # many routers boot at once on 2 cores (the routed test's labs)


def kernel_path() -> str | None:
    """The user-mode kernel's path, or None when it is not installed."""
    return shutil.which(UML_KERNEL)


def available() -> bool:
    """Whether user-mode routers can run here (the kernel and /dev/net/tun for taps)."""
    return kernel_path() is not None and Path("/dev/net/tun").exists()


def tap_name(index: int) -> str:
    return f"ut{index}"


class UmlRouter:
    """One user-mode router: its taps and glue, its kernel process, its command channel."""

    def __init__(self, net: Testbed, router: str, state_dir: Path, umid: str, mtu: str = ""):
        self.net = net
        self.router = router
        self.umid = umid  # unique on this machine: the testbed's tag and the router's name
        self.mtu = mtu  # the network's `ip link set` MTU words (topologies.net.Network.mtu)
        self.intfs: list[str] = list(net.spec.addresses[router])
        self.state_dir = state_dir  # uml_dir (mconsole, pid) and the init script
        self.console_log = Path(net.workdir) / f"uml_{router}.log"
        self.proc: Any = None
        self.booted_s: float | None = None

    # --- the command channel ---------------------------------------------------------
    @staticmethod
    def exec_prefix() -> list[str]:
        """The argv prefix that runs a command inside the router (from its namespace)."""
        return [sys.executable, "-I", str(EXEC_SCRIPT), "client", MGMT_ROUTER, str(EXEC_PORT),
                "--"]

    # --- build -----------------------------------------------------------------------
    def host_side_lines(self) -> list[str]:
        """The router namespace's part: the management tap, one tap per link interface,
        each joined to its veth by mirred, no IPv6 (no MLD or ND of the namespace's own)."""
        lines = ["ip link set lo up",
                 "sysctl -qw net.ipv6.conf.all.disable_ipv6=1",
                 "sysctl -qw net.ipv6.conf.default.disable_ipv6=1",
                 f"ip tuntap add mode tap name {MGMT_INTF}",
                 f"ip addr add {MGMT_HOST}/30 dev {MGMT_INTF}",
                 f"ip link set {MGMT_INTF} up"]
        for k, intf in enumerate(self.intfs):
            tap = tap_name(k)
            lines += [
                f"ip tuntap add mode tap name {tap}",
                f"sysctl -qw net.ipv6.conf.{intf}.disable_ipv6=1",
                f"ip link set {intf} {self.mtu}up",
                f"ip link set {tap} {self.mtu}up",
            ]
            for a, b in ((intf, tap), (tap, intf)):
                lines += [f"tc qdisc add dev {a} handle ffff: ingress",
                          f"tc filter add dev {a} parent ffff: protocol all u32 match u32 0 0 "
                          f"action mirred egress redirect dev {b}"]
        return lines

    def mac_of(self, intf: str) -> str:
        out = self.net.cmd(self.router, f"cat /sys/class/net/{intf}/address").strip()
        mac = out.splitlines()[-1].strip() if out else ""
        if len(mac.split(":")) != 6:
            raise RuntimeError(f"reading the MAC of {intf} on {self.router} failed: {out!r}")
        return mac

    def render_init(self) -> Path:
        """Write the router's init script (from uml_init.sh.tmpl) into its state dir."""
        renames = []
        for k, intf in enumerate(self.intfs):
            renames.append(f"ip link set vec{k} name {shlex.quote(intf)}")
        # hostfs takes its host directory as a mount option, which a comma would split:
        # mount it through a link of a plain name to the work directory.
        work_link = self.state_dir / "work"
        work_link.symlink_to(Path(self.net.workdir).resolve())
        project = REPO_ROOT.resolve()
        project_mount = "# the project is not under /tmp: seen through the root"
        if project.is_relative_to("/tmp"):
            project_link = self.state_dir / "project"
            project_link.symlink_to(project)
            project_mount = (f"mkdir -p {shlex.quote(str(project))}\n"
                             f"mount -r -t hostfs -o {shlex.quote(str(project_link))} hostfs "
                             f"{shlex.quote(str(project))}")
        text = Template(INIT_TEMPLATE.read_text()).substitute(
            project_mount=project_mount,
            router=self.router, workdir=shlex.quote(str(Path(self.net.workdir).resolve())),
            work_link=shlex.quote(str(work_link)),
            interfaces="\n".join(renames), mgmt_intf=f"vec{len(self.intfs)}",
            mgmt_addr=MGMT_ROUTER, python=shlex.quote(sys.executable),
            exec_script=shlex.quote(str(EXEC_SCRIPT)), port=EXEC_PORT)
        path = self.state_dir / "init.sh"
        path.write_text(text)
        path.chmod(0o755)
        return path

    def kernel_argv(self, init: Path) -> list[str]:
        kernel = kernel_path()
        if kernel is None:
            raise RuntimeError(f"{UML_KERNEL} not found: apt-get install user-mode-linux "
                               "(setup.sh does)")
        argv = ["unshare", "--pid", "--fork", "--kill-child", kernel, f"mem={MEMORY}",
                "root=/dev/root", "rootfstype=hostfs", "hostfs=/", "ro", f"init={init}",
                f"uml_dir={self.state_dir}", f"umid={self.umid}",
                "con=null", "con0=null,fd:1", "ssl=null", "quiet"]
        for k, intf in enumerate(self.intfs):
            argv.append(f"vec{k}:transport=tap,ifname={tap_name(k)},mac={self.mac_of(intf)}")
        argv.append(f"vec{len(self.intfs)}:transport=tap,ifname={MGMT_INTF}")
        return argv

    def start(self) -> list[str]:
        """Start the kernel (recorded in the ledger like every process); :meth:`wait_ready`
        waits for its command server. Returns its command line."""
        self.state_dir.mkdir(parents=True, exist_ok=True)
        argv = self.kernel_argv(self.render_init())
        self._started = time.monotonic()
        with open(self.console_log, "w") as log:
            # The router's kernel is its network plane: above the hosts, as every daemon.
            self.proc = self.net.popen(self.router, argv, network_plane=True, outside=True,
                                       what=UML_KERNEL, stdout=log, stderr=log)
        return argv

    def wait_ready(self, timeout: float = BOOT_TIMEOUT_S) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            text = self.console_log.read_text(errors="replace")
            if READY_LINE in text:
                self.booted_s = round(time.monotonic() - self._started, 2)
                return
            if self.proc.poll() is not None or "Kernel panic" in text:
                break
            time.sleep(0.1)
        text = self.console_log.read_text(errors="replace")
        panic = [line for line in text.splitlines() if "panic" in line.lower() or "Failed" in line]
        tail = panic or text.strip().splitlines()[-5:]
        state = ("exited with status " + str(self.proc.returncode)
                 if self.proc.poll() is not None else
                 "its kernel panicked" if "Kernel panic" in text else
                 f"not ready after {timeout:g} s")
        raise RuntimeError(f"user-mode router {self.router}: {state}; its console "
                           f"({self.console_log}) ends: {' | '.join(tail) or 'nothing'}")

    def kernel_pids(self) -> list[int]:
        """The router kernel's own pid (the init of its pid namespace, the child of the
        recorded `unshare`): once it is gone, every process of the router is (the kernel
        reaps a pid namespace before its init's exit completes)."""
        if self.proc is None:
            return []
        pid = self.proc.pid
        try:
            return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
        except (OSError, ValueError):
            return []

    def counters(self) -> dict[str, int]:
        """What this router was offered and could not take in, since it started: frames its
        taps could not hand to its kernel (``tx_dropped`` of each tap: the kernel did not
        read them in time) and packets its kernel dropped at a full backlog (its
        /proc/net/softnet_stat). Missing counters read as absent keys, never as 0."""
        taps = " ".join(tap_name(k) for k in range(len(self.intfs)))
        script = (f"for t in {taps}; do cat /sys/class/net/$t/statistics/tx_packets "
                  "/sys/class/net/$t/statistics/tx_dropped; done")
        out: dict[str, int] = {}
        res = self.net.run(self.router, ["sh", "-c", script], timeout=20, outside=True)
        nums = [int(x) for x in res.stdout.split() if x.isdigit()]
        if res.returncode == 0 and len(nums) == 2 * len(self.intfs):
            out["tap_delivered"] = sum(nums[0::2])
            out["tap_dropped"] = sum(nums[1::2])
        res = self.net.run(self.router, ["cat", "/proc/net/softnet_stat"], timeout=20)
        if res.returncode == 0 and res.stdout.strip():
            rows = [line.split() for line in res.stdout.splitlines() if line.strip()]
            out["kernel_processed"] = sum(int(r[0], 16) for r in rows)
            out["kernel_dropped"] = sum(int(r[1], 16) for r in rows)
        return out

    def describe(self) -> dict[str, Any]:
        return {"kernel": kernel_path(), "release": _release(), "memory": MEMORY,
                "pid": self.proc.pid if self.proc else None, "boot_s": self.booted_s,
                "console": str(self.console_log),
                "interfaces": {intf: tap_name(k) for k, intf in enumerate(self.intfs)}}


def _release() -> str:
    mods = sorted(p.name for p in UML_MODULES.iterdir()) if UML_MODULES.is_dir() else []
    return mods[-1] if mods else "unknown"


def module_dir() -> Path | None:
    """The modules of the installed user-mode kernel (netem, tbf, htb), if any."""
    rel = _release()
    path = UML_MODULES / rel
    return path if rel != "unknown" and path.is_dir() else None


def netem_module() -> Path | None:
    """The user-mode kernel's sch_netem module (router_delay/router_loss), if installed."""
    mods = module_dir()
    path = mods / "kernel" / "net" / "sched" / "sch_netem.ko" if mods else None
    return path if path is not None and path.is_file() else None


__all__ = ["UmlRouter", "available", "kernel_path", "module_dir", "netem_module"]
