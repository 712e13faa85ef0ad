"""What a user checks after SIGKILLing an mcastlab process and running `mcastlab clean`.

Shared by the crash tests (tests/experiments/test_kill_anywhere_netns.py, the minilab case in
tests/mcastlab/test_ledger_gate_netns.py). Everything here is observable from outside the
killed process: the ledgers in /run/mcastlab (which one belongs to the killed process is
in its ``owner`` line), the process table, and the machine's namespaces, links and
addresses.

    tree, books = process_tree(pid), runner_ledgers(pid)   # just before the kill
    os.kill(pid, SIGKILL); ...
    out = mcastlab_clean()
    assert_nothing_left(books, tree)
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from mcastlab import ledger
from mcastlab.paths import STATE_DIR


def mcastlab(*args: str) -> list[str]:
    """The command line of `mcastlab ARGS` (this interpreter's, as the venv's script does)."""
    return [sys.executable, "-m", "mcastlab.cli", *args]


def runner_ledgers(pid: int, state_dir: Path = STATE_DIR) -> dict[Path, list[dict]]:
    """Ledgers whose owner is `pid`, with their entries."""
    out = {}
    for p in ledger.ledgers(state_dir):
        entries = ledger.read_ledger(p)
        owner = next((e for e in entries if e.get("kind") == "owner"), {})
        if owner.get("pid") == pid:
            out[p] = entries
    return out


def process_tree(pid: int) -> dict[tuple[int, int], str]:
    """{(pid, start time): command} of `pid` and all its descendants now."""
    children: dict[int, list[int]] = {}
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat[stat.rfind(")") + 2:].split()[1])
        children.setdefault(ppid, []).append(int(d.name))
    tree: dict[tuple[int, int], str] = {}
    todo = [pid]
    while todo:
        p = todo.pop()
        start = ledger.proc_start_time(p)
        if start is None:
            continue
        try:
            cmd = Path(f"/proc/{p}/cmdline").read_bytes().replace(b"\0", b" ").decode(
                errors="replace").strip()
        except OSError:
            cmd = "?"
        tree[(p, start)] = cmd[:120]
        todo += children.get(p, [])
    return tree


def mcastlab_clean() -> str:
    """Run `mcastlab clean` as a user would; returns its report (it must exit 0)."""
    res = subprocess.run(mcastlab("clean"), capture_output=True, text=True, timeout=120,
                         check=False)
    assert res.returncode == 0, res.stdout + res.stderr
    return res.stdout


def leftovers(books: dict[Path, list[dict]], tree: dict[tuple[int, int], str]) -> list[str]:
    """What is still there of the killed process's ledgers and of its process tree."""
    left = []
    for path, entries in books.items():
        if path.exists():
            left.append(f"ledger {path}")
        for e in entries:
            kind = e["kind"]
            if kind == "proc" and ledger.proc_alive(e["pid"], e["start"]):
                left.append(f"process {e}")
            elif kind == "netns" and Path(f"/run/netns/{e['name']}").exists():
                left.append(f"namespace {e['name']}")
            elif kind == "link" and Path(f"/sys/class/net/{e['name']}").exists():
                left.append(f"link {e['name']}")
            elif kind == "addr" and _has_addr(e["dev"], e["addr"]):
                left.append(f"address {e['addr']} on {e['dev']}")
            elif kind in ("dir", "cgroup") and Path(e["path"]).exists():
                left.append(f"{kind} {e['path']}")
            elif (kind == "sysctl" and int(Path(e["key"]).read_text()) == e["set"] != e["old"]
                  and not ledger.sysctl_holders(path.parent, e["key"], exclude=path.stem)):
                left.append(f"sysctl {e['key']} still raised to {e['set']}")
    left += [f"process {pid} {cmd}" for (pid, start), cmd in tree.items()
             if ledger.proc_alive(pid, start)]
    return left


def _has_addr(dev: str, addr: str) -> bool:
    out = subprocess.run(["ip", "-o", "addr", "show", "dev", dev], capture_output=True,
                         text=True, check=False).stdout
    return f" {addr} " in out


def assert_nothing_left(books: dict[Path, list[dict]], tree: dict[tuple[int, int], str],
                        timeout: float = 10.0) -> None:
    """Every entry of the killed process's ledgers is undone and every process it had
    started has exited (SIGKILLed processes take a moment to go: polled up to `timeout`)."""
    deadline = time.monotonic() + timeout
    while (left := leftovers(books, tree)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not left, f"left after mcastlab clean: {left}"
