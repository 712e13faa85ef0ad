"""The foundation: installer check mode and the command line's entry point."""

from __future__ import annotations

import subprocess
import sys

from mcastlab import cli
from mcastlab.paths import REPO_ROOT


def test_setup_check_reports_nothing_missing_after_setup() -> None:
    # `make test` runs setup.sh first, so by now nothing may be missing.
    proc = subprocess.run(
        ["bash", str(REPO_ROOT / "setup.sh"), "--check"],
        capture_output=True, text=True, check=False,
    )
    assert proc.returncode == 0, proc.stderr


def test_setup_rejects_unknown_option() -> None:
    proc = subprocess.run(
        ["bash", str(REPO_ROOT / "setup.sh"), "--frobnicate"],
        capture_output=True, text=True, check=False,
    )
    assert proc.returncode == 2
    assert "--frobnicate" in proc.stderr and "--check" in proc.stderr


def test_cli_help_lists_every_registered_command() -> None:
    parser = cli.build_parser()
    proc = subprocess.run(
        [sys.executable, "-m", "mcastlab.cli", "--help"], capture_output=True, text=True, check=True
    )
    for action in parser._subparsers._group_actions if parser._subparsers else []:
        for name in getattr(action, "choices", {}) or {}:
            assert name in proc.stdout


def test_cli_without_command_exits_2() -> None:
    assert cli.main([]) == 2
