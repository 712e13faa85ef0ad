"""A second "server" on this machine for the cluster tests, honest about what it
simulates: its own network and mount namespaces, its own sshd (own host key, root login by
a key made for the test only), its own /run (so its own /run/mcastlab ledgers) and /tmp,
joined to the machine's root namespace by a veth underlay.

   root namespace (server 1, "localhost")        server 2 (unshare --net --mount)
   <tag>ul0 10.253.0.1/24 ----------- veth ----------- eth0 10.253.0.2/24
                                                       sshd -D on :22, MaxSessions 64

What it shares with the first server, unlike a real machine: the kernel (so one VXLAN
implementation, one clock), the pid space and every file outside /run and /tmp, and the
mcastlab install at its path even under /tmp (a real cluster must have it at the same path
anyway). The controller
reaches it only through ssh: nodes it hosts are made, driven and cleaned over ssh, with
the server's own ledger.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from mcastlab.ledger import Ledger
from mcastlab.paths import REPO_ROOT
from topologies.cluster import MCASTLAB, ClusterConfig

SERVER_ADDR = "10.253.0.2"
LOCAL_ADDR = "10.253.0.1"
PREFIX = 24
SSHD = "/usr/sbin/sshd"
SSHD_CONFIG = """\
ListenAddress {addr}
Port 22
HostKey {dir}/host_ed25519
AuthorizedKeysFile {dir}/authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PidFile none
MaxSessions 64
MaxStartups 100:30:200
"""
# Runs as the server's first process, in its new namespaces; execs sshd (same pid). The
# mcastlab install stays visible at its path (a cluster needs it at the same path on every
# server) even when it lives under /tmp or /run (a clone in /tmp, as CI may make): it is
# bound aside before those are hidden and bound back at the same path after.
SERVER_SCRIPT = r"""
set -e
dir=$1 addr=$2 repo=$3
mount --bind "$repo" "$dir/repo"
mount -t tmpfs mcastlab-srv-run /run
mkdir -m 0755 /run/sshd /run/mcastlab
mount -t tmpfs mcastlab-srv-tmp /tmp
if [ ! -d "$repo/.venv" ]; then mkdir -p "$repo" && mount --bind "$dir/repo" "$repo"; fi
mount --bind "$dir/sshd_config" /etc/ssh/sshd_config
ip link set lo up
for _ in $(seq 200); do ip link show eth0 >/dev/null 2>&1 && break; sleep 0.05; done
ip addr add "$addr/24" dev eth0
ip link set eth0 up
exec /usr/sbin/sshd -D -e -f /etc/ssh/sshd_config
"""


class SecondServer:
    """Start with :meth:`start`, stop with :meth:`stop` (or use as a context manager)."""

    def __init__(self) -> None:
        self.ledger = Ledger.create()
        self.dir = Path(f"/var/tmp/mcastlab-{self.ledger.tag}-server2")
        self.link = f"{self.ledger.tag}ul0"
        self.proc: subprocess.Popen[Any] | None = None

    def __enter__(self) -> SecondServer:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def start(self) -> None:
        taken = subprocess.run(["ip", "-o", "route", "show", f"10.253.0.0/{PREFIX}"],
                               capture_output=True, text=True, check=True).stdout
        if taken.strip():
            raise RuntimeError(f"10.253.0.0/{PREFIX} is in use on this machine: {taken}")
        self.ledger.record_dir(self.dir)
        self.dir.mkdir(mode=0o700)
        (self.dir / "repo").mkdir()  # the install's mount point aside (SERVER_SCRIPT)
        for key in ("host_ed25519", "client_ed25519"):
            subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", key, "-f",
                            str(self.dir / key)], check=True)
        (self.dir / "authorized_keys").write_text((self.dir / "client_ed25519.pub").read_text())
        host_pub = (self.dir / "host_ed25519.pub").read_text().split()
        (self.dir / "known_hosts").write_text(f"{SERVER_ADDR} {host_pub[0]} {host_pub[1]}\n")
        (self.dir / "sshd_config").write_text(SSHD_CONFIG.format(addr=SERVER_ADDR,
                                                                 dir=self.dir))
        log = (self.dir / "server.log").open("wb")
        self.proc = self.ledger.spawn(
            ["unshare", "--net", "--mount", "--propagation", "private", "bash", "-c",
             SERVER_SCRIPT, "server2", str(self.dir), SERVER_ADDR, str(REPO_ROOT)],
            "server2", "sshd", stdout=log, stderr=log, start_new_session=True)
        log.close()
        here = _netns_of(os.getpid())
        self._wait(lambda: self._netns() not in (here, None), "its namespaces")
        self.ledger.record_link(self.link)
        for argv in (["ip", "link", "add", self.link, "type", "veth", "peer", "name", "eth0",
                      "netns", str(self.pid)],
                     ["ip", "addr", "add", f"{LOCAL_ADDR}/{PREFIX}", "dev", self.link],
                     ["ip", "link", "set", self.link, "up"]):
            r = subprocess.run(argv, capture_output=True, text=True, check=False)
            if r.returncode != 0:
                raise RuntimeError(f"second server: {' '.join(argv)}: {r.stderr.strip()}")
        self._wait(self._ssh_works, "sshd to accept the test key")

    def _netns(self) -> str | None:
        return _netns_of(self.pid)

    def _ssh_works(self) -> bool:
        return self.ssh(["true"]).returncode == 0

    def _wait(self, ready: Any, what: str, timeout: float = 15) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc is not None and self.proc.poll() is not None:
                break
            if ready():
                return
            time.sleep(0.1)
        log = (self.dir / "server.log").read_text() if (self.dir / "server.log").exists() else ""
        raise RuntimeError(f"second server: waited {timeout} s for {what}; its log: {log}")

    def config(self, source: str = "test", **over: Any) -> ClusterConfig:
        """The [cluster] of a controller here and this server (`over`: other keys)."""
        return ClusterConfig(servers=("localhost", SERVER_ADDR),
                             identity=str(self.dir / "client_ed25519"),
                             known_hosts=str(self.dir / "known_hosts"), source=source, **over)

    def section(self, **over: Any) -> dict[str, Any]:
        """The same as a scenario's [cluster] table."""
        c = self.config()
        return {"servers": list(c.servers), "identity": c.identity,
                "known_hosts": c.known_hosts, **over}

    def ssh(self, command: list[str]) -> subprocess.CompletedProcess[str]:
        """Run `command` on the server over a new ssh connection."""
        import shlex

        return subprocess.run(
            ["ssh", "-o", "BatchMode=yes", "-o", f"UserKnownHostsFile={self.dir}/known_hosts",
             "-o", "StrictHostKeyChecking=yes", "-o", "ConnectTimeout=5", "-i",
             str(self.dir / "client_ed25519"), f"root@{SERVER_ADDR}", "--",
             " ".join(shlex.quote(a) for a in command)],
            capture_output=True, text=True, check=False, timeout=30)

    @contextlib.contextmanager
    def masked(self, path: Path, content: Path) -> Iterator[None]:
        """`content` bind-mounted over `path` in the server's mount namespace only: the
        server sees another file there (an edited checkout), the controller does not."""
        self.inside(["mount", "--bind", str(content), str(path)])
        try:
            yield
        finally:
            self.inside(["umount", str(path)])

    def inside(self, command: list[str]) -> str:
        """Run `command` in the server's namespaces directly (for checks, not through ssh)."""
        return subprocess.run(["nsenter", f"--target={self.pid}", "--net", "--mount", "--",
                               *command], capture_output=True, text=True, check=True).stdout

    def processes(self) -> list[tuple[int, str]]:
        """(pid, command) of every process in the server's network namespace but sshd's
        listener: what the testbed left running there."""
        ns, out = self._netns(), []
        for p in Path("/proc").iterdir():
            if p.name.isdigit() and int(p.name) != self.pid and _netns_of(int(p.name)) == ns:
                with contextlib.suppress(OSError):
                    out.append((int(p.name), (p / "cmdline").read_bytes()
                                .replace(b"\0", b" ").decode(errors="replace").strip()))
        return out

    def stop(self) -> None:
        """Clean what the server's own ledgers list (a test that failed half-way may have
        left nodes there: `mcastlab clean --include-live` run inside it), then stop sshd
        and remove the link and the keys: what this ledger recorded, nothing else."""
        if self.proc is not None and self.proc.poll() is None:
            subprocess.run(["nsenter", f"--target={self.pid}", "--net", "--mount", "--",
                            str(MCASTLAB), "clean", "--include-live"],
                           capture_output=True, check=False, timeout=120)
        self.ledger.release()


def _netns_of(pid: int) -> str | None:
    try:
        return str(Path(f"/proc/{pid}/ns/net").readlink())
    except OSError:
        return None
