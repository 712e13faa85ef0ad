"""The command line's entry point: its help and its exit status without a command."""

from __future__ import annotations

import subprocess
import sys

from mcastlab import cli


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
