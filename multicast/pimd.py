"""pimd (PIM-SM) as a daemon class: config from pimd.conf.tmpl, state from `pimd -r`.

pimd 2.3.2 keeps a fixed pid file and control socket in /var/run, so every router runs
with a private /var/run (a bind mount in the router's own mount namespace).
"""

from __future__ import annotations

import re
import time
from typing import Any, ClassVar

from multicast.daemon import ConfigError, Daemon

# pimd 2.3.2 parses `rp-address` at start but enters static RPs into its RP set only once
# its main loop runs more than 15 s after boot (main.c); joins before that create no (*,G).
STATIC_RP_DELAY_S = 16.0

_KEYWORDS = {"default-route-distance", "default-route-metric", "hello-interval",
             "igmp-query-interval", "igmp-querier-timeout", "phyint", "rp-address",
             "bsr-candidate", "rp-candidate", "group-prefix", "spt-threshold"}


class Pimd(Daemon):
    name: ClassVar[str] = "pimd"
    template: ClassVar[str] = "pimd.conf.tmpl"
    is_querier: ClassVar[bool] = True

    def __new__(cls, net: Any, node: str) -> Any:
        """`Pimd(net, r)` is what topologies.net starts for mrouting=pimd; the routed
        parameter pim_daemon=frr swaps in FRR's pimd (multicast/frr.py) there."""
        if cls is Pimd and net.spec.params.get("pim_daemon") == "frr":
            from multicast.frr import FrrPim

            return FrrPim(net, node)  # not a Pimd: Python does not call __init__ again
        return super().__new__(cls)

    def variables(self) -> dict[str, str]:
        spec = self.net.spec
        p = spec.params
        igmp = "igmpv3" if str(p.get("igmp", "3")) == "3" else "igmpv2"
        phyints = "\n".join(f"phyint {intf} enable {igmp}" for intf in spec.addresses[self.node])
        rp_router = p["rp_router"]
        rp_addr = spec.addresses[rp_router][f"{rp_router}-eth0"].split("/")[0]
        preferred = self.node == rp_router
        if p["rp"] == "static":
            rp = f"rp-address {rp_addr} 224.0.0.0/4"
        else:
            # Every router is a candidate BSR and RP; rp_router is preferred for both
            # (pimd: the *lower* rp-candidate priority wins, the higher bsr priority wins).
            rp = (f"bsr-candidate {self.node}-eth0 priority {200 if preferred else 10}\n"
                  f"rp-candidate {self.node}-eth0 time 30 priority {1 if preferred else 100}\n"
                  "group-prefix 224.0.0.0 masklen 4")
        spt = "packets 0 interval 5" if p["spt"] == "immediate" else "infinity interval 5"
        return {"node": self.node, "phyints": phyints, "rp": rp, "spt": spt,
                "query_interval": "12", "querier_timeout": "42"}

    def argv(self) -> list[str]:
        # The BSR/C-RP debug lines are the only place pimd 2.3.2 reports the RP it learnt.
        return ["pimd", "-f", "-c", str(self.conf_path), "--debug=pim_bsr,pim_cand_rp"]

    def check(self, text: str) -> None:
        intfs = set(self.net.spec.addresses[self.node])
        for n, line in enumerate(text.splitlines(), start=1):
            words = line.split("#", 1)[0].split()
            if not words:
                continue
            if words[0] not in _KEYWORDS:
                raise ConfigError(f"{self.conf_path}:{n}: unknown pimd keyword {words[0]!r}")
            if words[0] == "phyint" and (len(words) < 2 or words[1] not in intfs):
                raise ConfigError(f"{self.conf_path}:{n}: phyint names an interface this "
                                  f"router lacks; allowed: {', '.join(sorted(intfs))}")

    def show(self) -> str:
        """`pimd -r` (VIFs, neighbours, RP set, multicast routing table) for this router."""
        res = self.net.run(self.node, ["pimd", "-r"], timeout=10)
        return res.stdout

    def state(self) -> dict[str, Any]:
        st = parse_show(self.show())
        rps = rp_from_log(self.log_path.read_text(errors="replace")
                          if self.log_path.exists() else "")
        if time.monotonic() - self.started_at < STATIC_RP_DELAY_S:
            rps = [r for r in rps if r["how"] != "static"]
        st["rp"] = rps
        by_addr = {a.split("/")[0]: i for i, a in self.net.spec.addresses[self.node].items()}
        named: dict[str, list[str]] = {}
        for v in st["vifs"]:
            if v["subnet"] != "register_vif0" and v["local"] in by_addr:
                v["intf"] = by_addr[v["local"]]
                named[v["intf"]] = v["neighbors"]
        st["neighbors"] = named
        # pimd 2.3.2 does not print its querier state; a router that is the segment's
        # only PIM router (DR, no neighbours there) and has the vif up sends the queries.
        st["querier_intfs"] = [v["intf"] for v in st["vifs"] if "intf" in v and "DR" in v["flags"]
                               and not {"DOWN", "DISABLED"} & set(v["flags"])]
        return st

    def not_ready(self) -> str | None:
        base = super().not_ready()
        if base:
            return base
        st = self.state()
        lacking = []
        for intf, peer in self._p2p_peers().items():
            if not st["neighbors"].get(intf):
                lacking.append(f"no PIM neighbour on {intf} (expected {peer})")
        expected = self.expected_rp()
        if not any(r["rp"] == expected for r in st["rp"]):
            known = ", ".join(r["rp"] for r in st["rp"]) or "none"
            lacking.append(f"RP {expected} not known yet (known: {known})")
        return "; ".join(lacking) or None

    def expected_rp(self) -> str:
        """The RP address every router must know: rp_router's segment address.

        With rp=bsr another candidate may win first; it is only ready once the preferred
        candidate's advertisement went through the BSR (BSMs every 60 s in pimd).
        """
        r = self.net.spec.params["rp_router"]
        return self.net.spec.addresses[r][f"{r}-eth0"].split("/")[0]

    def querier_on(self, intf: str) -> bool:
        return intf in self.state()["querier_intfs"]

    def _p2p_peers(self) -> dict[str, str]:
        net = self.net
        return {intf: peer for intf in net.spec.addresses[self.node]
                if (peer := net._peer_of(self.node, intf))}

    def save_logs(self) -> None:
        if self.running():
            with open(self.log_path, "a") as f:
                f.write("\n=== pimd -r at teardown ===\n" + self.show())


_IP = r"\d+\.\d+\.\d+\.\d+"


def parse_show(text: str) -> dict[str, Any]:
    """Parse `pimd -r` (2.3.2): VIF table and multicast routing table entries.

    >>> st = parse_show("Virtual Interface Table ===\\nVif  Local Address ...\\n---\\n"
    ...   "  1  10.255.1.1       10.255.1/24              1  PIM        10.255.1.2\\n\\n")
    >>> st["vifs"][0]["neighbors"], st["vifs"][0]["flags"]
    (['10.255.1.2'], ['PIM'])
    """
    vifs: list[dict[str, Any]] = []
    routes: list[dict[str, Any]] = []
    section = ""
    for line in text.splitlines():
        if line.startswith("Virtual Interface Table"):
            section = "vif"
            continue
        if line.startswith("Multicast Routing Table"):
            section = "mrt"
            continue
        if section == "vif":
            m = re.match(rf"^\s*(\d+)\s+({_IP})\s+(\S+)\s+(\d+)\s*(.*)$", line)
            if m:
                rest = m.group(5).split()
                vifs.append({"vif": int(m.group(1)), "local": m.group(2), "subnet": m.group(3),
                             "flags": [w for w in rest if not re.fullmatch(_IP, w)],
                             "neighbors": [w for w in rest if re.fullmatch(_IP, w)]})
            elif vifs and re.fullmatch(rf"\s+({_IP})\s*", line):
                vifs[-1]["neighbors"].append(line.strip())
        elif section == "mrt":
            m = re.match(rf"^(INADDR_ANY|{_IP})\s+({_IP})\s+(\S+)\s*(.*)$", line)
            if m:
                routes.append({"source": m.group(1), "group": m.group(2), "rp": m.group(3),
                               "flags": m.group(4).split()})
    return {"vifs": vifs, "routes": routes, "raw": text}


def rp_from_log(text: str) -> list[dict[str, str]]:
    """RPs pimd reports in its log: static ones and the BSR-learnt RP set, latest state.

    >>> rp_from_log("Local static RP: 10.0.1.254, group 224.0.0.0/4\\n")
    [{'rp': '10.0.1.254', 'group': '224.0.0.0/4', 'how': 'static'}]
    """
    rps: dict[str, dict[str, str]] = {}
    for line in text.splitlines():
        m = re.search(rf"Local static RP: ({_IP}), group (\S+)", line)
        if m and not m.group(2).startswith("232."):  # pimd's built-in SSM placeholder
            rps[m.group(2)] = {"rp": m.group(1), "group": m.group(2), "how": "static"}
        m = re.search(rf"New RP candidate ({_IP}) for group (\S+),", line)
        if m:
            rps[m.group(2)] = {"rp": m.group(1), "group": m.group(2), "how": "bsr"}
        m = re.search(rf"Delete RP group entry for group ({_IP})", line)
        if m:
            for g in [g for g in rps if g.split("/")[0] == m.group(1) and rps[g]["how"] == "bsr"]:
                del rps[g]
    return list(rps.values())
