"""Fixtures for the network tests: a per-test work directory for daemon configs and logs."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    d = tmp_path / "logs"
    d.mkdir()
    return d
