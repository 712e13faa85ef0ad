r"""Scenario files for tests of the scenario layer: the common head, the test's own matrix.

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
