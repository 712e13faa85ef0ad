"""lan: N hosts on one switch (the study's 4 VMs on one LAN).

            +------+
   h1 ------|      |------ h2
            |  s1  |
   h3 ------|      |------ h4        hosts 10.0.0.1 ... 10.0.0.N /24
            +------+                 224.0.0.0/4 via each host's eth0

The switch is a Linux bridge (default) or Open vSwitch; IGMP snooping, querier,
IGMP version and OVS flood-unregistered are parameters. Links may be shaped with HTB
(`bw`); `delay`/`loss` need netem.
"""

from __future__ import annotations

from typing import Any

from topologies import servers
from topologies.spec import COMMON_PARAMS, Param, Spec, parse_params, switch_needs

PARAMS: tuple[Param, ...] = (
    Param("hosts", "int", 4, "number of hosts", low=1, high=250),
    *COMMON_PARAMS,
)


def plan(params: dict[str, Any], family: str = "lan", table: tuple[Param, ...] = PARAMS) -> Spec:
    """Resolve `params` (strings or typed values) into a Spec."""
    p = parse_params(family, table, params)
    hosts = [f"h{i}" for i in range(1, p["hosts"] + 1)]
    addresses = {h: {f"{h}-eth0": f"10.0.0.{i}/24"} for i, h in enumerate(hosts, start=1)}
    spec = Spec(
        family=family,
        params=p,
        hosts=hosts,
        switches={"s1": list(hosts)},
        addresses=addresses,
        needs=switch_needs(p),
    )
    spec.placement = servers.place(spec)
    return spec
