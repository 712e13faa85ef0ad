"""IGMP snooping and querier settings for Linux bridges and Open vSwitch, with read-back.

Settings are applied with one command each and read back from the switch afterwards, so a
run records the state the switch really had, not the state we asked for.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

Run = Callable[[str], str]  # runs a shell command in the switch's namespace, returns output


# The kernel trusts the bridge's own querier only after an "other querier" delay: the
# query response interval in force when `mcast_querier` is switched on
# (br_multicast_set_querier); until then a snooping bridge floods. With the default 10 s
# that cost every run 11 s of waiting (measured here, kernel 6.18: pruning started
# 9.5–10.5 s after creation). So the querier is switched on while the response interval
# is 1 s, and the default 10 s is restored at once: the delay is 1 s, and every later
# query, membership timeout and response window uses the defaults under study.
# Measured (a 3-host bridge, a datagram to a group every 0.5 s, a non-member's port):
# default 21 of 26 datagrams flooded to the non-member (~10.5 s), with this start 3 of 26.
STARTUP_RESPONSE_INTERVAL_CS = 100  # 1 s, only while the querier is switched on
DEFAULT_RESPONSE_INTERVAL_CS = 1000  # the kernel's default, restored right after
QUERIER_STARTUP_DELAY_S = 2.0


def bridge_create_cmd(name: str, snooping: bool, querier: bool, igmp: int) -> str:
    """`ip link add` for a Linux bridge with the given multicast behaviour; with a querier,
    the querier is switched on later by :func:`bridge_querier_on_cmds` (after `up`).

    >>> bridge_create_cmd("mk3zs1", True, False, 3)
    'ip link add name mk3zs1 type bridge mcast_snooping 1 mcast_querier 0 mcast_igmp_version 3'
    >>> bridge_create_cmd("mk3zs1", True, True, 2).split("version 2 ")[1]
    'mcast_query_response_interval 100'
    """
    cmd = (f"ip link add name {name} type bridge mcast_snooping {int(snooping)} "
           f"mcast_querier 0 mcast_igmp_version {igmp}")
    if querier:
        cmd += f" mcast_query_response_interval {STARTUP_RESPONSE_INTERVAL_CS}"
    return cmd


def bridge_querier_on_cmds(name: str, querier: bool) -> list[str]:
    """Switch the querier on (1 s other-querier delay), then restore the default response
    interval (see QUERIER_STARTUP_DELAY_S)."""
    if not querier:
        return []
    return [f"ip link set {name} type bridge mcast_querier 1",
            f"ip link set {name} type bridge mcast_query_response_interval "
            f"{DEFAULT_RESPONSE_INTERVAL_CS}"]


def bridge_querier_delay(snooping: bool, querier: bool) -> float:
    """Seconds after the querier is switched on before it counts (the bridge floods till
    then)."""
    return QUERIER_STARTUP_DELAY_S if snooping and querier else 0.0


def bridge_readback(run: Run, name: str) -> dict[str, Any]:
    """The bridge's multicast settings, its mdb (group -> ports) and router ports."""
    link = json.loads(run(f"ip -d -j link show dev {name}") or "[{}]")[0]
    info = link.get("linkinfo", {}).get("info_data", {})
    settings = {k: info.get(k) for k in ("mcast_snooping", "mcast_querier", "mcast_igmp_version",
                                          "mcast_router", "mcast_query_intvl",
                                          "mcast_query_response_intvl")}
    mdb_raw = json.loads(run(f"bridge -j mdb show dev {name}") or "[]")
    mdb: dict[str, list[str]] = {}
    routers: list[str] = []
    for block in mdb_raw:
        for entry in block.get("mdb", []):
            if ":" in entry.get("grp", ""):  # IPv6 (MLD) entries are not ours
                continue
            mdb.setdefault(entry["grp"], []).append(entry["port"])
        router = block.get("router", {})
        if isinstance(router, dict):
            for ports in router.values():
                routers.extend(p.get("port", "") if isinstance(p, dict) else str(p) for p in ports)
    return {"kind": "linuxbridge", "settings": settings,
            "mdb": {g: sorted(p) for g, p in sorted(mdb.items())}, "router_ports": routers}


def ovs_bridge_settings(snooping: bool, flood_unregistered: bool) -> list[str]:
    """ovs-vsctl arguments (after `set bridge NAME`) for snooping and flooding behaviour."""
    return [
        f"mcast_snooping_enable={'true' if snooping else 'false'}",
        "other_config:mcast-snooping-disable-flood-unregistered="
        + ("false" if flood_unregistered else "true"),
    ]


def parse_ovs_mdb(text: str) -> dict[str, list[str]]:
    """Parse `ovs-appctl mdb/show BRIDGE` into {group: [ports]} (router ports under '*').

    >>> parse_ovs_mdb(" port  VLAN  GROUP                Age\\n    1     0  239.1.1.1        3\\n"
    ...               "    2     0  querier              5\\n")
    {'239.1.1.1': ['1'], '*': ['2']}
    """
    out: dict[str, list[str]] = {}
    for line in text.splitlines()[1:]:
        cols = line.split()
        if len(cols) < 3:
            continue
        port, group = cols[0], cols[2]
        key = "*" if group == "querier" else group
        if ":" in key:
            continue
        out.setdefault(key, []).append(port)
    return out
