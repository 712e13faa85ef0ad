"""The ledger's process handling and `clean` on ledgers written by hand (no root)."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

from mcastlab import ledger


def test_ledger_never_signals_a_recycled_pid(tmp_path: Path) -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        start = ledger.proc_start_time(child.pid)
        assert start is not None and ledger.proc_alive(child.pid, start)
        # Same pid, different start time: it is not the recorded process, so it survives.
        assert not ledger.signal_recorded(child.pid, start + 1, signal.SIGKILL)
        assert child.poll() is None
        ledger.stop_recorded(child.pid, start)
        # Ended by stop_recorded's SIGTERM: had the first call sent its SIGKILL, that
        # (pending before the SIGTERM) would have ended it instead.
        assert child.wait(timeout=5) == -signal.SIGTERM
    finally:
        if child.poll() is None:
            child.kill()


def test_clean_removes_dead_owners_entries_and_skips_live_ones(tmp_path: Path) -> None:
    live = ledger.Ledger.create(tmp_path)  # owned by this (live) test process
    victim = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    dead_owner = subprocess.Popen([sys.executable, "-c", "pass"])
    dead_owner.wait()
    try:
        path = tmp_path / "mzzz.ledger"
        path.write_text(
            f'{{"kind": "owner", "tag": "mzzz", "pid": {dead_owner.pid}, "start": 1}}\n'
            f'{{"kind": "proc", "pid": {victim.pid}, '
            f'"start": {ledger.proc_start_time(victim.pid)}, "node": "h1", "what": "sleep"}}\n'
            '{"kind": "proc", "pid": 1, "start": 999999999, "node": "h2", "what": "recycled"}\n'
            '{"kind": "link", "na'  # torn last line, as after SIGKILL mid-write
        )
        report = ledger.clean(tmp_path)
        assert victim.wait(timeout=5) == -signal.SIGTERM  # stopped by its recorded pid
        assert not path.exists() and live.path.exists()
        assert any("owner still running" in line for line in report)
        assert not any("recycled" in line for line in report)  # pid 1 was never signalled
    finally:
        if victim.poll() is None:
            victim.kill()
        live.path.unlink()


def test_undo_returns_only_once_its_killed_processes_are_gone(tmp_path: Path) -> None:
    """SIGKILL returns before its target is gone, and a process holding much memory takes a
    while to free it: undo waits, since the ledger naming the process is removed next."""
    big = subprocess.Popen(
        [sys.executable, "-c", "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN)"
         "; b = b'x' * (1 << 30); print('ready', flush=True); time.sleep(60)"],
        stdout=subprocess.PIPE, text=True)
    try:
        assert big.stdout is not None and big.stdout.readline() == "ready\n"
        start = ledger.proc_start_time(big.pid)
        assert start is not None
        entry = {"kind": "proc", "pid": big.pid, "start": start, "node": "h1", "what": "daemon"}
        lines, pending = ledger.undo([entry], "mzzz", tmp_path)
        assert not ledger.proc_alive(big.pid, start), "undo returned before its process was gone"
        assert lines == [f"stopped daemon pid {big.pid} on h1",
                         f"killed daemon pid {big.pid} on h1"]
        assert pending == [] and big.wait(timeout=5) == -signal.SIGKILL
    finally:
        if big.poll() is None:
            big.kill()


def test_a_cgroup_that_could_not_be_removed_stays_in_the_ledger(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A cgroup whose rmdir fails (here: a plain directory not empty, as a cgroup with a
    process left in it) is said so and kept in the ledger, the owner marked released, until
    a later clean removes it; "removed cgroup" only for one that is gone."""
    fs = tmp_path / "cgroup"
    parent, host = fs / "cpu" / "mcastlab-mzzz", fs / "cpu" / "mcastlab-mzzz" / "h1"
    host.mkdir(parents=True)
    (host / "cgroup.procs").write_text("4242\n")  # rmdir fails: the directory is not empty
    monkeypatch.setattr(ledger, "CGROUP_FS", f"{fs}/")
    monkeypatch.setattr(ledger, "RMDIR_WAIT_S", 0.1)
    state = tmp_path / "state"
    state.mkdir()
    path = state / "mzzz.ledger"
    path.write_text('{"kind": "owner", "tag": "mzzz", "pid": 1, "start": 1}\n'
                    f'{{"kind": "cgroup", "path": "{parent}"}}\n'
                    f'{{"kind": "cgroup", "path": "{host}"}}\n')
    report = ledger.clean(state)
    assert not any("removed cgroup" in line for line in report), report
    assert f"mzzz: cgroup {host} not removed (Directory not empty): kept in the ledger" in report
    assert report[-1] == (f"mzzz: ledger {path} kept for cgroup {parent}, cgroup {host}, not "
                          "cleaned: run `mcastlab clean --tag mzzz` once no process is left "
                          "in them")
    kept = ledger.read_ledger(path)
    assert kept[0]["kind"] == "owner" and kept[0]["released"]
    assert [e["path"] for e in kept[1:]] == [str(parent), str(host)]  # the ledger's order
    (host / "cgroup.procs").unlink()  # the process left
    report = ledger.clean(state)
    assert report == [f"mzzz: removed cgroup {host}", f"mzzz: removed cgroup {parent}",
                      "mzzz: ledger removed"]
    assert not parent.exists() and not path.exists()


def test_a_private_shm_directory_goes_with_its_ledger_and_nothing_beside_it(
        tmp_path: Path) -> None:
    """make_shm_dir (a lab's /dev/shm, here under tmp_path): fresh, private, named with the
    tag and recorded; cleaning the ledger removes it with what was left in it (a killed
    Fast DDS participant's segment) and leaves the other files of its parent alone."""
    shm = tmp_path / "shm"
    shm.mkdir()
    foreign = shm / "fastrtps_0123456789abcdef"  # another program's segment
    foreign.write_bytes(b"x")
    led = ledger.Ledger.create(tmp_path / "state")
    private = led.make_shm_dir(parent=shm)
    assert private.parent == shm and private.name.startswith(f"mcastlab-{led.tag}-shm-")
    assert private.stat().st_mode & 0o777 == 0o700
    assert {"kind": "dir", "path": str(private)} in ledger.read_ledger(led.path)
    (private / "fastrtps_fedcba9876543210").write_bytes(b"x" * 4096)
    (private / "fastrtps_fedcba9876543210_el").touch()
    report = ledger.clean(tmp_path / "state", include_live=True)
    assert f"{led.tag}: removed {private}" in report
    assert not private.exists() and not led.path.exists()
    assert sorted(shm.iterdir()) == [foreign]
