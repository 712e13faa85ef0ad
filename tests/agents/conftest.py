"""Fixtures for the agent tests: the agent binaries, per agent, and a namespace lab.

The agents share one contract (perftest-wrappers/native/README.md): the native agent on
Cyclone DDS and the Fast DDS agent. A test module that runs against both sets
``AGENT_KINDS = ("native", "fastdds")``; its tests then run once per agent (ids
``[native-...]``, ``[fastdds-...]``), and the ``agent``, ``agent_asan`` and ``agent_kind``
fixtures give that agent's binaries and expectations. Modules without ``AGENT_KINDS`` test
the native agent only. ``MCASTLAB_TEST_AGENTS=fastdds`` (comma-separated) overrides the
choice for every module, e.g. to run the scale test against Fast DDS.

Everything that differs between the agents is in tests/helpers/agentkinds.py, nowhere
else.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.agentkinds import AGENTS, AgentKind
from tests.helpers.netlab import NetLab


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "agent_kind" not in metafunc.fixturenames:
        return
    env = os.environ.get("MCASTLAB_TEST_AGENTS")
    kinds = env.split(",") if env else list(getattr(metafunc.module, "AGENT_KINDS", ("native",)))
    unknown = [k for k in kinds if k not in AGENTS]
    if unknown:
        raise pytest.UsageError(f"MCASTLAB_TEST_AGENTS: unknown agent(s) {unknown}; "
                                f"allowed: {', '.join(AGENTS)}")
    metafunc.parametrize("agent_kind", kinds, indirect=True, scope="session")


@pytest.fixture(scope="session")
def agent_kind(request: pytest.FixtureRequest) -> AgentKind:
    return AGENTS[getattr(request, "param", "native")]


def _need(path: Path, kind: AgentKind) -> str:
    if not os.access(path, os.X_OK):
        pytest.fail(f"{path} is missing: run ./setup.sh (it builds {kind.source})")
    return str(path)


@pytest.fixture(scope="session")
def agent(agent_kind: AgentKind) -> str:
    return _need(agent_kind.binary, agent_kind)


@pytest.fixture(scope="session")
def agent_asan(agent_kind: AgentKind) -> str:
    return _need(agent_kind.asan, agent_kind)


@pytest.fixture
def lab2() -> Iterator[NetLab]:
    with NetLab(2) as lab:
        yield lab


@pytest.fixture
def lab4() -> Iterator[NetLab]:
    with NetLab(4) as lab:
        yield lab
