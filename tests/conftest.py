"""Shared pytest configuration: tests marked ``netns`` need root (real namespaces)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if os.geteuid() == 0:
        return
    skip = pytest.mark.skip(reason="netns test: needs root to build namespaces, links and daemons")
    for item in items:
        if "netns" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    """A per-test work directory for a network's daemon configs and logs."""
    d = tmp_path / "logs"
    d.mkdir()
    return d
