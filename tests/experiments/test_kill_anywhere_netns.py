"""SIGKILL of `mcastlab run` at each phase and at random moments, each followed by
`mcastlab clean` and a resume.

The campaign is the smoke campaign (experiments/smoke.toml: 1x1 and 3x3, unicast and
multicast, 5 s runs on a 4-host LAN) with one capture point (s1-eth1: a 3 s capture window
1 s after full discovery, so every run also has a capture analysis). The real `mcastlab
run` process is started as a user starts it and SIGKILLed:

1. **At each phase, deliberately**, in the campaign's second run (so a finished run
   exists that must survive every kill byte for byte). The phase is recognised from what
   a user can observe, never from a hook inside the runner:

   ============== ===========================================================================
   building       the progress line says "building network" and the runner's ledger
                  (/run/mcastlab, owner = its pid) lists 2 of the 5 node shells
   agents running the progress line says discovery/running and the run's
                  ``.<id>.partial/agents/sub0.stdout`` has an interval row with samples
   capture        the progress line says "analysing captures"
   analysis
   final rename   after that line, the run's manifest (or its temporary file) appears in
                  ``.<id>.partial/``, or the run directory itself: the runner is writing the
                  manifest and renaming ``.<id>.partial`` to ``<id>``. A kill that comes too
                  late (the campaign index already says complete) is tried again at the next
                  run; at least one must land between the manifest and the index update.
   ============== ===========================================================================

2. **At random moments** (``MCASTLAB_KILL_MOMENTS``, default 3 here; 20 for a
   thorough check), drawn from a seeded generator (``MCASTLAB_KILL_SEED``) between
   0.3 and 25 s after the start, wherever they fall. The phase each hit is printed.

After every kill, `mcastlab clean` runs (the real command), then: every entry of the
killed runner's ledgers is undone (processes, namespaces, links, addresses, directories,
cgroups, the ledger itself), every process the runner had started (its whole process tree
just before the kill) has exited, the machine holds no new namespace, link, root-namespace
address, mount or work directory carrying the runner's tags or the test's directory
(compared with a snapshot taken before the test, so other jobs on the machine are not
mistaken for leftovers), and every run that was finished before the kill (its directory
verifies against its manifest's checksums) is unchanged: sha256 and mtime of every file.
A resume then completes the campaign and leaves those runs unchanged too (a campaign that
completes between two random kills is checked that way and a new one started).

3. **While an attempt is set aside to be taken again**, at each of the runner's
   ``KILL_POINTS`` (experiments/runner.py; the runner SIGKILLs itself there when
   ``MCASTLAB_TEST_KILL_AT`` names the point, as the ledger does at its own): the finished
   attempt not judged yet, its record written and the attempt not moved yet, the attempt
   moved. The campaign is one run of the smoke campaign on hosts of 0.4 core whose
   emulator can never be faithful, so attempt 1 is set aside and attempt 2 kept; after
   `mcastlab clean` and a resume the kept run is attempt 2 and names attempt 1, which is
   the only attempt in superseded/, once.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from experiments import results
from experiments.runner import KILL_POINTS
from mcastlab import paths
from tests.helpers.killcheck import (
    assert_nothing_left,
    mcastlab,
    mcastlab_clean,
    process_tree,
    runner_ledgers,
)

pytestmark = pytest.mark.timeout(1800)

SMOKE = paths.EXPERIMENTS_DIR / "smoke.toml"
CAPTURE = """
[capture]
points = ["s1-eth1"]
snaplen = 96
window_settle_s = 1
"""
MOMENTS = int(os.environ.get("MCASTLAB_KILL_MOMENTS", "3"))
SEED = int(os.environ.get("MCASTLAB_KILL_SEED", "20261124"))
PHASES = ("building", "agents running", "capture analysis", "final rename")
TARGET = 1  # the phases are hit in the campaign's second run (index 1)
PROGRESS = re.compile(r"^\[(\d+)/(\d+)\] (\S+): (.*?) \(elapsed ")


# ---- the machine ---------------------------------------------------------------------
def _lines(cmd: list[str]) -> set[str]:
    out = subprocess.run(cmd, capture_output=True, text=True, check=False).stdout
    return {ln.split()[0] for ln in out.splitlines() if ln.strip()}


def _links() -> set[str]:
    out = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True,
                         check=False).stdout
    return {m.group(1).split("@")[0] for m in re.finditer(r"^\d+: ([^:]+):", out, re.M)}


def _addresses() -> set[str]:
    out = subprocess.run(["ip", "-o", "-4", "addr", "show"], capture_output=True, text=True,
                         check=False).stdout
    return {" ".join(ln.split()[1:4]) for ln in out.splitlines()}


def _mounts() -> set[str]:
    return {" ".join(ln.split()[:2]) for ln in Path("/proc/mounts").read_text().splitlines()}


def _testbed_processes() -> set[str]:
    """Processes whose command line names a testbed program (agent, daemon, capture)."""
    names = ("perftest_cyclone", "pimd", "smcroute", "tcpdump", "cyclictest", "mnexec",
             "ovsdb-server", "ovs-vswitchd", "mcastlab-gate")
    found = set()
    for p in Path("/proc").iterdir():
        if not p.name.isdigit():
            continue
        try:
            cmd = (p / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if any(n in cmd for n in names):
            found.add(f"{p.name} {cmd.strip()[:160]}")
    return found


def _work_dirs() -> set[str]:
    tmp = {str(p) for pat in ("mcastlab-*", "mcl-*") for p in Path("/tmp").glob(pat)}
    state = Path(paths.STATE_DIR)
    return tmp | ({str(p) for p in state.glob("*")} if state.exists() else set())


def _snapshot() -> dict[str, set[str]]:
    return {"netns": _lines(["ip", "netns", "list"]), "links": _links(),
            "addresses": _addresses(), "mounts": _mounts(), "processes": _testbed_processes(),
            "work dirs": _work_dirs()}


def _left(before: dict[str, set[str]], marks: set[str]) -> dict[str, set[str]]:
    """What the testbed left: new entries since `before` that carry one of `marks` (the
    killed runners' ledger tags, the results directory), so that other jobs on the machine
    are not mistaken for leftovers (polled a few seconds: SIGKILLed processes take a moment)."""
    deadline = time.monotonic() + 10
    while True:
        now = _snapshot()
        new = {k: {i for i in now[k] - before[k] if any(m in i for m in marks)} for k in now}
        new = {k: v for k, v in new.items() if v}
        if not new or time.monotonic() > deadline:
            return new
        time.sleep(0.2)


# ---- the campaign's runs ---------------------------------------------------------------
def _fingerprint(run_dir: Path) -> dict[str, tuple[str, int]]:
    """sha256 and mtime of every file of a run directory."""
    return {p.relative_to(run_dir).as_posix(): (hashlib.sha256(p.read_bytes()).hexdigest(),
                                                p.stat().st_mtime_ns)
            for p in sorted(run_dir.rglob("*")) if p.is_file()}


def _finished(root: Path) -> dict[str, dict[str, tuple[str, int]]]:
    """Every run directory that verifies against its manifest (what `mcastlab status` and a
    resume take as finished), whatever the index says, with its fingerprint."""
    idx = results.read_json(root / "campaign.json") or {}
    return {r["id"]: _fingerprint(root / r["id"]) for r in idx.get("runs", [])
            if results.verify(root / r["id"])[0]}


def _index_status(root: Path, rid: str) -> str | None:
    idx = results.read_json(root / "campaign.json") or {}
    return next((r["status"] for r in idx.get("runs", []) if r["id"] == rid), None)


# ---- one `mcastlab run` process ----------------------------------------------------------
class Runner:
    """`mcastlab run` as a user starts it; its progress lines (stderr, one per phase when
    not on a terminal) are read as they come."""

    def __init__(self, scenario: Path, root: Path, kill_at: str = "") -> None:
        self.root = root
        self.t0 = time.monotonic()
        env = {**os.environ, "MCASTLAB_TEST_KILL_AT": kill_at} if kill_at else None
        self.proc = subprocess.Popen(mcastlab("run", str(scenario), "--results", str(root)),
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                     text=True, bufsize=1, env=env)
        self.lines: list[str] = []
        self.progress: list[tuple[int, str, str]] = []  # (run index, run id, phase)
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append(line.rstrip("\n"))
            m = PROGRESS.match(line)
            if m:
                self.progress.append((int(m.group(1)) - 1, m.group(3), m.group(4)))

    def phase(self) -> tuple[int, str, str]:
        return self.progress[-1] if self.progress else (-1, "", "starting")

    def run_id(self, index: int) -> str | None:
        return next((rid for i, rid, _ in self.progress if i == index), None)

    def saw(self, index: int, phase: str) -> bool:
        return any(i == index and p.startswith(phase) for i, _, p in self.progress)

    def wait_for(self, what: str, cond: Callable[[], bool], timeout: float = 300,
                 interval: float = 0.005) -> None:
        """Poll `cond()` until true; the runner must still be running."""
        deadline = time.monotonic() + timeout
        while not cond():
            if self.proc.poll() is not None:
                raise AssertionError(f"waiting for {what}: the runner exited with "
                                     f"{self.proc.returncode}:\n" + "\n".join(self.lines[-20:]))
            if time.monotonic() > deadline:
                raise AssertionError(f"waiting for {what}: not after {timeout} s; last "
                                     f"phase {self.phase()}")
            time.sleep(interval)


@dataclass
class Crashes:
    """The state the test carries from kill to kill."""

    scenario: Path
    root: Path
    before: dict[str, set[str]]
    marks: set[str]
    kept: dict[str, dict[str, tuple[str, int]]] = field(default_factory=dict)
    log: list[str] = field(default_factory=list)

    def kill(self, runner: Runner, what: str,
             tree: dict[tuple[int, int], str] | None = None) -> str:
        """SIGKILL the runner now, `mcastlab clean`, check the machine and the finished
        runs. Returns the phase the kill hit (the last progress line before it).

        `tree`: the runner's processes, when read earlier so that the kill comes at once
        (default: read now, which takes a few ms)."""
        pid = runner.proc.pid
        if tree is None:
            tree = process_tree(pid)
        finished = runner.proc.poll() is not None
        runner.proc.kill()
        runner.proc.wait(timeout=30)
        at = time.monotonic() - runner.t0
        runner.reader.join(timeout=2)  # the progress lines it printed before the kill
        if finished:
            assert runner.proc.returncode == 0, "\n".join(runner.lines[-30:])
        books = runner_ledgers(pid)  # a SIGKILLed runner's ledgers stay on disk
        index, _, phase = runner.phase()
        hit = "after the campaign completed" if finished else f"run {index + 1} {phase}"
        self.log.append(f"{what} at {at:.2f} s: {hit}")
        self.marks |= {p.stem for p in books}
        report = mcastlab_clean()
        assert_nothing_left(books, tree)
        left = _left(self.before, self.marks)
        assert not left, f"{what} ({hit}) left {left}\nmcastlab clean said:\n{report}"
        for r, fp in self.kept.items():
            assert _fingerprint(self.root / r) == fp, f"{what} ({hit}): finished run {r} changed"
        self.kept = _finished(self.root)
        return "completed" if finished else phase

    def resume(self) -> None:
        """Run the campaign to its end: it completes, every finished run is unchanged."""
        done = subprocess.run(mcastlab("run", str(self.scenario), "--results", str(self.root),
                                       "--no-progress"),
                              capture_output=True, text=True, timeout=900, check=False)
        assert done.returncode == 0, done.stderr[-3000:]
        idx = json.loads((self.root / "campaign.json").read_text())
        assert {r["status"] for r in idx["runs"]} == {"complete"}
        for rid, fp in self.kept.items():
            assert _fingerprint(self.root / rid) == fp, f"resume changed finished run {rid}"
        for r in idx["runs"]:
            assert results.verify(self.root / r["id"]) == (True, "complete"), r["id"]
        assert not list(self.root.glob(".*.partial")) and not list(self.root.glob(".*.old"))
        assert not _left(self.before, self.marks)


def _scenario(tmp_path: Path) -> Path:
    text = SMOKE.read_text()
    assert "[capture]" not in text
    path = tmp_path / "smoke.toml"
    path.write_text(text + CAPTURE)
    return path


def _shells(pid: int) -> int:
    return sum(1 for entries in runner_ledgers(pid).values() for e in entries
               if e["kind"] == "proc" and e["what"] == "shell")


def _has_samples(stdout: Path) -> bool:
    try:
        text = stdout.read_text(errors="replace")
    except OSError:
        return False
    for line in text.splitlines():
        cols = [c.strip() for c in line.split(",")]
        if len(cols) > 1 and cols[0].isdigit() and cols[1].isdigit() and int(cols[1]) > 0:
            return True
    return False


def _finishing(root: Path, rid: str) -> bool:
    """The runner is writing the manifest of `rid` or renaming its directory."""
    work = root / f".{rid}.partial"
    try:
        names = os.listdir(work)
    except OSError:
        return (root / rid).is_dir()
    return "manifest.json" in names or any(n.startswith(".manifest.json.") for n in names)


def _finish_state(root: Path, rid: str) -> str:
    """Where in the final step a kill landed, from the files it left."""
    work = root / f".{rid}.partial"
    if _index_status(root, rid) == "complete":
        return "too late: the index already says complete"
    if (work / "manifest.json").exists():
        return "manifest written, directory not renamed yet"
    if work.is_dir():
        return "writing the manifest"
    if (root / rid / "manifest.json").exists():
        return "directory renamed, index not updated yet"
    return "unknown"


def _kill_at_phases(c: Crashes) -> None:
    # building: 2 of the 5 node shells recorded, convergence not reached
    r = Runner(c.scenario, c.root)
    r.wait_for("building", lambda: r.saw(TARGET, "building network") and _shells(r.proc.pid) >= 2)
    assert not r.saw(TARGET, "waiting for convergence"), r.progress[-3:]
    assert c.kill(r, "kill at building") == "building network"
    assert c.kept, "the first run should have finished before the second was built"
    # agents running: data flows (an interval row with samples from subscriber 0)
    r = Runner(c.scenario, c.root)
    r.wait_for("agents running", lambda: (
        r.phase()[0] == TARGET and r.phase()[2].startswith(("discovery", "running"))
        and _has_samples(c.root / f".{r.run_id(TARGET)}.partial" / "agents" / "sub0.stdout")))
    # every agent of the run is in the runner's ledger before it is killed
    rid = r.run_id(TARGET)
    cfg = next(x["config"] for x in results.read_json(c.root / "campaign.json")["runs"]
               if x["id"] == rid)
    agents = [e for entries in runner_ledgers(r.proc.pid).values() for e in entries
              if e["kind"] == "proc" and e["what"] == "perftest_cyclone"]
    assert len(agents) == cfg["publishers"] + cfg["subscribers"], agents
    phase = c.kill(r, "kill with agents running")
    assert phase.startswith(("discovery", "running")), phase
    # capture analysis: the run's pcaps are being dissected
    r = Runner(c.scenario, c.root)
    r.wait_for("parsing outputs", lambda: r.saw(TARGET, "parsing outputs"))
    tree = process_tree(r.proc.pid)  # the network is down: nothing starts from here on
    r.wait_for("capture analysis", lambda: r.saw(TARGET, "analysing captures"), interval=0.001)
    rid = r.run_id(TARGET)
    assert rid is not None
    phase = c.kill(r, "kill in capture analysis", tree)
    assert phase == "analysing captures", phase
    assert not (c.root / f".{rid}.partial" / "manifest.json").exists()
    assert not (c.root / rid).exists(), "the run was finished: the kill came too late"
    # final rename: manifest being written / written / directory renamed, index not updated
    states = []
    for index in range(TARGET, len(json.loads((c.root / "campaign.json").read_text())["runs"])):
        r = Runner(c.scenario, c.root)
        r.wait_for(f"run {index + 1}'s capture analysis",
                   lambda r=r, i=index: r.saw(i, "analysing"))
        rid = r.run_id(index)
        assert rid is not None
        tree = process_tree(r.proc.pid)  # the network is down: nothing starts from here on
        r.wait_for(f"run {index + 1}'s manifest", lambda rid=rid: _finishing(c.root, rid),
                   interval=0.0002)
        c.kill(r, f"kill in run {index + 1}'s final rename", tree)
        states.append(state := _finish_state(c.root, rid))
        c.log[-1] += f" -> {state}"
        if not state.startswith("too late"):
            break  # else too late: try the next run's final step
    assert not states[-1].startswith(("too late", "unknown")), states
    if states[-1] == "directory renamed, index not updated yet":
        assert rid in c.kept, "a renamed run with its manifest is finished: resume keeps it"


def test_sigkill_at_each_phase_and_at_random_moments_then_clean_then_resume(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    if not os.access(paths.NATIVE_AGENT, os.X_OK):
        pytest.fail(f"{paths.NATIVE_AGENT} is not built (run ./setup.sh)")
    scenario = _scenario(tmp_path)
    c = Crashes(scenario, tmp_path / "smoke0", _snapshot(), {str(tmp_path)})
    t0 = time.monotonic()
    _kill_at_phases(c)
    t_phases = time.monotonic() - t0
    rng = random.Random(SEED)
    moments = [round(rng.uniform(0.3, 25.0), 2) for _ in range(MOMENTS)]
    campaigns, killed = 1, 0
    for i, delay in enumerate(moments):
        r = Runner(scenario, c.root)
        time.sleep(delay)  # the random moment itself is what is tested
        phase = c.kill(r, f"random kill {i + 1} ({delay} s)")
        killed += phase != "completed"
        if phase == "completed":  # this campaign completed: the next kills hit a new one
            c.resume()
            c.root = tmp_path / f"smoke{campaigns}"
            c.kept = {}
            campaigns += 1
    c.resume()
    with capsys.disabled():
        print(f"\n[kill anywhere] seed {SEED}, moments {moments}; {campaigns} campaign(s); "
              f"phase kills {t_phases:.0f} s, all {time.monotonic() - t0:.0f} s")
        print("\n".join(f"  {line}" for line in c.log))
    assert killed >= len(moments) // 2, c.log


def _retake_scenario(tmp_path: Path) -> Path:
    """The smoke campaign's 1x1 unicast run on hosts of 0.4 core whose emulator is never
    faithful (the timer outside the hosts must wake within 1 µs): attempt 1 is set aside,
    attempt 2, the last of retries = 1, is kept host-bound."""
    text = SMOKE.read_text()
    for old, new in (("querier = false }", "querier = false, cpu = 0.4 }"),
                     ("participants = [1, 3]", "participants = [1]"),
                     ('modes = ["unicast", "multicast"]', 'modes = ["unicast"]')):
        assert old in text, old
        text = text.replace(old, new)
    assert "retries = 1" in text and "[fidelity]" not in text
    path = tmp_path / "retake.toml"
    path.write_text(text + "\n[fidelity]\nmax_plane_wakeup_p99_us = 1\n")
    return path


@pytest.mark.parametrize("point", KILL_POINTS)
def test_sigkill_while_an_attempt_is_set_aside_then_clean_then_resume(
        tmp_path: Path, point: str) -> None:
    if not os.access(paths.NATIVE_AGENT, os.X_OK):
        pytest.fail(f"{paths.NATIVE_AGENT} is not built (run ./setup.sh)")
    scenario = _retake_scenario(tmp_path)
    c = Crashes(scenario, tmp_path / "retake", _snapshot(), {str(tmp_path)})
    r = Runner(scenario, c.root, kill_at=point)
    assert r.proc.wait(timeout=300) == -signal.SIGKILL, "\n".join(r.lines[-20:])
    r.reader.join(timeout=5)
    assert r.saw(0, "tearing down"), r.progress[-3:]  # attempt 1 ran to its end
    books = runner_ledgers(r.proc.pid)
    c.marks |= {p.stem for p in books}
    report = mcastlab_clean()
    assert_nothing_left(books, {})
    assert not _left(c.before, c.marks), report
    c.resume()  # nothing kept: a finished attempt 1 is set aside by the resume
    (entry,) = results.read_json(c.root / "campaign.json")["runs"]
    rid = entry["id"]
    kept = results.read_json(c.root / rid / "manifest.json")
    assert (kept["attempt"], kept["tries"], kept["fidelity"]["bound"]) == (2, 2, "host")
    (aside,) = kept["retaken"]
    assert aside["attempt"] == 1 and any("timer wake-up" in w for w in aside["why"]), aside
    (moved,) = (c.root / "superseded").glob("*/*")
    assert (moved.name, moved.parent.name) == (rid, aside["superseded"])
    assert results.read_json(moved / "manifest.json")["attempt"] == 1
    assert [p.name for p in (c.root / "superseded").iterdir()] == [aside["superseded"]]
    assert "retaken" not in entry and entry["status"] == "complete"
