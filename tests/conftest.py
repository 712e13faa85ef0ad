"""Shared pytest configuration.

A test is a ``netns`` test (needs root: real namespaces, links, bridges and daemons)
exactly when its file's name ends in ``_netns.py``: the marker is added here, nowhere else,
and such tests are skipped when not run as root.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest


@pytest.hookimpl(tryfirst=True)  # before `-m` selects by marker
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.name.endswith("_netns.py"):
            item.add_marker(pytest.mark.netns)
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
