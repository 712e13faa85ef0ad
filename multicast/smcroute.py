"""smcroute (static multicast routes) as a daemon class: config from smcroute.conf.tmpl.

Routes come from the topology plan (``spec.params["smc_routes"]``): per router, the
inbound interface, optional source, group and outbound interfaces. smcrouted's own
syntax check (``-F``) validates the rendered file before the daemon starts.
"""

from __future__ import annotations

from typing import Any, ClassVar

from mcastlab.paths import SMCROUTECTL, SMCROUTED
from multicast.daemon import ConfigError, Daemon

SOCKET = "/var/run/smcroute.sock"  # inside the router's private /var/run


class Smcroute(Daemon):
    name: ClassVar[str] = "smcroute"
    template: ClassVar[str] = "smcroute.conf.tmpl"
    is_querier: ClassVar[bool] = False
    mrouting: ClassVar[str] = "smcroute"
    needs: ClassVar[tuple[str, ...]] = ("mroute", "smcroute")

    def routes(self) -> list[dict[str, Any]]:
        return self.net.spec.params.get("smc_routes", {}).get(self.node, [])

    def variables(self) -> dict[str, str]:
        intfs = self.net.spec.addresses[self.node]
        phyints = "\n".join(f"phyint {i} enable" for i in intfs)
        lines = []
        for r in self.routes():
            src = f" source {r['source']}" if r["source"] else ""
            # No `mgroup` join: for a group range smcrouted would join every group in it.
            # Snooping switches forward to router ports, which the topology marks as such.
            lines.append(f"mroute from {r['iif']}{src} group {r['group']} to {' '.join(r['oifs'])}")
        return {"node": self.node, "phyints": phyints,
                "routes": "\n".join(lines) or "# no routes on this router"}

    def argv(self) -> list[str]:
        return [str(SMCROUTED), "-n", "-N", "-f", self.conf_on_node, "-l", "info",
                "-u", SOCKET, "-P", "/var/run/smcroute.pid"]

    def check(self, text: str) -> None:
        del text
        res = self.net.run(self.node, [str(SMCROUTED), "-F", self.conf_on_node], timeout=20)
        if res.returncode != 0:
            raise ConfigError(f"{self.conf_path}: smcrouted -F rejected it: "
                              f"{(res.stdout + res.stderr).strip()[:300]}")

    def show(self, what: str = "routes") -> str:
        res = self.net.run(self.node, [str(SMCROUTECTL), "-u", SOCKET, "-p", "show", what],
                           timeout=10)
        return res.stdout if res.returncode == 0 else ""

    def state(self) -> dict[str, Any]:
        return {"configured_routes": self.routes(), "show_routes": self.show("routes"),
                "show_groups": self.show("groups")}

    def not_ready(self) -> str | None:
        base = super().not_ready()
        if base:
            return base
        res = self.net.run(self.node, [str(SMCROUTECTL), "-u", SOCKET, "-p", "show", "interfaces"],
                           timeout=10)
        if res.returncode != 0:
            return "smcrouted not answering on its control socket yet"
        return None

    def save_logs(self) -> None:
        if self.running():
            with open(self.log_path, "a") as f:
                f.write("\n=== smcroutectl show routes at teardown ===\n" + self.show("routes"))
