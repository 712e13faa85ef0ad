"""Readiness checks: PIM neighbours on every router link, RP known, a querier per segment,
and every host's memberships in its snooping switch's table (multicast.membership)."""

from __future__ import annotations

import concurrent.futures
import time
from typing import Any

from mcastlab.errors import ConvergenceError
from mcastlab.testbed import Testbed
from multicast import membership


def router_state(net: Testbed, router: str) -> dict[str, Any]:
    """JSON-able multicast state of one router (from its daemon and the kernel)."""
    d = net.daemons.get(router)
    state: dict[str, Any] = {"mfc": read_mfc(net, router), "vifs": read_vifs(net, router)}
    if d is not None:
        state.update(d.state())
    return state


def read_vifs(net: Testbed, router: str) -> list[dict[str, Any]]:
    """Kernel VIF table (/proc/net/ip_mr_vif) of a router."""
    text = net.cmd(router, "cat /proc/net/ip_mr_vif")
    out = []
    for line in text.splitlines()[1:]:
        cols = line.split()
        if len(cols) >= 6:
            out.append({"index": int(cols[0]), "intf": cols[1], "bytes_in": int(cols[2]),
                        "pkts_in": int(cols[3]), "bytes_out": int(cols[4]),
                        "pkts_out": int(cols[5])})
    return out


def read_mfc(net: Testbed, router: str) -> list[dict[str, Any]]:
    """Kernel multicast forwarding cache (/proc/net/ip_mr_cache), addresses in dotted form."""
    text = net.cmd(router, "cat /proc/net/ip_mr_cache")
    vifs = {v["index"]: v["intf"] for v in read_vifs(net, router)}
    out = []
    for line in text.splitlines()[1:]:
        cols = line.split()
        if len(cols) < 6:
            continue
        oifs = []
        for item in cols[6:]:
            idx = int(item.split(":")[0])
            oifs.append(vifs.get(idx, str(idx)))
        iif = int(cols[2])
        out.append({"group": _hexip(cols[0]), "source": _hexip(cols[1]),
                    "iif": vifs.get(iif, str(iif)), "packets": int(cols[3]),
                    "bytes": int(cols[4]), "wrong_if": int(cols[5]), "oifs": oifs})
    return out


def _hexip(h: str) -> str:
    """/proc/net/ip_mr_cache prints addresses as host-order hex (little endian here)."""
    n = int(h, 16)
    return ".".join(str((n >> s) & 0xFF) for s in (0, 8, 16, 24))


def wait(net: Testbed, timeout: float) -> dict[str, Any]:
    """Poll until ready; returns what was checked. Raises ConvergenceError on timeout."""
    deadline = time.monotonic() + timeout
    lacking: dict[str, str] = {}
    while True:
        lacking = missing(net)
        if not lacking:
            waited = timeout - (deadline - time.monotonic())
            return {"converged": True, "waited_s": round(waited, 3)}
        if time.monotonic() >= deadline:
            detail = "; ".join(f"{who}: {what}" for who, what in sorted(lacking.items()))
            raise ConvergenceError(f"network not converged after {timeout:g} s: {detail}")
        time.sleep(0.25)


def missing(net: Testbed) -> dict[str, str]:
    """{router or segment: what it still lacks}; empty when converged."""
    lacking: dict[str, str] = {}
    # Asked of every router at once: each answer is a command run in the router (pimd -r,
    # vtysh, smcroutectl), through a command client on a user-mode router (60 routers one
    # after the other: half a minute per look).
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        answers = dict(zip(net.daemons, pool.map(lambda d: d.not_ready(),
                                                  net.daemons.values()), strict=True))
    for r, why in answers.items():
        if why:
            lacking[r] = why
    for sw in net.switches:
        why = segment_not_ready(net, sw)
        if why:
            lacking[sw] = why
    if not lacking:
        # Every membership a host holds must be in its snooping switch's table.
        gone = membership.missing(net)
        if gone:
            lacking["memberships"] = membership.describe(gone, len(net.hosts))
    return lacking


def segment_not_ready(net: Testbed, sw: str) -> str | None:
    """A segment is ready when its ports are up and, if one is expected, a querier exists."""
    down = [p for _logical, p, _peer in net.switch_ports(sw)
            if "state UP" not in net.cmd(sw, f"ip -o link show dev {p}")
            and "LOWER_UP" not in net.cmd(sw, f"ip -o link show dev {p}")]
    if down:
        return f"ports down: {', '.join(down)}"
    routers_on = [m for m in net.spec.switches[sw] if m in net.daemons]
    querier_routers = [r for r in routers_on if net.daemons[r].is_querier]
    if querier_routers:
        if not any(net.daemons[r].querier_on(f"{r}-eth0") for r in querier_routers):
            return f"no IGMP querier elected (routers {', '.join(querier_routers)})"
        return None
    return net.switch_not_ready(sw)  # e.g. a Linux bridge's own querier
