"""FRR's pimd (PIM-SM) as a daemon class: zebra + pimd per router namespace.

Used for `mrouting=pimd pim_daemon=frr`. FRR's pimd honours
``ip pim spt-switchover infinity-and-beyond``: the last-hop router stays on the shared
tree, which pimd 2.3.2 cannot do (its cache-miss handler switches to the SPT
unconditionally, see multicast/pimd.py). Each router runs its own zebra (the RIB pimd's
RPF lookups use: connected routes plus the static kernel routes mcastlab installed) and
pimd, with sockets in /var/run/frr of the router's private /var/run, configs and logs in
the network's workdir. State comes from ``vtysh -c "show ... json"``.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any, ClassVar

from mcastlab.capabilities import frr_missing
from mcastlab.errors import TopologyParamError
from mcastlab.paths import FRR_LIBEXEC, FRR_PREFIX, FRR_PRIVATE, VTYSH
from mcastlab.testbed import Testbed
from multicast.daemon import ConfigError, Daemon

# The private FRR (mcastlab.paths) needs its own libraries.
_ENV = (["env", f"LD_LIBRARY_PATH={FRR_PREFIX / 'usr/lib/x86_64-linux-gnu/frr'}"]
        if FRR_PRIVATE else [])
RUN_DIR = "/var/run/frr"  # inside the router's private /var/run
ZSERV = f"{RUN_DIR}/zserv.api"
# Run as root with group frrvty (FRR insists its user be in the vty group): configs and
# logs live in the workdir, not under /etc/frr; no TCP vty.
_COMMON = ["-u", "root", "-g", "frrvty", "-P", "0", "--vty_socket", RUN_DIR, "-z", ZSERV]


class FrrPim(Daemon):
    name: ClassVar[str] = "frr"
    template: ClassVar[str] = "frr_pimd.conf.tmpl"
    is_querier: ClassVar[bool] = True
    mrouting: ClassVar[str] = "pimd"  # PIM-SM, chosen with pim_daemon=frr
    needs: ClassVar[tuple[str, ...]] = ("mroute", "pim", "frr")

    @classmethod
    def check_params(cls, params: dict[str, Any]) -> None:
        if params["rp"] != "static":
            raise TopologyParamError(
                "topology routed: parameter 'rp' = 'bsr' is not allowed with pim_daemon=frr "
                "(FRR 8.4 cannot be a candidate BSR/RP); allowed: static"
            )

    def __init__(self, net: Testbed, node: str):
        super().__init__(net, node)
        wd = Path(net.workdir)
        self.conf_path = wd / f"frr_{node}_pimd.conf"
        self.log_path = wd / f"frr_{node}_pimd.log"
        self.pid_path = wd / f"frr_{node}_pimd.pid"
        self.zebra_conf = wd / f"frr_{node}_zebra.conf"
        self.zebra_log = wd / f"frr_{node}_zebra.log"
        self.vtysh_dir = wd / f"frr_{node}_vtysh"
        self.zebra: subprocess.Popen | None = None
        self.vtysh_error: str | None = None  # why the last vtysh query gave nothing

    # --- config -----------------------------------------------------------------------
    def variables(self) -> dict[str, str]:
        spec = self.net.spec
        p = spec.params
        if p["rp"] != "static":
            raise ConfigError(f"{self.conf_path}: pim_daemon=frr supports rp=static only "
                              "(FRR 8.4 cannot be a candidate BSR/RP); use pim_daemon=pimd")
        igmp = "3" if str(p.get("igmp", "3")) == "3" else "2"
        blocks = []
        for intf in spec.addresses[self.node]:
            lines = [f"interface {intf}", " ip pim"]
            if intf == f"{self.node}-eth0":  # the host segment: IGMP querier
                lines += [" ip igmp", f" ip igmp version {igmp}", " ip igmp query-interval 12"]
            blocks.append("\n".join(lines))
        spt = ("ip pim spt-switchover infinity-and-beyond" if p["spt"] == "never"
               else "! spt: immediate (FRR's default)")
        return {"node": self.node, "rp": f"ip pim rp {self.expected_rp()} 224.0.0.0/4",
                "spt": spt, "interfaces": "\n!\n".join(blocks)}

    def argv(self) -> list[str]:
        return [*_ENV, str(FRR_LIBEXEC / "pimd"), "-f", str(self.conf_path), "-i",
                f"{RUN_DIR}/pimd.pid", *_COMMON, "--log", "stdout", "--log-level", "info"]

    def zebra_argv(self) -> list[str]:
        return [*_ENV, str(FRR_LIBEXEC / "zebra"), "-f", str(self.zebra_conf), "-i",
                f"{RUN_DIR}/zebra.pid", *_COMMON, "--log", "stdout", "--log-level", "info"]

    def check(self, text: str) -> None:
        del text
        argv = [*_ENV, str(FRR_LIBEXEC / "pimd"), "-C", "-f", str(self.conf_path), *_COMMON,
                "--log", "stdout"]
        res = self.net.run(self.node, argv, timeout=20)
        if res.returncode != 0:
            out = (res.stdout + res.stderr).strip().replace("\n", " | ")
            raise ConfigError(f"{self.conf_path}: FRR pimd -C rejected it: {out[:300]}")

    # --- lifecycle --------------------------------------------------------------------
    def start(self) -> None:
        why = frr_missing()
        if why:
            raise ConfigError(why)
        res = self.net.run(self.node, ["mkdir", "-p", RUN_DIR])
        if res.returncode != 0:
            raise RuntimeError(f"{self.node}: cannot create {RUN_DIR}: {res.stderr.strip()}")
        self.zebra_conf.write_text(self.render("frr_zebra.conf.tmpl"))
        self.vtysh_dir.mkdir(exist_ok=True)
        (self.vtysh_dir / "vtysh.conf").write_text(self.render("frr_vtysh.conf.tmpl"))
        with open(self.zebra_log, "w") as log:
            self.zebra = self.net.popen(self.node, self.zebra_argv(), network_plane=True,
                                        stdout=log, stderr=subprocess.STDOUT)
        # pimd retries zebra itself, but starting it after zserv.api exists saves a retry.
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and self.zebra.poll() is None:
            if self.net.run(self.node, ["test", "-S", ZSERV]).returncode == 0:
                break
            time.sleep(0.1)
        if self.zebra.poll() is not None:
            raise RuntimeError(f"{self.node}: zebra exited (see {self.zebra_log})")
        super().start()

    def running(self) -> bool:
        return super().running() and self.zebra is not None and self.zebra.poll() is None

    def not_ready(self) -> str | None:
        if not self.running():
            return f"FRR zebra/pimd not running (see {self.log_path}, {self.zebra_log})"
        st = self.state()
        if self.vtysh_error:
            return self.vtysh_error
        lacking = []
        for intf, peer in self._p2p_peers().items():
            if not st["neighbors"].get(intf):
                lacking.append(f"no PIM neighbour on {intf} (expected {peer})")
        expected = self.expected_rp()
        if not any(r["rp"] == expected and r["reachable"] for r in st["rp"]):
            known = ", ".join(f"{r['rp']} via {r['intf']}" for r in st["rp"]) or "none"
            lacking.append(f"RP {expected} not known/reachable yet (known: {known})")
        return "; ".join(lacking) or None

    def querier_on(self, intf: str) -> bool:
        return intf in self.state()["querier_intfs"]

    def describe(self) -> dict[str, Any]:
        d = super().describe()
        d.update({"zebra_conf": str(self.zebra_conf), "zebra_log": str(self.zebra_log),
                  "zebra_pid": self.zebra.pid if self.zebra else None})
        return d

    def save_logs(self) -> None:
        if self.running():
            with open(self.log_path, "a") as f:
                for cmd in ("show ip pim neighbor", "show ip pim rp-info", "show ip mroute",
                            "show ip pim upstream"):
                    f.write(f"\n=== vtysh: {cmd} (at teardown) ===\n{self.vtysh(cmd)}")

    # --- state ------------------------------------------------------------------------
    def vtysh(self, command: str) -> str:
        res = self.net.run(self.node, [*_ENV, str(VTYSH), "--vty_socket", RUN_DIR,
                                       "--config_dir", str(self.vtysh_dir), "-d", "pimd",
                                       "-c", command], timeout=10)
        if res.returncode != 0 or (not res.stdout.strip() and res.stderr.strip()):
            self.vtysh_error = (f"vtysh -c '{command}' on {self.node} failed (exit "
                                f"{res.returncode}): {res.stderr.strip()[-300:]}")
            return ""
        self.vtysh_error = None
        return res.stdout

    def vtysh_json(self, command: str) -> dict[str, Any]:
        try:
            out = json.loads(self.vtysh(command + " json") or "{}")
        except json.JSONDecodeError:
            return {}
        return out if isinstance(out, dict) else {}

    def state(self) -> dict[str, Any]:
        return parse_state(self.vtysh_json("show ip pim neighbor"),
                           self.vtysh_json("show ip pim rp-info"),
                           self.vtysh_json("show ip igmp interface"),
                           self.vtysh_json("show ip mroute"))

    def expected_rp(self) -> str:
        r = self.net.spec.params["rp_router"]
        return self.net.spec.addresses[r][f"{r}-eth0"].split("/")[0]

    def _p2p_peers(self) -> dict[str, str]:
        net = self.net
        return {intf: peer for intf in net.spec.addresses[self.node]
                if (peer := net.peer_of(self.node, intf))}


def parse_state(neigh: dict[str, Any], rp_info: dict[str, Any], igmp: dict[str, Any],
                mroute: dict[str, Any]) -> dict[str, Any]:
    """Reduce FRR 8.4's vtysh JSON to the fields mcastlab records and checks.

    >>> st = parse_state({"r1-eth1": {"10.255.1.2": {"upTime": "00:00:05"}}},
    ...     {"10.0.3.254": [{"outboundInterface": "r1-eth2", "group": "224.0.0.0/4",
    ...                      "source": "Static", "iAmRP": False}]},
    ...     {"r1-eth0": {"state": "up", "querier": True}}, {})
    >>> st["neighbors"], st["rp"][0]["reachable"], st["querier_intfs"]
    ({'r1-eth1': ['10.255.1.2']}, True, ['r1-eth0'])
    """
    neighbors = {intf: sorted(peers) for intf, peers in neigh.items() if isinstance(peers, dict)}
    rps = []
    for addr, entries in rp_info.items():
        for e in entries if isinstance(entries, list) else [entries]:
            intf = e.get("outboundInterface", "Unknown")
            rps.append({"rp": addr, "group": e.get("group", ""), "how": str(e.get("source", "")),
                        "intf": intf, "i_am_rp": bool(e.get("iAmRP")),
                        "reachable": bool(e.get("iAmRP")) or intf not in ("", "Unknown")})
    queriers = sorted(intf for intf, d in igmp.items()
                      if isinstance(d, dict) and d.get("querier") and d.get("state") == "up")
    routes = []
    for group, sources in mroute.items():
        if not isinstance(sources, dict):
            continue
        for source, e in sources.items():
            if isinstance(e, dict):
                routes.append({"source": source, "group": group, "iif": e.get("iif"),
                               "oifs": sorted((e.get("oil") or {}).keys()),
                               "flags": [k for k in ("installed", "isRpt") if e.get(k)]})
    return {"neighbors": neighbors, "rp": rps, "querier_intfs": queriers, "routes": routes}
