"""Multicast load through user-mode routers, measured with the links' own counters.

   h1 (sender) h2                 h3 h4
     |         |                   |  |
    [     s1     ]                [ s2 ]          smcroute (S,G) h1 -> 239.1.2.3,
           |                         |            routers with their own kernel
          r1 (uml) -------------- r2 (uml)        (router_kernel = "uml")

A blast of 100-byte datagrams from h1 at a paced rate (or as fast as the sender goes). What
each hop passed on is read from the host kernel's counters of the veths around the routers:
``h1-eth0`` sent, ``r1-eth1`` what r1 forwarded towards r2, ``r2-eth0`` what r2 forwarded
to its segment, and s1's port to h2 what the bridge alone (the raw veth path, no router)
delivered to a host on the sender's segment, which floods it (no snooping on routed
segments). Used by the router capacity test and tests/bench/bench_uml_router.py.
"""

from __future__ import annotations

import subprocess
import sys
import time
from typing import Any

from experiments.fidelity import router_window

GROUP = "239.1.2.3"
PARAMS = {"routers": 2, "hosts": 2, "mrouting": "smcroute", "smc_mode": "sg",
          "smc_source": "h1", "smc_groups": GROUP, "router_kernel": "uml"}


def _counter(net: Any, node: str, intf: str, field: str = "tx_packets") -> int:
    res = net.run(node, ["cat", f"/sys/class/net/{intf}/statistics/{field}"], outside=True)
    if res.returncode != 0:
        raise RuntimeError(f"reading {field} of {intf} on {node}: {res.stderr.strip()}")
    return int(res.stdout.strip())


def _points(net: Any) -> dict[str, tuple[str, str]]:
    """{what: (node, interface)} of the counters read (see the module's drawing)."""
    port_h2 = next(real for _logical, real, peer in net.switch_ports("s1") if peer == "h2")
    return {"sent": ("h1", "h1-eth0"), "via_r1": ("r1", "r1-eth1"),
            "via_r2": ("r2", "r2-eth0"), "bridge_only": ("s1", port_h2)}


# The sender runs above the routers (which run at SCHED_RR 1 as every network daemon,
# topologies/net.py PLANE_REALTIME), as a sender on another machine would: at the same
# priority or below, a saturated router would slow the sender down on 2 cores and the
# offered load would never exceed what the routers take in.
SENDER_PRIORITY = ("chrt", "--rr", "2")


def blast(net: Any, rate: float, seconds: float, size: int = 100) -> dict[str, Any]:
    """Send ``rate`` x ``seconds`` datagrams of `size` bytes from h1 (rate 0: as fast as it
    goes, for ``seconds`` worth of 200 k/s); returns the packets each point passed on, their
    rates, and the routers' own drop counters (topologies.uml.UmlRouter.counters)."""
    points = _points(net)
    before = {k: _counter(net, n, i) for k, (n, i) in points.items()}
    routers0 = {r: u.counters() for r, u in net.uml.items()}
    count = int((rate or 200_000) * seconds)
    argv = [*SENDER_PRIORITY, sys.executable, "-m", "multicast.probe_agent", "send",
            "--group", GROUP, "--port", "5000", "--count", str(count), "--rate", str(rate),
            "--ttl", "8", "--iface", "h1-eth0", "--run-id", "7", "--size", str(size)]
    t0 = time.monotonic()
    proc = net.popen("h1", argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = proc.communicate(timeout=seconds * 20 + 30)
    if proc.returncode != 0:
        raise RuntimeError(f"the sender failed: {err.strip()[-300:]}")
    time.sleep(1.0)  # what is queued in the routers drains
    elapsed = time.monotonic() - t0 - 1.0
    after = {k: _counter(net, n, i) for k, (n, i) in points.items()}
    packets = {k: after[k] - before[k] for k in points}
    return {"rate_asked": rate, "seconds": round(elapsed, 2), "packets": packets,
            "pps": {k: round(v / elapsed) for k, v in packets.items()},
            "routers": {r: router_window(routers0[r], u.counters())
                        for r, u in net.uml.items()},
            "sender": out.strip()}
