"""The runner takes again a run host-bound for steal time alone (``max_steal_share`` set),
within the campaign's ``retries``, keeping each slowed attempt in ``superseded/`` (no root:
the run itself is replaced by one that writes, and returns, a manifest with the fidelity it
is given)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from experiments import fidelity, results
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
    runner = CampaignRunner(path, tmp_path / "res", progress=False)
    runner.root.mkdir()
    cfg = runner.runs[0]
    index = results.CampaignIndex(runner.root, "steal", str(path))
    index.set_runs(runner.all_runs)
    attempts: list[int] = []

    def run_one(cfg: dict[str, Any], prog: Progress, attempt: int = 1) -> dict[str, Any]:
        final = results.run_dir(runner.root, cfg["run_id"])
        assert not final.exists()  # the slowed attempt was moved, not overwritten
        final.mkdir()
        manifest = {"run_id": cfg["run_id"], "attempt": attempt, "status": "complete",
                    "fidelity": steals[attempt - 1]}
        results.write_manifest(final, manifest)
        attempts.append(attempt)
        return manifest

    runner.run_one = run_one  # type: ignore[method-assign]
    with Progress(1, [1.0], enabled=False) as prog:
        status = runner._run_with_retries(cfg, index, prog)
    return runner, cfg["run_id"], status, attempts


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


def test_a_run_that_failed_another_check_too_is_not_taken_again(tmp_path: Path) -> None:
    """A starved host is the emulator's failure, a finding of the run: recorded as is."""
    runner, rid, status, attempts = _campaign(tmp_path, 2, [_fid(0.09, shortfall=0.3)])
    assert (status, attempts) == ("complete", [1])
    assert _manifest(runner.root / rid)["fidelity"]["bound"] == "host"
    assert not (runner.root / "superseded").exists()
