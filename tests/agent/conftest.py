"""Fixtures for the agent tests: the agent binaries and a namespace lab."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from netlab import NetLab

BIN = Path(__file__).resolve().parents[2] / "perftest-wrappers" / "bin"
AGENT = BIN / "perftest_cyclone"
AGENT_ASAN = BIN / "perftest_cyclone_asan"


def _need(path: Path) -> str:
    if not os.access(path, os.X_OK):
        pytest.fail(f"{path} is missing: run ./setup.sh (it builds perftest-wrappers/native)")
    return str(path)


@pytest.fixture(scope="session")
def agent() -> str:
    return _need(AGENT)


@pytest.fixture(scope="session")
def agent_asan() -> str:
    return _need(AGENT_ASAN)


@pytest.fixture
def lab2() -> Iterator[NetLab]:
    with NetLab(2) as lab:
        yield lab


@pytest.fixture
def lab4() -> Iterator[NetLab]:
    with NetLab(4) as lab:
        yield lab
