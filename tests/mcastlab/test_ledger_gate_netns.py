"""No process, namespace, link or address escapes the ledger.

    starter (SIGKILLed)                          root namespace
      ledger: netns mclgate-<tag>, link g<tag>a, address 10.79.255.254/32 on it
      spawn: ip netns exec mclgate-<tag> sleep <marker>   (held behind the gate)

The starter is killed with SIGKILL right after the child is spawned but before its pid is
in the ledger ("spawn"), and right after recording but before the gate opens
("recorded"); then the clean routine runs on that ledger only. Nothing may be left: the
gated child exits by itself when the gate's pipe reaches end-of-file, and the rest is
removed from the ledger. A minilab user (BridgeLab with the root address 10.77.0.254, a
capture, a receiver and a sender) is SIGKILLed mid-build, with its traffic running and at
random moments (``MCASTLAB_KILL_MOMENTS``, default 5; seed ``MCASTLAB_KILL_SEED``), each
time followed by the real `mcastlab clean` (tests/helpers/killcheck.py checks what is left).
"""

from __future__ import annotations

import os
import random
import secrets
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mcastlab import ledger
from mcastlab.paths import REPO_ROOT
from tests.helpers.killcheck import (
    assert_nothing_left,
    mcastlab_clean,
    process_tree,
    runner_ledgers,
)

pytestmark = pytest.mark.timeout(120)

STARTER = r"""
import subprocess, sys
from pathlib import Path
from mcastlab.ledger import Ledger
state, marker = Path(sys.argv[1]), sys.argv[2]
led = Ledger.create(state)
ns, link, peer = f"mclgate-{led.tag}", f"g{led.tag}a", f"g{led.tag}b"
led.record_netns(ns)
subprocess.run(["ip", "netns", "add", ns], check=True)
led.record_link(link)
subprocess.run(["ip", "link", "add", link, "type", "veth", "peer", "name", peer,
                "netns", ns], check=True)
led.record_addr(link, "10.79.255.254/32")
subprocess.run(["ip", "addr", "add", "10.79.255.254/32", "dev", link], check=True)
print(led.tag, flush=True)
led.spawn(["ip", "netns", "exec", ns, "sleep", marker], ns, start_new_session=True,
          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print("NOT KILLED", flush=True)
"""


def _procs_with(marker: str) -> list[int]:
    """Pids whose command line contains `marker` (a random string only our child has)."""
    found = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit() and d.name != str(os.getpid()):
            try:
                cmd = (d / "cmdline").read_bytes()
            except OSError:
                continue
            if marker.encode() in cmd and b"pytest" not in cmd:
                found.append(int(d.name))
    return found


def _wait_gone(marker: str, timeout: float = 5.0) -> list[int]:
    deadline = time.monotonic() + timeout
    while (left := _procs_with(marker)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


def _exists(kind: str, name: str) -> bool:
    return Path(f"/run/netns/{name}" if kind == "netns" else f"/sys/class/net/{name}").exists()


def _root_has_addr(addr: str) -> bool:
    out = subprocess.run(["ip", "-o", "addr", "show", "to", addr], capture_output=True,
                         text=True, check=False).stdout
    return bool(out.strip())


def test_spawn_records_before_the_child_runs(tmp_path: Path) -> None:
    """The gated child is argv itself (same pid), and its ledger line precedes its start."""
    led = ledger.Ledger.create(tmp_path)
    try:
        marker = tmp_path / "ran"
        p = led.spawn(["sh", "-c", f'echo $$; test -s {led.path} && touch {marker}'], "root",
                      stdout=subprocess.PIPE, text=True)
        out, _ = p.communicate(timeout=10)
        assert int(out) == p.pid and p.returncode == 0 and marker.exists()
        assert [e["pid"] for e in led.entries if e["kind"] == "proc"] == [p.pid]
    finally:
        led.release()


@pytest.mark.parametrize("moment", ["spawn", "recorded"])
def test_sigkill_between_start_and_record_leaves_nothing(tmp_path: Path, moment: str) -> None:
    marker = f"3{secrets.randbelow(10**6)}.{secrets.randbelow(10**6)}"  # sleep seconds
    pidfile = tmp_path / "child.pid"
    env = {**os.environ, "MCASTLAB_TEST_KILL_AT": moment,
           "MCASTLAB_TEST_KILL_PIDFILE": str(pidfile)}
    res = subprocess.run([sys.executable, "-c", STARTER, str(tmp_path), marker], env=env,
                         cwd=REPO_ROOT, capture_output=True, text=True, timeout=60, check=False)
    assert res.returncode == -signal.SIGKILL, res.stdout + res.stderr
    tag = res.stdout.split()[0]
    assert "NOT KILLED" not in res.stdout and pidfile.exists()
    path = tmp_path / f"{tag}.ledger"
    kinds = [e["kind"] for e in ledger.read_ledger(path)]
    assert kinds.count("proc") == (1 if moment == "recorded" else 0)
    report = ledger.clean_ledger(path)
    assert _wait_gone(marker) == [], f"gated child still running after clean: {report}"
    assert not _exists("netns", f"mclgate-{tag}") and not _exists("link", f"g{tag}a")
    assert not _root_has_addr("10.79.255.254")
    assert not path.exists()


MINILAB_USER = r"""
import time
from captures import capture, minilab

lab = minilab.BridgeLab(hosts=3, snooping=True).__enter__()
capture.start(lab, {"p0": (None, lab.ports[0])}, lab.workdir / "pcaps", 96, 0, 0)
minilab.mcast_receiver(lab, lab.hosts[1], "239.9.9.9", duration=300)
minilab.mcast_sender(lab, lab.hosts[0], "239.9.9.9", rate=50, duration=300)
time.sleep(300)
"""
MINILAB_MOMENTS = int(os.environ.get("MCASTLAB_KILL_MOMENTS", "5"))
MINILAB_SEED = int(os.environ.get("MCASTLAB_KILL_SEED", "20261124"))


def _minilab_phase(pid: int, phase: str) -> bool:
    """From the user's ledger: "building" = a namespace recorded, no process yet (the lab
    is being built); "traffic" = the capture, the receiver and the sender all recorded
    and running."""
    books = runner_ledgers(pid)
    entries = [e for es in books.values() for e in es]
    procs = [e for e in entries if e["kind"] == "proc"]
    if phase == "building":
        return any(e["kind"] == "netns" for e in entries) and not procs
    return (sorted(e["what"] for e in procs) == ["python3", "python3", "tcpdump"]
            and all(ledger.proc_alive(e["pid"], e["start"]) for e in procs))


def _kill_minilab_user(moment: str | float) -> str:
    """Start the minilab user, SIGKILL it at `moment` (a phase or seconds after start),
    `mcastlab clean`, then check that nothing of its lab is left. Returns what was hit."""
    p = subprocess.Popen([sys.executable, "-c", MINILAB_USER], cwd=REPO_ROOT,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        t0 = time.monotonic()
        if isinstance(moment, str):
            deadline = t0 + 30
            while not _minilab_phase(p.pid, moment):
                assert p.poll() is None, p.stderr.read() if p.stderr else ""
                assert time.monotonic() < deadline, f"minilab user never reached {moment}"
                time.sleep(0.002)
        else:
            time.sleep(moment)  # the random moment itself is what is tested
        tree = process_tree(p.pid)
        assert p.poll() is None, p.stderr.read() if p.stderr else ""
    finally:
        p.send_signal(signal.SIGKILL)
        p.wait(timeout=10)
    books = runner_ledgers(p.pid)
    entries = [e for es in books.values() for e in es]
    hit = (f"{len([e for e in entries if e['kind'] == 'netns'])} namespaces, "
           f"{sorted(e['what'] for e in entries if e['kind'] == 'proc')} processes recorded")
    mcastlab_clean()
    assert_nothing_left(books, tree)
    for path in books:
        tag = path.stem
        assert not [d for d in os.listdir("/run/netns") if tag in d], tag
        assert not [d for d in os.listdir("/sys/class/net") if tag in d], tag
        addrs = subprocess.run(["ip", "-o", "addr", "show"], capture_output=True, text=True,
                               check=False).stdout
        assert tag not in addrs, addrs
        assert not list(Path("/tmp").glob(f"mcl-cap-{tag}-*")), tag
    return hit


@pytest.mark.timeout(900)
def test_sigkill_of_a_minilab_user_then_clean_leaves_nothing(
        capsys: pytest.CaptureFixture[str]) -> None:
    """The minilab case: a user of captures/minilab.py (a 3-host bridge lab
    with the root address 10.77.0.254, a capture on a bridge port, a multicast receiver
    and sender) is SIGKILLed mid-build, with its traffic running, and at random moments;
    after each, `mcastlab clean` leaves none of its namespaces, veths, bridge, address,
    processes or work directory."""
    rng = random.Random(MINILAB_SEED)
    moments: list[str | float] = ["building", "traffic"]
    moments += [round(rng.uniform(0.2, 5.0), 2) for _ in range(MINILAB_MOMENTS)]
    hits = [f"{m}: {_kill_minilab_user(m)}" for m in moments]
    with capsys.disabled():
        print("\n[minilab kills] " + "; ".join(hits))
    assert hits[0].startswith("building: ") and "[]" in hits[0]
    assert "'python3', 'python3', 'tcpdump'" in hits[1]


def test_spawn_of_a_missing_program_fails_like_exec(tmp_path: Path) -> None:
    led = ledger.Ledger.create(tmp_path)
    try:
        p = led.spawn(["/nonexistent/mcastlab-no-such-program"], "root",
                      stderr=subprocess.DEVNULL)
        assert p.wait(timeout=10) == 127
    finally:
        led.release()
