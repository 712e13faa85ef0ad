"""No shared memory of a killed Fast DDS agent is left in the machine's /dev/shm.

A Fast DDS participant (-transport SHMEM: shared memory only) creates its segments and
their lock files in /dev/shm (``fastrtps_<id>``, ``fastrtps_<id>_el``, port files) and
removes them only in its DDS teardown, which a SIGKILL prevents and a SIGTERM skips (the
agent's "DDS teardown skipped"). Emulated hosts have a tmpfs of their own on /dev/shm;
the tests' `ip netns` labs (tests/helpers/netlab.py) give their processes the ledger's
directory as /dev/shm (mcastlab/ledger.py, make_shm_dir), and so does captures/minilab.py
(checked with probe files). Two cases, a publisher and a subscriber exchanging over shared
memory on one lab host:

- both SIGKILLed, then the lab closed as a failing test closes it;
- the process owning the lab SIGKILLed, then `mcastlab clean` (which stops the agents).

Each time, none of the files the agents had open or mapped on /dev/shm's file system (by
device and inode: another user's files there are not looked at) may be left.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mcastlab.paths import REPO_ROOT
from tests.helpers.agentkinds import AGENTS
from tests.helpers.killcheck import (
    assert_nothing_left,
    mcastlab_clean,
    process_tree,
    runner_ledgers,
)
from tests.helpers.netlab import NetLab

pytestmark = pytest.mark.timeout(120)

FASTDDS = AGENTS["fastdds"].binary


def _agent() -> str:
    if not os.access(FASTDDS, os.X_OK):
        pytest.fail(f"{FASTDDS} is missing: run ./setup.sh (it builds "
                    f"{AGENTS['fastdds'].source})")
    return str(FASTDDS)


def _argvs(agent: str) -> list[list[str]]:
    """A subscriber and a publisher (60 s) on one host, over shared memory only."""
    common = ["-transport", "SHMEM", "-noPrintConfig", "-nic", "eth0"]
    return [[agent, "-sub", *common],
            [agent, "-pub", "-executionTime", "60", "-latencyCount", "100", *common]]


def _shm_files(pid: int) -> set[tuple[int, int]]:
    """(device, inode) of the files on /dev/shm's file system that `pid` has mapped or
    open, whatever path its own mount namespace gives them."""
    shm_dev = os.stat("/dev/shm").st_dev
    found = set()
    for line in Path(f"/proc/{pid}/maps").read_text().splitlines():
        fields = line.split()
        major, minor = (int(x, 16) for x in fields[3].split(":"))
        if os.makedev(major, minor) == shm_dev and int(fields[4]):
            found.add((shm_dev, int(fields[4])))
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            st = os.stat(fd)
        except OSError:
            continue
        if st.st_dev == shm_dev:
            found.add((st.st_dev, st.st_ino))
    return found


def _segments_of(pids: list[int], timeout: float = 20) -> set[tuple[int, int]]:
    """The agents' /dev/shm files once each has some (both participants made theirs)."""
    deadline = time.monotonic() + timeout
    while True:
        per_pid = [_shm_files(p) for p in pids]
        if all(per_pid):
            time.sleep(1)  # discovery: each maps the other's port segment too
            return set().union(*(_shm_files(p) for p in pids))
        assert time.monotonic() < deadline, f"no /dev/shm files in agents {pids} after {timeout} s"
        time.sleep(0.1)


def _left_in_dev_shm(files: set[tuple[int, int]]) -> list[str]:
    """Paths under /dev/shm that are still one of `files`."""
    left = []
    for top, _, names in os.walk("/dev/shm"):
        for name in names:
            path = os.path.join(top, name)
            try:
                st = os.lstat(path)
            except OSError:
                continue
            if (st.st_dev, st.st_ino) in files:
                left.append(path)
    return left


def test_sigkilled_agents_leave_no_shared_memory_once_the_lab_closes() -> None:
    agent = _agent()
    with NetLab(1) as lab:
        procs = [lab.popen(0, argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                 for argv in _argvs(agent)]
        files = _segments_of([p.pid for p in procs])
        where = _left_in_dev_shm(files)
        assert where and all(f.startswith(f"{lab.shm}/fastrtps_") for f in where), where
        for p in procs:
            os.kill(p.pid, signal.SIGKILL)
        for p in procs:
            p.wait(timeout=10)
    assert not _left_in_dev_shm(files)
    assert not Path(lab.shm).exists()


OWNER = r"""
import json, subprocess, sys, time
from tests.helpers.netlab import NetLab
lab = NetLab(1).__enter__()
pids = [lab.popen(0, argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).pid
        for argv in json.loads(sys.argv[1])]
print(*pids, flush=True)
time.sleep(600)
"""


def test_sigkill_of_the_labs_owner_then_clean_leaves_no_shared_memory() -> None:
    agent = _agent()
    owner = subprocess.Popen([sys.executable, "-c", OWNER, json.dumps(_argvs(agent))],
                             cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
    try:
        assert owner.stdout is not None
        line = owner.stdout.readline()
        assert line, owner.stderr.read() if owner.stderr else ""
        files = _segments_of([int(x) for x in line.split()])
        tree, books = process_tree(owner.pid), runner_ledgers(owner.pid)
    finally:
        owner.send_signal(signal.SIGKILL)
        owner.wait(timeout=10)
    out = mcastlab_clean()  # SIGTERMs the agents first: they skip their DDS teardown
    assert_nothing_left(books, tree)
    assert not _left_in_dev_shm(files), out


def test_the_captures_minilab_gives_its_processes_the_labs_dev_shm_too() -> None:
    """captures/minilab.py (ddsperf, tcpdump): what its processes put in /dev/shm, started
    by popen or run, is in the lab's directory and goes with the lab."""
    from captures.minilab import BridgeLab

    probe = f"mcastlab-probe-{secrets.token_hex(4)}"
    mine = [Path("/dev/shm", f"{probe}-{how}") for how in ("popen", "run")]
    try:
        with BridgeLab(hosts=1) as lab:
            host = lab.hosts[0]
            done = lab.run(host, ["sh", "-c", f"echo run > /dev/shm/{probe}-run"])
            assert done.returncode == 0, done.stderr
            lab.popen(host, ["sh", "-c", f"echo popen > /dev/shm/{probe}-popen"]).wait(10)
            assert not [p for p in mine if p.exists()]  # not in the machine's /dev/shm
            assert sorted(os.listdir(lab.shm)) == [p.name for p in mine]
        assert not Path(lab.shm).exists()
    finally:
        for p in mine:  # this test's own probe files, had they gone there
            p.unlink(missing_ok=True)
