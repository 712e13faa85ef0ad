"""The Linux bridge: kernel IGMP snooping, its own querier, read back from its mdb."""

from __future__ import annotations

import time
from typing import Any, ClassVar

from multicast import snooping
from topologies.switches.base import SwitchKind, SwitchSite, logical_ports


class LinuxBridge(SwitchKind):
    name: ClassVar[str] = "linuxbridge"
    needs: ClassVar[str] = "bridge"

    def start(self, net: SwitchSite, sw: str) -> None:
        p = net.spec.params
        real = net.real_name(sw)
        ports = net.switch_ports(sw)
        lines = [snooping.bridge_create_cmd(real, p["snooping"], p["querier"], int(p["igmp"]))]
        lines += [f"ip link set {port} {net.mtu()}master {real} up" for _, port, _ in ports]
        lines.append(f"ip link set {real} up")
        lines += snooping.bridge_querier_on_cmds(real, bool(p["querier"]))
        # Router ports get all multicast (smcroute sends no PIM hello/query to learn from).
        lines += [f"bridge link set dev {port} mcast_router 2"
                  for _, port, peer in ports if peer in net.spec.routers]
        if sw == net.fail_on:
            lines.append("ip link set dev mcl-injected up")
        # One script of 3 + N lines: longer than a pty line from ~40 ports on, so
        # Network.sh sends it through argv (see topologies.net's docstring).
        net.sh(sw, lines, "starting the Linux bridge")
        net.querier_ready_at[sw] = time.monotonic() + snooping.bridge_querier_delay(
            p["snooping"], p["querier"])

    def state(self, net: SwitchSite, sw: str) -> dict[str, Any]:
        rename = logical_ports(net, sw)
        st = snooping.bridge_readback(lambda c: net.cmd(sw, c), net.real_name(sw))
        st["mdb"] = {g: [rename.get(p, p) for p in ps] for g, ps in st["mdb"].items()}
        st["router_ports"] = [rename.get(p, p) for p in st["router_ports"]]
        return st

    def not_ready(self, net: SwitchSite, sw: str) -> str | None:
        """The bridge's own querier, when asked for: on, and past its startup delay."""
        if not net.spec.params.get("querier"):
            return None
        st = net.cmd(sw, f"ip -d -j link show dev {net.real_name(sw)}")
        if '"mcast_querier":1' not in st:
            return "bridge querier requested but not enabled"
        if time.monotonic() < net.querier_ready_at.get(sw, 0):
            return "bridge querier still in its startup delay (bridge floods until then)"
        return None
