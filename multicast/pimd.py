"""pimd (PIM-SM) as a daemon class: config from pimd.conf.tmpl, state from its log and `pimd -r`.

pimd 2.3.2 keeps a fixed pid file and control socket in /var/run, so every router runs
with a private /var/run (a bind mount in the router's own mount namespace).

Readiness is read from pimd's debug log only, never from `pimd -r`: that command sends
SIGUSR1, and pimd 2.3.2's main loop (main.c) restarts its select() after EINTR without
ageing its timer queue, so polling it more often than every 5 s freezes every pimd timer
(hellos, bootstrap and Cand-RP-Adv messages, joins) until a packet happens to arrive.
Measured: a BSR domain polled that way stopped its 5-s RP-set dumps after 14 s.
`pimd -r` is kept for the recorded state (once per probe) and the teardown dump.

pimd 2.3.2 cannot keep a last-hop router on the shared tree: process_cache_miss()
(route.c) calls switch_shortest_path() for every new (S,G) whatever `spt-threshold`
says (it only stops the RP's and the periodic rate-based switch); upstream fixed it after
2.3.2 (troglobit/pimd commit bfd0bfe). `pim_daemon=frr` (multicast/frr.py) does stay.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Any, ClassVar

from multicast.daemon import ConfigError, Daemon

_KEYWORDS = {"default-route-distance", "default-route-metric", "hello-interval",
             "igmp-query-interval", "igmp-querier-timeout", "phyint", "rp-address",
             "bsr-candidate", "rp-candidate", "group-prefix", "spt-threshold"}


class Pimd(Daemon):
    name: ClassVar[str] = "pimd"
    template: ClassVar[str] = "pimd.conf.tmpl"
    is_querier: ClassVar[bool] = True
    mrouting: ClassVar[str] = "pimd"
    needs: ClassVar[tuple[str, ...]] = ("mroute", "pim", "pimd")

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
        # The debug lines are where pimd 2.3.2 reports its neighbours (pim_hello) and the
        # RP set it learnt (pim_bsr, pim_cand_rp: a full RP-set dump every 5 s).
        return ["pimd", "-f", "-c", self.conf_on_node,
                "--debug=pim_hello,pim_bsr,pim_cand_rp"]

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

    def _log_text(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def _known_rps(self, text: str) -> list[dict[str, str]]:
        return rp_from_log(text)

    def log_state(self) -> dict[str, Any]:
        """Neighbours, vifs in service and elected RPs, from the log alone (no signal)."""
        text = self._log_text()
        st = neighbors_from_log(text, self.net.spec.addresses[self.node])
        st["rp"] = self._known_rps(text)
        return st

    def state(self) -> dict[str, Any]:
        st = parse_show(self.show())
        st["rp"] = self._known_rps(self._log_text())
        by_addr = {a.split("/")[0]: i for i, a in self.net.spec.addresses[self.node].items()}
        named: dict[str, list[str]] = {}
        for v in st["vifs"]:
            if v["subnet"] != "register_vif0" and v["local"] in by_addr:
                v["intf"] = by_addr[v["local"]]
                named[v["intf"]] = v["neighbors"]
        st["neighbors"] = named
        vif_intf = {v["vif"]: v.get("intf", v["subnet"]) for v in st["vifs"]}
        for r in st["routes"]:
            r["iif"] = vif_intf.get(r.get("incoming_vif", -1))
        # pimd 2.3.2 does not print its querier state; a router that is the segment's
        # only PIM router (DR, no neighbours there) and has the vif up sends the queries.
        st["querier_intfs"] = [v["intf"] for v in st["vifs"] if "intf" in v and "DR" in v["flags"]
                               and not {"DOWN", "DISABLED"} & set(v["flags"])]
        return st

    def not_ready(self) -> str | None:
        base = super().not_ready()
        if base:
            return base
        st = self.log_state()
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

        With rp=bsr another candidate may be known first; the router is only ready once
        the preferred candidate (lowest C-RP priority) is the RP it elects. pimd 2.3.2
        sends BSMs every 30 s (PIM_BOOTSTRAP_PERIOD) and Cand-RP-Advs every `time` s.
        """
        r = self.net.spec.params["rp_router"]
        return self.net.spec.addresses[r][f"{r}-eth0"].split("/")[0]

    def querier_on(self, intf: str) -> bool:
        # pimd 2.3.2 does not report its querier state. It queries on every vif in
        # service until it hears a lower-addressed querier, and each host segment here
        # has this router as its only IGMP router.
        return intf in self.log_state()["vifs_up"]

    def _p2p_peers(self) -> dict[str, str]:
        net = self.net
        return {intf: peer for intf in net.spec.addresses[self.node]
                if (peer := net.peer_of(self.node, intf))}

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
            elif routes and (m := re.match(r"^Incoming\s*:\s*(\S+)", line)):
                routes[-1]["incoming_vif"] = m.group(1).find("I")  # -1: none
    return {"vifs": vifs, "routes": routes, "raw": text}


def neighbors_from_log(text: str, addresses: dict[str, str]) -> dict[str, Any]:
    """PIM neighbours per interface and vifs in service, from pimd's log (pim_hello debug).

    >>> st = neighbors_from_log("Interface r1-eth1 comes up; vif #1 now in service\\n"
    ...     "Received PIM HELLO from new neighbor 10.255.1.2\\n", {"r1-eth1": "10.255.1.1/24"})
    >>> st["neighbors"], st["vifs_up"]
    ({'r1-eth1': ['10.255.1.2']}, ['r1-eth1'])
    """
    nets = {intf: ipaddress.ip_interface(a).network for intf, a in addresses.items()}
    neighbors: dict[str, set[str]] = {intf: set() for intf in addresses}
    up: set[str] = set()
    for line in text.splitlines():
        m = re.search(rf"Received PIM HELLO from new neighbor ({_IP})", line)
        if m:
            addr = ipaddress.ip_address(m.group(1))
            for intf, net in nets.items():
                if addr in net:
                    neighbors[intf].add(m.group(1))
            continue
        m = re.search(rf"(?:Deleting PIM neighbor|neighbor) ({_IP})(?: going down)?$", line)
        if m and ("Deleting" in line or "going down" in line):
            for peers in neighbors.values():
                peers.discard(m.group(1))
            continue
        m = re.search(r"Interface (\S+) (comes up|has come up|goes down|is DOWN|is DISABLED|"
                      r"has gone);", line)
        if m:
            (up.add if "come" in m.group(2) else up.discard)(m.group(1))
    return {"neighbors": {i: sorted(p) for i, p in neighbors.items()},
            "vifs_up": sorted(up & set(addresses))}


def _prefix(text: str) -> str:
    """pimd's abbreviated prefixes (``224/4``, ``10.0.1/24``) in full dotted form."""
    addr, _, length = text.partition("/")
    parts = [*addr.split("."), "0", "0", "0"][:4]
    return f"{'.'.join(parts)}/{length}" if length else ".".join(parts)


def rp_from_log(text: str) -> list[dict[str, str]]:
    """The RP pimd elects per group prefix, from its log: static RPs and the BSR RP set.

    Only RPs really in pimd's RP set count: "Local static RP" lines announce a configured
    RP that pimd 2.3.2 adds to its set only once its main loop runs 15 s after boot
    (main.c), and a join from a receiver before that creates no (*,G) state. The set is
    rebuilt from the latest "Candidate Rendezvous-Point Set" dump (every 5 s with
    pim_bsr/pim_cand_rp debugging; static RPs have holdtime 65535) plus the "New RP
    candidate" lines after it. The RP is the candidate with the lowest priority value
    (pimd: smaller is better; ties, which mcastlab's configs avoid, pimd breaks by hash:
    here the highest address). A holdtime expiry drops the group's candidates until the
    next dump.

    >>> rp_from_log("Local static RP: 10.0.1.254, group 224.0.0.0/4\\n")
    []
    >>> rp_from_log("Candidate Rendezvous-Point Set ===\\n"
    ...     "10.0.1.254       2         224/4               1         65535\\n"
    ...     "Current BSR address: 0.0.0.0\\n")
    [{'rp': '10.0.1.254', 'group': '224.0.0.0/4', 'how': 'static'}]
    >>> rp_from_log("New RP candidate 10.0.2.254 for group 224.0.0.0/4, priority 1\\n"
    ...             "New RP candidate 10.0.1.254 for group 224.0.0.0/4, priority 100\\n")
    [{'rp': '10.0.2.254', 'group': '224.0.0.0/4', 'how': 'bsr'}]
    """
    cands: dict[str, dict[str, tuple[int, str]]] = {}  # group -> rp -> (priority, how)
    snapshot: dict[str, dict[str, tuple[int, str]]] | None = None
    for line in text.splitlines():
        if line.startswith("Candidate Rendezvous-Point Set"):
            snapshot = {}
            continue
        if snapshot is not None:
            m = re.match(rf"^({_IP})\s+\d+\s+(\S+/\d+)\s+(\d+)\s+(\d+)\s*$", line)
            if m:
                how = "static" if int(m.group(4)) >= 65535 else "bsr"
                snapshot.setdefault(_prefix(m.group(2)), {})[m.group(1)] = (int(m.group(3)), how)
            elif line.startswith("Current BSR address"):
                cands, snapshot = snapshot, None
            continue
        m = re.search(rf"New RP candidate ({_IP}) for group (\S+), priority (\d+)", line)
        if m:
            cands.setdefault(m.group(2), {})[m.group(1)] = (int(m.group(3)), "bsr")
            continue
        m = re.search(rf"Delete RP group entry for group ({_IP})", line)
        if m:
            for g in [g for g in cands if g.split("/")[0] == m.group(1)]:
                cands[g] = {rp: v for rp, v in cands[g].items() if v[1] != "bsr"}
    out: dict[str, dict[str, str]] = {}
    for g, by_rp in cands.items():
        if by_rp:
            rp, (_, how) = min(by_rp.items(), key=lambda kv: (kv[1][0],
                                                              -int(ipaddress.ip_address(kv[0]))))
            out[g] = {"rp": rp, "group": g, "how": how}
    # pimd's built-in SSM placeholder RP (169.254.0.1 for 232.0.0.0/8) is no real RP.
    return [v for g, v in out.items() if not g.startswith("232.")]
