"""lab and production: the message-size study's two networks (a lan with other defaults).

  lab:         h1 ---- s1 ---- h2            100 Mbit/s links (publisher host, subscriber host)

  production:        h1 (publisher)
                      |
           h2 ------- s1 ------- h21         1 Gbit/s links, 21 hosts (1 publisher, 20 subscribers)
                    / | \\
                 h3 ... h20
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from topologies import lan
from topologies.spec import Param, Spec


def _with_defaults(**defaults: Any) -> tuple[Param, ...]:
    return tuple(replace(p, default=defaults[p.name]) if p.name in defaults else p
                 for p in lan.PARAMS)


LAB_PARAMS = _with_defaults(hosts=2, bw=100.0)
PRODUCTION_PARAMS = _with_defaults(hosts=21, bw=1000.0)


def plan_lab(params: dict[str, Any]) -> Spec:
    return lan.plan(params, family="lab", table=LAB_PARAMS)


def plan_production(params: dict[str, Any]) -> Spec:
    return lan.plan(params, family="production", table=PRODUCTION_PARAMS)
