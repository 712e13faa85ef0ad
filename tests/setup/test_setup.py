"""The installer (setup.sh): its check mode and its refusal of unknown options."""

from __future__ import annotations

import subprocess

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
