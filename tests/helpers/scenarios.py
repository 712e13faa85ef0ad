r"""Scenario files for tests: the common head with the test's own matrix, and a campaign run.

    >>> print(lan_scenario("x", matrix="participants = [1]\n", agent="fastdds"), end="")
    [campaign]
    name = "x"
    [topology]
    name = "lan"
    params = { hosts = 4 }
    [agent]
    kind = "fastdds"
    [matrix]
    participants = [1]
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import topologies
from experiments import matrix
from experiments import scenario as scenario_mod
from mcastlab import paths


def lan_scenario(name: str, *, matrix: str, hosts: int = 4, agent: str | None = None,
                 extra_args: list[str] | None = None, topology_extra: str = "",
                 extra: str = "") -> str:
    """A scenario on the ``lan`` topology: ``topology_extra`` goes after [topology] (e.g.
    [topology.variants]), ``agent`` and ``extra_args`` make [agent], ``matrix`` is the
    [matrix] table's body, ``extra`` the sections after it."""
    agent_table = f'[agent]\nkind = "{agent}"\n' if agent else ""
    if extra_args is not None:
        quoted = ", ".join(f'"{a}"' for a in extra_args)
        agent_table += f"extra_args = [{quoted}]\n"
    return (f'[campaign]\nname = "{name}"\n[topology]\nname = "lan"\n'
            f"params = {{ hosts = {hosts} }}\n{topology_extra}{agent_table}"
            f"[matrix]\n{matrix}{extra}")


def run_native_campaign(tmp_path: Path, text: str, timeout: float) -> Path:
    """``mcastlab run`` of the scenario ``text`` with the native agent (which must be built),
    results under ``tmp_path``; asserts it succeeded and returns the campaign directory."""
    if not os.access(paths.NATIVE_AGENT, os.X_OK):
        pytest.fail(f"{paths.NATIVE_AGENT} is not built (run ./setup.sh)")
    scen = tmp_path / "scenario.toml"
    scen.write_text(text)
    root = tmp_path / "results"
    res = subprocess.run([sys.executable, "-m", "mcastlab.cli", "run", str(scen), "--results",
                          str(root)], capture_output=True, text=True, timeout=timeout,
                         cwd=paths.REPO_ROOT, check=False)
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    return root


def expanded_runs(path: Path) -> list[dict[str, Any]]:
    """Every run of the scenario file ``path`` as the runner expands it (validated without
    the machine's checks); the count :func:`experiments.matrix.run_count` announces must
    match."""
    sc, specs = scenario_mod.validate(path, check_machine=False)
    runs = matrix.expand(sc, {v: list(topologies.host_names(s)) for v, s in specs.items()})
    assert len(runs) == matrix.run_count(sc)
    return runs
