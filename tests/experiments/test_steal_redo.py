"""The runner takes again a run host-bound for steal time alone (``max_steal_share`` set),
or a run of CPU-limited hosts whose emulation was unfaithful, within the campaign's
``retries``, keeping each such attempt in ``superseded/`` and naming it in the kept run's
manifest (no root: the run itself is replaced by one that writes, and returns, a manifest
with the fidelity it is given)."""

from __future__ import annotations

import json
import os
import shutil
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from experiments import fidelity, quiet, results
from experiments import runner as runner_mod
from experiments.progress import Progress
from experiments.runner import CampaignRunner

SCENARIO = """[campaign]
name = "steal"
retries = {retries}
[topology]
name = "lan"
params = {{ hosts = 2, cpu = 0.4 }}
[matrix]
participants = [1]
modes = ["unicast"]
execution_time = 4
[fidelity]
max_steal_share = 0.02
"""


def _fid(steal: float, shortfall: float = 0.0) -> dict[str, Any]:
    th = fidelity.Thresholds.from_dict({"max_steal_share": 0.02})
    metrics = {"throttled_share": 0.98, "shortfall_share": shortfall, "steal_share": steal}
    bound, emulator, saturation = fidelity.judge_limited(metrics, th)
    return {"bound": bound, "metrics": metrics, "thresholds": th.model_dump(),
            "reasons": emulator, "saturation": saturation,
            "emulator": {"faithful": not emulator, "reasons": emulator}}


def _campaign(tmp_path: Path, retries: int, steals: list[dict[str, Any]]
              ) -> tuple[CampaignRunner, str, str, list[int]]:
    path = tmp_path / "steal.toml"
    path.write_text(SCENARIO.format(retries=retries))
    attempts: list[int] = []
    runner, index = _runner(path, tmp_path, lambda attempt: steals[attempt - 1], attempts)
    cfg = runner.runs[0]
    with Progress(1, [1.0], enabled=False) as prog:
        status = runner._run_with_retries(cfg, index, prog)
    return runner, cfg["run_id"], status, attempts


def _runner(path: Path, tmp_path: Path, fid_of: Callable[[int], dict[str, Any]],
            attempts: list[int]) -> tuple[CampaignRunner, results.CampaignIndex]:
    """A runner of the scenario at ``path`` (started, or resumed from its campaign index)
    whose run is replaced by one that writes a manifest with attempt N's fidelity
    ``fid_of(N)`` and appends N to ``attempts``; ``fid_of`` may raise instead."""
    runner = CampaignRunner(path, tmp_path / "res", progress=False)
    runner.root.mkdir(exist_ok=True)
    runner.await_quiet = lambda **_: quiet.Waited(True, 5.0, 0.01, 1)
    index = results.CampaignIndex(runner.root, "steal", str(path))
    index.set_runs(runner.all_runs)

    def run_one(cfg: dict[str, Any], prog: Progress, attempt: int = 1,
                retaken: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        fid = fid_of(attempt)
        final = results.run_dir(runner.root, cfg["run_id"])
        assert not final.exists()  # the slowed attempt was moved, not overwritten
        final.mkdir()
        results.atomic_write_json(final / "config.json", cfg)
        manifest = {"run_id": cfg["run_id"], "attempt": attempt, "status": "complete",
                    "tries": 1 + runner.sc.campaign.retries, "fidelity": fid,
                    **({"retaken": list(retaken)} if retaken else {})}
        results.write_manifest(final, manifest)
        attempts.append(attempt)
        return manifest

    runner.run_one = run_one  # type: ignore[method-assign]
    return runner, index


def _manifest(d: Path) -> dict[str, Any]:
    return json.loads((d / "manifest.json").read_text())


def test_a_run_slowed_by_steal_is_taken_again_and_kept(tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]
                                                       ) -> None:
    runner, rid, status, attempts = _campaign(tmp_path, 2, [_fid(0.09), _fid(0.05),
                                                            _fid(0.004)])
    assert (status, attempts) == ("complete", [1, 2, 3])
    assert _manifest(runner.root / rid)["fidelity"]["bound"] == "saturated"
    kept = sorted((runner.root / "superseded").glob(f"*/{rid}"))
    assert [_manifest(d)["attempt"] for d in kept] == [1, 2]  # nothing lost
    assert [_manifest(d)["fidelity"]["metrics"]["steal_share"] for d in kept] == [0.09, 0.05]
    out = capsys.readouterr().out
    assert "steal time: " + rid + " moved to" in out
    idx = {r["id"]: r for r in results.read_json(runner.root / "campaign.json")["runs"]}
    assert (idx[rid]["status"], idx[rid]["attempts"]) == ("complete", 3)


def test_the_last_attempt_is_kept_host_bound(tmp_path: Path) -> None:
    runner, rid, status, attempts = _campaign(tmp_path, 1, [_fid(0.09), _fid(0.08)])
    assert (status, attempts) == ("complete", [1, 2])
    fid = _manifest(runner.root / rid)["fidelity"]
    assert fid["bound"] == "host" and fid["metrics"]["steal_share"] == 0.08
    assert len(list((runner.root / "superseded").glob(f"*/{rid}"))) == 1


def test_an_unfaithful_emulation_is_taken_again_and_named(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]
                                                          ) -> None:
    """A host starved of its allocation (with steal or without): the run says nothing
    about the modes; the attempt is kept in superseded/ and named in the kept run."""
    runner, rid, status, attempts = _campaign(
        tmp_path, 2, [_fid(0.09, shortfall=0.3), _fid(0.0, shortfall=0.25), _fid(0.0)])
    assert (status, attempts) == ("complete", [1, 2, 3])
    kept_run = _manifest(runner.root / rid)
    assert kept_run["fidelity"]["bound"] == "saturated"
    retaken = kept_run["retaken"]
    assert [r["attempt"] for r in retaken] == [1, 2]
    assert all(any("allocation" in w for w in r["why"]) for r in retaken), retaken
    kept = sorted((runner.root / "superseded").glob(f"*/{rid}"))
    assert [d.parent.name for d in kept] == [r["superseded"] for r in retaken]
    assert [_manifest(d)["fidelity"]["bound"] for d in kept] == ["host", "host"]
    cap = capsys.readouterr()
    out = " ".join((cap.out + cap.err).split())  # as one text, however wrapped
    assert "unfaithful emulation: " + rid + " moved to" in out
    assert "the emulator did not keep its promise" in out


def test_the_last_unfaithful_attempt_is_kept_host_bound(tmp_path: Path) -> None:
    runner, rid, status, attempts = _campaign(tmp_path, 1, [_fid(0.0, shortfall=0.3),
                                                            _fid(0.0, shortfall=0.2)])
    assert (status, attempts) == ("complete", [1, 2])
    kept_run = _manifest(runner.root / rid)
    assert kept_run["fidelity"]["bound"] == "host" and len(kept_run["retaken"]) == 1


def test_busy_unlimited_hosts_are_a_finding_not_taken_again(tmp_path: Path) -> None:
    """Without CPU limits, host-bound means the hosts were busy: a property of the
    configuration, recorded as is."""
    th = fidelity.Thresholds.from_dict(None)
    metrics = {"socket_drop_share": 0.18}
    bound, reasons = fidelity.judge(metrics, th)
    assert bound == "host"
    fid = {"bound": bound, "metrics": metrics, "thresholds": th.model_dump(),
           "reasons": reasons}
    runner, rid, status, attempts = _campaign(tmp_path, 2, [fid])
    assert (status, attempts) == ("complete", [1])
    assert "retaken" not in _manifest(runner.root / rid)
    assert not (runner.root / "superseded").exists()


def test_an_attempt_set_aside_before_an_interruption_is_named_after_the_resume(
        tmp_path: Path) -> None:
    """Attempt 1 unfaithful and set aside, attempt 2 interrupted (Ctrl-C, or the machine
    went down): the resumed campaign goes on with attempt 2, within the same retries, and
    the run it keeps still names attempt 1 in superseded/."""
    path = tmp_path / "steal.toml"
    path.write_text(SCENARIO.format(retries=1))
    fids = {1: _fid(0.0, shortfall=0.3), 2: _fid(0.0)}
    interrupted = [True]
    attempts: list[int] = []

    def fid_of(attempt: int) -> dict[str, Any]:
        if attempt == 2 and interrupted[0]:
            interrupted[0] = False
            raise runner_mod._Interrupted("SIGINT")
        return fids[attempt]

    runner, index = _runner(path, tmp_path, fid_of, attempts)
    rid = runner.runs[0]["run_id"]
    with Progress(1, [1.0], enabled=False) as prog, pytest.raises(runner_mod._Interrupted):
        runner._run_with_retries(runner.runs[0], index, prog)
    # the campaign resumed: a new runner, and the index read from disk
    runner, index = _runner(path, tmp_path, fid_of, attempts)
    with Progress(1, [1.0], enabled=False) as prog:
        assert runner._run_with_retries(runner.runs[0], index, prog) == "complete"
    kept_run = _manifest(runner.root / rid)
    assert (kept_run["attempt"], kept_run["fidelity"]["bound"]) == (2, "saturated")
    (aside,) = kept_run["retaken"]
    assert aside["attempt"] == 1 and any("allocation" in w for w in aside["why"]), aside
    (kept,) = (runner.root / "superseded").glob(f"*/{rid}")
    assert kept.parent.name == aside["superseded"] and _manifest(kept)["attempt"] == 1


def test_a_retake_after_steal_waits_for_the_hypervisor_and_says_so(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An attempt set aside with more than quiet.QUIET_SHARE steal is taken again only
    after the runner waited for a quieter hypervisor (bounded; said in the log either way);
    one set aside without such steal is taken again at once."""
    path = tmp_path / "steal.toml"
    path.write_text(SCENARIO.format(retries=3))
    fids = [_fid(0.3), _fid(0.0, shortfall=0.3), _fid(0.09), _fid(0.0)]
    attempts: list[int] = []
    runner, index = _runner(path, tmp_path, lambda a: fids[a - 1], attempts)
    waits = iter([quiet.Waited(True, 35.0, 0.012, 7), quiet.Waited(False, 120.0, 0.21, 24)])
    called: list[int] = []

    def await_quiet(**kw: Any) -> quiet.Waited:
        assert callable(kw["on_probe"])
        called.append(len(attempts))
        return next(waits)

    runner.await_quiet = await_quiet
    with Progress(1, [1.0], enabled=False) as prog:
        status = runner._run_with_retries(runner.runs[0], index, prog)
    assert (status, attempts, called) == ("complete", [1, 2, 3, 4], [1, 3])
    err = capsys.readouterr().err
    assert "took 1.2% of a CPU in a 5 s probe after 35 s of waiting" in err
    assert "still took 21.0% of a CPU after 120 s of waiting: taking the run again all" in err


@pytest.mark.parametrize("how", ["--redo", "directory removed"])
def test_a_run_made_again_does_not_inherit_the_retakes_of_the_run_it_replaces(
        tmp_path: Path, how: str) -> None:
    """A run taken again once and complete, then made again (``--redo`` after a change of
    configuration, or its directory removed by hand): the new run starts at attempt 1
    with no ``retaken``, in its manifest and in the index; the old one is not its
    attempt, and it was made under other settings."""
    path = tmp_path / "steal.toml"
    path.write_text(SCENARIO.format(retries=1))
    fids = [_fid(0.0, shortfall=0.3), _fid(0.0)]
    attempts: list[int] = []
    runner, index = _runner(path, tmp_path, lambda a: fids[a - 1], attempts)
    rid = runner.runs[0]["run_id"]
    with Progress(1, [1.0], enabled=False) as prog:
        assert runner._run_with_retries(runner.runs[0], index, prog) == "complete"
    assert attempts == [1, 2] and len(_manifest(runner.root / rid)["retaken"]) == 1
    if how == "directory removed":
        shutil.rmtree(runner.root / rid)
    else:  # a configuration that changes results: --redo makes the run again
        path.write_text(path.read_text().replace("execution_time = 4", "execution_time = 5"))
    runner, _ = _runner(path, tmp_path, lambda a: _fid(0.0), attempts)
    runner.redo = how == "--redo"
    assert runner.run() == 0
    assert attempts == [1, 2, 1]
    made = _manifest(runner.root / rid)
    assert made["attempt"] == 1 and "retaken" not in made
    (entry,) = results.read_json(runner.root / "campaign.json")["runs"]
    assert (entry["status"], entry["attempts"]) == ("complete", 1)
    assert "retaken" not in entry


def _killed_then_resumed(tmp_path: Path, point: str, fid_of: Callable[[int], dict[str, Any]]
                         ) -> tuple[CampaignRunner, str, list[int]]:
    """`mcastlab run` SIGKILLed at ``point`` (runner.KILL_POINTS, in a forked copy of this
    process, as tests/experiments/test_kill_anywhere_netns.py does to the real command),
    then run again to its end; returns the second runner, the run id and the attempts the
    second one made."""
    path = tmp_path / "steal.toml"
    path.write_text(SCENARIO.format(retries=2))
    pid = os.fork()
    if pid == 0:  # the runner to kill; it must never return into pytest
        code = 1
        try:
            os.environ["MCASTLAB_TEST_KILL_AT"] = point
            runner, _ = _runner(path, tmp_path, fid_of, [])
            runner.run()
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL, (
        f"the runner was not killed at {point} (wait status {status})")
    attempts: list[int] = []
    runner, _ = _runner(path, tmp_path, fid_of, attempts)
    assert runner.run() == 0
    return runner, runner.runs[0]["run_id"], attempts


@pytest.mark.parametrize("point", runner_mod.KILL_POINTS)
def test_a_kill_while_an_attempt_is_set_aside_loses_no_record(tmp_path: Path,
                                                              point: str) -> None:
    """SIGKILL after attempt 1 (unfaithful) finished and before it was judged, after its
    record was written and before it moved, or after it moved: the resumed campaign goes
    on with attempt 2, and every attempt in superseded/ is named exactly once, by the kept
    run's manifest, with the folder that holds it."""
    fids = [_fid(0.0, shortfall=0.3), _fid(0.09), _fid(0.0)]
    runner, rid, attempts = _killed_then_resumed(tmp_path, point, lambda a: fids[a - 1])
    assert attempts == [2, 3]
    kept_run = _manifest(runner.root / rid)
    assert kept_run["attempt"] == 3
    named = [(r["attempt"], r["superseded"]) for r in kept_run["retaken"]]
    found = sorted((_manifest(d)["attempt"], d.parent.name)
                   for d in (runner.root / "superseded").glob("*/*"))
    assert named == found and [a for a, _ in named] == [1, 2], (named, found)
    assert all(any(d.iterdir()) for d in (runner.root / "superseded").iterdir())
    (entry,) = results.read_json(runner.root / "campaign.json")["runs"]
    assert entry["status"] == "complete" and "retaken" not in entry
