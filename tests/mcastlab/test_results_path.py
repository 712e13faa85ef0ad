"""The campaign directory: refused when another user could change its path (the walk of
mcastlab/safepath.py, here on layouts this user can make; layouts of other users are in
tests/mcastlab/test_planted_symlinks_netns.py), and what root creates in it is writable by
root only, whatever the umask."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from mcastlab import safepath

SCENARIO = """[campaign]
name = "paths"
[topology]
name = "lan"
params = { hosts = 2 }
[agent]
kind = "ddsperf"
[matrix]
participants = [1]
modes = ["unicast"]
execution_time = 5
"""


def test_a_world_writable_parent_is_named(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    assert safepath.untrusted_writer(shared / "a" / "b") == (
        f"{shared} is writable by every user")


def test_the_campaign_directory_itself_must_not_be_writable_by_others(tmp_path: Path) -> None:
    camp = tmp_path / "camp"
    camp.mkdir()
    camp.chmod(0o757)
    assert safepath.untrusted_writer(camp) == f"{camp} is writable by every user"
    camp.chmod(0o755)
    assert safepath.untrusted_writer(camp) is None


def test_a_sticky_directory_protects_what_is_ours(tmp_path: Path) -> None:
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    tmpdir.chmod(0o1777)
    assert safepath.untrusted_writer(tmpdir / "new" / "camp") is None  # checked once made
    (tmpdir / "mine").mkdir(mode=0o755)
    assert safepath.untrusted_writer(tmpdir / "mine" / "camp") is None


def test_symlinks_and_dotdot_are_followed_as_the_kernel_does(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    safe = tmp_path / "safe"
    (safe / "deep").mkdir(parents=True)
    (safe / "link").symlink_to(shared)
    # through the link the path is under `shared`; `..` after it is shared's parent
    assert safepath.untrusted_writer(safe / "link" / "camp") == (
        f"{shared} is writable by every user")
    assert safepath.untrusted_writer(safe / "link" / ".." / "safe" / "camp") is None
    (safe / "loop").symlink_to(safe / "loop")
    assert "too many levels of symbolic links" in str(
        safepath.untrusted_writer(safe / "loop" / "camp"))
    (safe / "file").write_text("")
    assert safepath.untrusted_writer(safe / "file" / "camp") == (
        f"{safe / 'file'} is not a directory")


def test_check_with_results_refuses_such_a_path(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    from mcastlab.cli import main

    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    scenario = tmp_path / "s.toml"
    scenario.write_text(SCENARIO)
    assert main(["run", str(scenario), "--check", "--results", str(shared / "camp")]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith(f"mcastlab run: {shared / 'camp'}: --results: another user could "
                           f"change this path ({shared} is writable by every user)"), line
    assert main(["run", str(scenario), "--check", "--results", str(tmp_path / "camp")]) == 0


def test_what_the_runner_creates_is_not_writable_by_others(tmp_path: Path) -> None:
    """With umask 000 (a user's shell may have it), the campaign directory and its index
    are still root's alone: another user cannot put anything in them."""
    from experiments.runner import CampaignRunner

    scenario = tmp_path / "s.toml"
    scenario.write_text(SCENARIO)
    root = tmp_path / "res" / "camp"
    old = os.umask(0)
    try:
        runner = CampaignRunner(scenario, root, progress=False, only=["no-such-run"])
        assert runner.run() == 0
    finally:
        os.umask(old)
    for p in (root.parent, root, root / "campaign.json"):
        mode = stat.S_IMODE(p.stat().st_mode)
        assert mode & 0o022 == 0, (p, oct(mode))
