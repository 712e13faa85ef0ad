"""The record of everything a testbed creates, so `mcastlab clean` can remove exactly that.

A ledger is a JSON-lines file ``/run/mcastlab/<tag>.ledger``. Its first line names the
owner (pid plus its start time from /proc). Every later line is written, flushed and
fsync'ed as the thing it names is created, so the file is complete even when the owner is
killed with SIGKILL:

    {"kind": "owner", "tag": "mk3z", "pid": 4242, "start": 123456, "created": 1763.0}
    {"kind": "proc", "pid": 4250, "start": 123460, "node": "h1", "what": "shell"}
    {"kind": "link", "name": "mk3zs1-eth1"}          # root-namespace link (rare)
    {"kind": "dir", "path": "/run/mcastlab/mk3z"}    # private state directory
    {"kind": "dir", "path": "/dev/shm/mcastlab-mk3z-shm-x1y2"}  # a private /dev/shm
    {"kind": "netns", "name": "mclcap-mk3z-h1"}      # `ip netns` namespace (carries the tag)
    {"kind": "addr", "dev": "cbrmk3z", "addr": "10.77.0.254/24"}  # root-namespace address
    {"kind": "remote", "server": "srv2", "session": "3f9c...",
     "clean": ["ssh", ..., "mcastlab clean --tag mk3z --session 3f9c... --include-live"]}

A "remote" line stands for another server of a cluster (topologies/cluster.py), which keeps
its own ledger under the same tag, owned by a session whose random id is in that ledger's
owner line (``"session"``); undoing the entry runs the recorded ssh command, which cleans
that ledger there only if it is that session's (another testbed with the same tag there
is left alone). Only an argv starting with ``ssh`` and naming the tag and the session is
ever run from a ledger. When it fails (the server does not answer), the ledger is kept
with only its unfinished remote lines and its owner marked ``"released"``, so a later
``mcastlab clean`` tries again; so is a cgroup whose rmdir failed (a process still in it):
nothing else tracks it.

A process is identified by pid *and* start time, so a recycled pid is never signalled.
Links, namespaces and addresses are removed only when their name (the device's, for an
address) carries the ledger's tag. Names and addresses are recorded *before* they are
made; processes are started held behind a gate (:meth:`Ledger.spawn`) and released only
once recorded, so a SIGKILL at any moment leaves nothing `mcastlab clean` cannot find.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import secrets
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcastlab.paths import STATE_DIR

_B36 = "0123456789abcdefghijklmnopqrstuvwxyz"
# The gate of Ledger.spawn: run "$@" only after reading "go" on the pipe's fd {fd} (then
# closed); end-of-file (the starter died before recording the child) makes it exit
# instead. bash, not dash: dash cannot redirect fds above 9; --posix: no BASH_ENV.
SYSCTL_ROOT = "/proc/sys/"  # the only files a ledger's sysctl entry may write
CGROUP_FS = "/sys/fs/cgroup/"  # the only directories a ledger's cgroup entry may remove
RMDIR_WAIT_S = 2.0  # how long undo retries a cgroup's rmdir while its processes leave
_GATE = 'IFS= read -r go <&{fd} && [ "$go" = go ] && exec "$@" {fd}<&-; exit 125'
# Test hook (tests/mcastlab/test_ledger_gate_netns.py): SIGKILL this process right after
# spawning ("spawn") or right after recording ("recorded"), writing the child's pid to
# the file named by MCASTLAB_TEST_KILL_PIDFILE first.
_TEST_KILL_AT = os.environ.get("MCASTLAB_TEST_KILL_AT", "")
# POSIX shared memory (shm_open): Fast DDS's segments and locks (fastrtps_*), iceoryx's.
SHM_DIR = Path("/dev/shm")
_libc = ctypes.CDLL(None, use_errno=True)
_CLONE_NEWNS = 0x00020000
_MS_BIND, _MS_REC, _MS_SLAVE = 0x1000, 0x4000, 0x80000


def _test_kill(child: int) -> None:
    pidfile = os.environ.get("MCASTLAB_TEST_KILL_PIDFILE")
    if pidfile:
        Path(pidfile).write_text(str(child))
    os.kill(os.getpid(), signal.SIGKILL)


def proc_start_time(pid: int) -> int | None:
    """Start time of `pid` in clock ticks since boot (field 22 of /proc/PID/stat), or None."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) may contain spaces and parentheses: split after the last ')'.
    rest = stat[stat.rfind(")") + 2 :].split()
    return int(rest[19])


def proc_alive(pid: int, start: int) -> bool:
    """True when `pid` is running and is the very process that started at `start`."""
    now = proc_start_time(pid)
    if now is None or now != start:
        return False
    try:
        state = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return state[state.rfind(")") + 2] != "Z"


def signal_recorded(pid: int, start: int, sig: int) -> bool:
    """Send `sig` to `pid` only if it is still the recorded process; True if sent."""
    if not proc_alive(pid, start):
        return False
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, sig)
        return True
    return False


def stop_recorded(pid: int, start: int, grace: float = 2.0) -> None:
    """SIGTERM, wait up to `grace` seconds, then SIGKILL — always re-checking the identity."""
    if not signal_recorded(pid, start, signal.SIGTERM):
        return
    if _await_exit([{"pid": pid, "start": start}], grace):
        signal_recorded(pid, start, signal.SIGKILL)


def _await_exit(procs: list[dict], seconds: float) -> list[dict]:
    """Wait up to `seconds` for the recorded processes `procs` to be gone (or zombies);
    returns those still running."""
    deadline = time.monotonic() + seconds
    while True:
        procs = [e for e in procs if proc_alive(e["pid"], e["start"])]
        if not procs or time.monotonic() > deadline:
            return procs
        time.sleep(0.02)


def enter_private_shm(shm_dir: str) -> None:
    """In a child between fork and exec (a Popen ``preexec_fn``): a mount namespace of
    its own in which /dev/shm is `shm_dir` (made by :meth:`Ledger.make_shm_dir`). For the
    processes of the tests' `ip netns` labs, which have no emulated host's tmpfs (see
    topologies/net.py): the shared memory they leave when killed goes with the ledger,
    never into the machine's /dev/shm. A failed step is said on stderr and the child
    exits 127, as a failed exec would (an exception would reach Popen without its text)."""
    try:
        _libc_ok(_libc.unshare(_CLONE_NEWNS), "unshare(CLONE_NEWNS)")
        # A slave mount, as `ip netns exec` makes: the bind mount never reaches the root's.
        _libc_ok(_libc.mount(b"none", b"/", None, _MS_REC | _MS_SLAVE, None),
                 "making / a slave mount")
        _libc_ok(_libc.mount(shm_dir.encode(), str(SHM_DIR).encode(), None, _MS_BIND, None),
                 f"bind-mounting {shm_dir} on {SHM_DIR}")
    except OSError as e:
        os.write(2, f"mcastlab: {e}\n".encode())
        os._exit(127)


def _libc_ok(rc: int, what: str) -> None:
    if rc != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"private /dev/shm: {what}: {os.strerror(err)}")


def new_tag() -> str:
    """`m` + 3 random base36 characters: short enough for 15-character interface names."""
    return "m" + "".join(secrets.choice(_B36) for _ in range(3))


@dataclass
class Ledger:
    """An open ledger owned by this process. Use :meth:`create`."""

    tag: str
    path: Path
    entries: list[dict] = field(default_factory=list)

    @classmethod
    def create(cls, state_dir: Path = STATE_DIR, tag: str | None = None,
               session: str | None = None) -> Ledger:
        """Create a ledger with a fresh tag no other live or dead ledger uses; with `tag`,
        that one (a cluster server's ledger carries its controller's tag) or TagTaken.
        The tag is taken atomically (O_EXCL) with the owner line, which names `session`
        (a cluster server's: the controller's id for this session, see cluster-session)."""
        state_dir.mkdir(parents=True, exist_ok=True)
        for candidate in [tag] if tag else (new_tag() for _ in range(100)):
            path = state_dir / f"{candidate}.ledger"
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            except FileExistsError:
                continue
            os.close(fd)
            ledger = cls(tag=candidate, path=path)
            me = os.getpid()
            ledger._append(
                {"kind": "owner", "tag": candidate, "pid": me, "start": proc_start_time(me),
                 "created": time.time(), **({"session": session} if session else {})}
            )
            return ledger
        if tag:
            raise TagTaken(f"tag {tag!r} is taken: {state_dir / f'{tag}.ledger'} exists "
                           f"({holder(state_dir / f'{tag}.ledger')})")
        raise RuntimeError(f"could not find a free testbed tag in {state_dir}")

    def _append(self, entry: dict) -> None:
        self.entries.append(entry)
        with open(self.path, "a") as f:
            f.write(json.dumps(entry) + "\n")
            f.flush()
            os.fsync(f.fileno())

    def record_proc(self, pid: int, node: str, what: str) -> None:
        """Record a process we started (call right after spawning it)."""
        start = proc_start_time(pid)
        if start is not None:
            self._append({"kind": "proc", "pid": pid, "start": start, "node": node, "what": what})

    def spawn(self, argv: Sequence[str], node: str, what: str | None = None,
              **kwargs: Any) -> subprocess.Popen[Any]:
        """Start `argv` held behind a gate, record it, then let it exec.

        The child is a shell waiting for a line on a pipe only this process holds; it
        execs `argv` (same pid, same start time) after the ledger line is on disk. If this
        process dies before releasing it, the pipe reaches end-of-file and the child exits
        without running `argv`: no unrecorded process can outlive a SIGKILL.
        """
        r, w = os.pipe()  # both non-inheritable; only r is passed to the child
        pass_fds = (*kwargs.pop("pass_fds", ()), r)
        gated = ["bash", "--posix", "-c", _GATE.format(fd=r), "mcastlab-gate", *argv]
        try:
            proc = subprocess.Popen(gated, pass_fds=pass_fds, **kwargs)
        except BaseException:
            os.close(w)
            raise
        finally:
            os.close(r)
        try:
            if _TEST_KILL_AT == "spawn":
                _test_kill(proc.pid)
            self.record_proc(proc.pid, node, what or Path(argv[0]).name)
            if _TEST_KILL_AT == "recorded":
                _test_kill(proc.pid)
            with contextlib.suppress(BrokenPipeError):  # the child died already
                os.write(w, b"go\n")
        finally:
            os.close(w)
        return proc

    def record_netns(self, name: str) -> None:
        """Record an `ip netns` namespace *before* adding it (its name must carry the tag)."""
        if self.tag not in name:
            raise ValueError(f"namespace {name!r} lacks the testbed tag {self.tag!r}")
        self._append({"kind": "netns", "name": name})

    def record_addr(self, dev: str, addr: str) -> None:
        """Record a root-namespace address *before* adding it to `dev` (which carries the tag)."""
        if self.tag not in dev:
            raise ValueError(f"device {dev!r} lacks the testbed tag {self.tag!r}")
        self._append({"kind": "addr", "dev": dev, "addr": addr})

    def record_link(self, name: str) -> None:
        """Record a root-namespace link *before* creating it. Its name must carry the tag."""
        if self.tag not in name:
            raise ValueError(f"link name {name!r} lacks the testbed tag {self.tag!r}")
        self._append({"kind": "link", "name": name})

    def record_remote(self, server: str, session: str, clean_argv: Sequence[str]) -> None:
        """Record another server of a cluster *before* anything is made there: undoing
        the entry runs `clean_argv` (an ssh command cleaning there the ledger of this tag
        that `session` owns, and no other)."""
        if (not clean_argv or clean_argv[0] != "ssh" or self.tag not in clean_argv[-1]
                or not _names_session(clean_argv, session)):
            raise ValueError(f"remote clean command {clean_argv!r} is not ssh or lacks the "
                             f"tag {self.tag!r} or the session {session!r}")
        self._append({"kind": "remote", "server": server, "session": session,
                      "clean": list(clean_argv)})

    def record_dir(self, path: Path) -> None:
        """Record a private directory that cleanup may delete (must contain the tag)."""
        if self.tag not in str(path):
            raise ValueError(f"directory {path} lacks the testbed tag {self.tag!r}")
        self._append({"kind": "dir", "path": str(path)})

    def make_shm_dir(self, parent: Path = SHM_DIR) -> Path:
        """A private /dev/shm for processes started outside an emulated host (the tests'
        `ip netns` labs): a fresh directory ``/dev/shm/mcastlab-<tag>-shm-*`` that
        :func:`enter_private_shm` mounts on their /dev/shm. What they leave there (a
        SIGKILLed Fast DDS participant's segments) goes with the ledger: release or
        `mcastlab clean`. Made by mkdtemp (0700: no other user can put a file there for
        cleanup to delete; never an existing path), then recorded, as a network's work
        directory: a name recorded first could be taken by another user before mkdir."""
        path = Path(tempfile.mkdtemp(prefix=f"mcastlab-{self.tag}-shm-", dir=parent))
        self.record_dir(path)
        return path

    def record_cgroup(self, path: Path) -> None:
        """Record a cgroup directory *before* creating it (its path must carry the tag);
        cleanup removes it with rmdir once its processes are gone."""
        if self.tag not in str(path):
            raise ValueError(f"cgroup {path} lacks the testbed tag {self.tag!r}")
        self._append({"kind": "cgroup", "path": str(path)})

    def raise_sysctl(self, key: Path, value: int) -> int:
        """Raise the machine-wide integer sysctl `key` to `value` (never lower it); the
        value to go back to is recorded *before* writing, so teardown or `mcastlab clean`
        puts it back (see :func:`_restore_sysctl`). Returns the value now in force."""
        if not str(key).startswith(SYSCTL_ROOT):
            raise ValueError(f"{key} is not a sysctl under {SYSCTL_ROOT}")
        now = int(key.read_text())
        if now >= value:
            return now
        # Another live testbed may have raised it already: go back to its original, not to
        # its raise, once both are gone.
        held = sysctl_holders(self.path.parent, str(key), exclude=self.tag)
        original = min((e["old"] for e in held), default=now)
        self._append({"kind": "sysctl", "key": str(key), "old": original, "set": value})
        key.write_text(f"{value}\n")
        return int(key.read_text())

    def release(self) -> list[str]:
        """Undo everything recorded, then delete the ledger file; returns a line per action.
        What the file lists, not only what this object wrote: on a cluster server,
        `mcastlab cluster-exec` processes append their own entries to the session's
        ledger. A server that could not be cleaned keeps the file (see :func:`keep`), said
        in the last line."""
        try:
            entries = read_ledger(self.path)
        except OSError:
            entries = self.entries
        done, pending = undo(entries, self.tag, self.path.parent)
        if pending:
            done.append(keep(self.path, entries, pending))
        else:
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()
        return done


class TagTaken(RuntimeError):
    """A ledger with the requested tag exists already."""


def _names_session(argv: Sequence[str], session: str | None) -> bool:
    return bool(session) and f"--session {session}" in argv[-1]


def holder(path: Path) -> str:
    """Who holds the ledger `path`, for messages."""
    owner = owner_of(path)
    if owner is None:
        return "no owner line"
    state = "running" if owner_alive([owner]) else "not running: `mcastlab clean` removes it"
    return f"owner pid {owner.get('pid')}, {state}"


def owner_of(path: Path) -> dict | None:
    """The owner line of the ledger `path` (its first line), or None."""
    try:
        with path.open() as f:
            first = json.loads(f.readline())
    except (OSError, json.JSONDecodeError):
        return None
    return first if isinstance(first, dict) and first.get("kind") == "owner" else None


def keep(path: Path, entries: list[dict], pending: list[dict]) -> str:
    """Rewrite the ledger `path` with only `pending` (the remote cleans and cgroup removals
    that failed) under its owner line marked released (so `mcastlab clean` no longer waits
    for its owner); atomically, so a crash leaves the old file or the new one. Returns what
    to tell."""
    owner = next((e for e in entries if e.get("kind") == "owner"), {"kind": "owner"})
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "w") as f:
        for e in [{**owner, "released": time.time()}, *pending]:
            f.write(json.dumps(e) + "\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    servers = [e["server"] for e in pending if e["kind"] == "remote"]
    cgroups = [e["path"] for e in pending if e["kind"] == "cgroup"]
    until = []
    if servers:
        until.append("it answers" if len(servers) == 1 else "they answer")
    if cgroups:
        until.append("no process is left in " + ("it" if len(cgroups) == 1 else "them"))
    what = ", ".join([*servers, *(f"cgroup {c}" for c in cgroups)])
    return (f"ledger {path} kept for {what}, not cleaned: run `mcastlab clean --tag "
            f"{path.stem}` once {' and '.join(until)}")


KILL_WAIT_S = 5.0  # how long undo waits for SIGKILLed processes to be gone


def undo(entries: list[dict], tag: str,
         state_dir: Path = STATE_DIR) -> tuple[list[str], list[dict]]:
    """Remove what `entries` list, newest first. Returns a line per action taken, and the
    entries to keep, in the ledger's order: remote ones whose server could not be cleaned,
    cgroups whose rmdir failed. `state_dir` holds the other testbeds' ledgers (a raised
    sysctl they hold stays)."""
    done: list[str] = []
    pending: list[dict] = []
    procs = [e for e in entries if e["kind"] == "proc"]
    # Signal everything first, then wait, so many processes stop in parallel. Node shells
    # (interactive bash ignores SIGTERM) go last, once the daemons in them had their chance.
    for e in reversed(procs):
        if e["what"] != "shell" and signal_recorded(e["pid"], e["start"], signal.SIGTERM):
            done.append(f"stopped {e['what']} pid {e['pid']} on {e['node']}")
    _await_exit([e for e in procs if e["what"] != "shell"], 2.0)
    killed = [e for e in procs if signal_recorded(e["pid"], e["start"], signal.SIGKILL)]
    done += [f"killed {e['what']} pid {e['pid']} on {e['node']}" for e in killed]
    # SIGKILL returns before the process is gone (a large one takes a while to free its
    # memory): wait, so that nothing recorded outlives the ledger that names it.
    done += [f"{e['what']} pid {e['pid']} on {e['node']} still running {KILL_WAIT_S:g} s after "
             f"SIGKILL (uninterruptible?): check it by hand"
             for e in _await_exit(killed, KILL_WAIT_S)]
    for e in reversed(entries):
        if (e["kind"] == "link" and tag in e["name"]
                and Path(f"/sys/class/net/{e['name']}").exists()):
            subprocess.run(["ip", "link", "del", e["name"]], capture_output=True, check=False)
            done.append(f"deleted link {e['name']}")
        elif (e["kind"] == "addr" and tag in e["dev"]
              and Path(f"/sys/class/net/{e['dev']}").exists()):
            subprocess.run(["ip", "addr", "del", e["addr"], "dev", e["dev"]], capture_output=True,
                           check=False)
            done.append(f"deleted address {e['addr']} of {e['dev']}")
        elif e["kind"] == "netns" and tag in e["name"] and Path(f"/run/netns/{e['name']}").exists():
            subprocess.run(["ip", "netns", "del", e["name"]], capture_output=True, check=False)
            done.append(f"deleted namespace {e['name']}")
        elif (e["kind"] == "dir" and tag in e["path"] and Path(e["path"]).exists()
              and not Path(e["path"]).is_symlink()):
            shutil.rmtree(e["path"], ignore_errors=True)
            done.append(f"removed {e['path']}")
        elif (e["kind"] == "cgroup" and tag in e["path"] and e["path"].startswith(CGROUP_FS)
              and Path(e["path"]).is_dir()):
            why = _rmdir_cgroup(Path(e["path"]))
            if why is None:
                done.append(f"removed cgroup {e['path']}")
            else:
                done.append(f"cgroup {e['path']} not removed ({why}): kept in the ledger")
                pending.append(e)
        elif e["kind"] == "remote" and e["clean"][:1] == ["ssh"] and tag in e["clean"][-1]:
            lines, cleaned = _clean_remote(e)
            done += lines
            if not cleaned:
                pending.append(e)
        elif e["kind"] == "sysctl" and e["key"].startswith(SYSCTL_ROOT):
            line = _restore_sysctl(e, tag, state_dir)
            if line:
                done.append(line)
    pending.reverse()  # the ledger's order (children after their parent cgroup)
    return done, pending


def _clean_remote(entry: dict) -> tuple[list[str], bool]:
    """Run a remote entry's clean command: (what happened, a line per action there then
    the outcome; whether the entry is done)."""
    server = entry["server"]
    if not _names_session(entry["clean"], entry.get("session")):
        return ([f"server {server}: its clean command names no session (recorded by an older "
                 f"mcastlab), not run: it could remove another testbed's ledger there; clean "
                 f"that server by hand"], True)
    try:
        r = subprocess.run(entry["clean"], capture_output=True, text=True, check=False,
                           timeout=120)
    except subprocess.TimeoutExpired:
        return [f"server {server} not cleaned: no answer within 120 s"], False
    lines = [ln for ln in (r.stdout + r.stderr).splitlines() if ln.strip()]
    if r.returncode != 0:
        return [f"server {server} not cleaned (ssh exit {r.returncode}): "
                f"{'; '.join(lines[-3:]) or 'no output'}"], False
    return ([f"server {server}: {ln}" for ln in lines]
            + [f"cleaned server {server}" + ("" if lines else ": nothing was left there")], True)


def sysctl_holders(state_dir: Path, key: str, exclude: str) -> list[dict]:
    """The sysctl entries on `key` of every other ledger in `state_dir`."""
    return [e for path in ledgers(state_dir) if path.stem != exclude
            for e in read_ledger(path) if e.get("kind") == "sysctl" and e.get("key") == key]


def _restore_sysctl(entry: dict, tag: str, state_dir: Path) -> str | None:
    """Put back a sysctl this testbed raised, unless it was changed since (by someone
    else: left alone). Another testbed that still holds a raise keeps the largest value it
    set; the last one out restores the value found before any testbed raised it."""
    key = Path(entry["key"])
    try:
        now = int(key.read_text())
    except (OSError, ValueError):
        return None
    if now != entry["set"]:
        return None
    others = sysctl_holders(state_dir, entry["key"], exclude=tag)
    value = max((e["set"] for e in others), default=entry["old"])
    if value == now:
        return None
    key.write_text(f"{value}\n")
    return f"restored {key.name} to {value} (was {now})"


def _rmdir_cgroup(path: Path) -> str | None:
    """rmdir a cgroup; its last processes may take a moment to leave it after SIGKILL.
    None once it is gone, else why it is still there."""
    deadline = time.monotonic() + RMDIR_WAIT_S
    while True:
        try:
            path.rmdir()
            return None
        except FileNotFoundError:
            return None
        except OSError as exc:
            if time.monotonic() > deadline:
                return exc.strerror or str(exc)
            time.sleep(0.05)


def read_ledger(path: Path) -> list[dict]:
    """Entries of a ledger file; a torn last line (owner killed mid-write) is ignored."""
    entries = []
    for line in path.read_text().splitlines():
        with contextlib.suppress(json.JSONDecodeError):
            entries.append(json.loads(line))
    return entries


def owner_alive(entries: list[dict]) -> bool:
    """Whether the ledger's owner still runs it (not once it released it: see keep)."""
    owner = next((e for e in entries if e.get("kind") == "owner"), None)
    if not owner or owner.get("start") is None or owner.get("released"):
        return False
    return proc_alive(owner["pid"], owner["start"])


def ledgers(state_dir: Path = STATE_DIR) -> Iterator[Path]:
    if state_dir.is_dir():
        yield from sorted(state_dir.glob("*.ledger"))


def kept(state_dir: Path = STATE_DIR, tag: str | None = None) -> list[Path]:
    """Ledgers kept for a server that could not be cleaned (their owner released them)."""
    return [p for p in ledgers(state_dir) if tag in (None, p.stem)
            and (owner_of(p) or {}).get("released")]


def clean(state_dir: Path = STATE_DIR, include_live: bool = False,
          tag: str | None = None, session: str | None = None) -> list[str]:
    """Remove what every ledger in `state_dir` (or only `tag`'s) lists; skip live owners
    unless asked. With `session` (and `tag`: a controller cleaning its cluster server),
    only a ledger that session owns."""
    report: list[str] = []
    for path in ledgers(state_dir):
        if tag is not None and path.stem != tag:
            continue
        report += clean_ledger(path, include_live, session)
    return report


def clean_ledger(path: Path, include_live: bool = False,
                 session: str | None = None) -> list[str]:
    """Remove what one ledger lists, then the ledger (skipped while its owner lives, or
    when `session` is given and does not own it). A server that could not be cleaned keeps
    the ledger, with only that entry (see keep)."""
    entries = read_ledger(path)
    tag = path.stem
    if session is not None:
        owner = next((e for e in entries if e.get("kind") == "owner"), {})
        if owner.get("session") != session:
            return [f"{tag}: another testbed's ledger (not session {session}: {holder(path)}),"
                    f" left alone"]
    if owner_alive(entries) and not include_live:
        return [f"{tag}: owner still running, skipped (use --include-live)"]
    done, pending = undo(entries, tag, path.parent)
    report = [f"{tag}: {line}" for line in done]
    if pending:
        report.append(f"{tag}: {keep(path, entries, pending)}")
        return report
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    report.append(f"{tag}: ledger removed")
    return report
