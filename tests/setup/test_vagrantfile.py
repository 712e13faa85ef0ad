"""The Vagrantfile: `vagrant validate` when vagrant is installed."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from mcastlab import paths


@pytest.mark.skipif(shutil.which("vagrant") is None, reason="vagrant is not installed")
def test_vagrant_validate() -> None:
    p = subprocess.run(["vagrant", "validate"], cwd=paths.REPO_ROOT, capture_output=True,
                       text=True, timeout=120, check=False)
    assert p.returncode == 0, p.stdout + p.stderr


def test_vagrantfile_declares_the_documented_machine() -> None:
    """Without vagrant: the box, provisioning, defaults and port that docs/usage.md promises."""
    text = (paths.REPO_ROOT / "Vagrantfile").read_text()
    assert 'config.vm.box = "debian/bookworm64"' in text  # Debian 12
    assert "./setup.sh" in text
    assert 'ENV.fetch("MCASTLAB_CPUS", "4")' in text
    assert 'ENV.fetch("MCASTLAB_MEMORY", "8192")' in text  # 8 GiB
    assert "guest: 8888" in text and 'synced_folder ".", "/mcastlab"' in text
