"""Open vSwitch kinds: a private OVS (ovsdb-server + ovs-vswitchd) in each switch's namespace.

Each OVS switch gets its own database, sockets and daemons under
``/run/mcastlab/<tag>/ovs-<switch>/``, started through ``net.popen`` so both daemons
are recorded in the ledger. The system's OVS (if any) and its bridges are never
contacted: every ovs-vsctl/ovs-appctl call names our socket explicitly.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path
from typing import Any, ClassVar

from mcastlab import capabilities
from multicast import snooping
from topologies.switches.base import SwitchKind, SwitchSite, logical_ports

SCHEMA = Path("/usr/share/openvswitch/vswitch.ovsschema")


class OvsInstance:
    """One switch's OVS daemons and database; net.switch_control[switch] while it runs."""

    def __init__(self, net: SwitchSite, switch: str, rundir: Path):
        self.net = net
        self.switch = switch
        self.rundir = rundir
        self.db = rundir / "conf.db"
        self.sock = rundir / "db.sock"
        self.vswitchd_ctl = rundir / "ovs-vswitchd.ctl"
        self.env = dict(os.environ, OVS_RUNDIR=str(rundir), OVS_LOGDIR=str(rundir),
                        OVS_DBDIR=str(rundir))

    def _wait_file(self, path: Path, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while not path.exists():
            if time.monotonic() > deadline:
                raise RuntimeError(f"OVS for {self.switch}: {path} did not appear in {timeout} s")
            time.sleep(0.05)

    def start(self) -> None:
        if not self.rundir.parent.exists():
            self.rundir.parent.mkdir(parents=True)
            self.net.ledger.record_dir(self.rundir.parent)
        self.rundir.mkdir(parents=True, exist_ok=True)
        subprocess.run(["ovsdb-tool", "create", str(self.db), str(SCHEMA)], check=True,
                       capture_output=True)
        log = self.net.workdir / f"ovsdb-server_{self.switch}.log"
        self.net.popen(self.switch, [
            "ovsdb-server", str(self.db), f"--remote=punix:{self.sock}",
            f"--unixctl={self.rundir / 'ovsdb-server.ctl'}", f"--log-file={log}",
            f"--pidfile={self.rundir / 'ovsdb-server.pid'}"],
            env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self._wait_file(self.sock)
        self.vsctl("--no-wait", "init")
        log = self.net.workdir / f"ovs-vswitchd_{self.switch}.log"
        self.net.popen(self.switch, [
            "ovs-vswitchd", f"unix:{self.sock}", f"--unixctl={self.vswitchd_ctl}",
            f"--log-file={log}", f"--pidfile={self.rundir / 'ovs-vswitchd.pid'}"],
            network_plane=True, env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self._wait_file(self.vswitchd_ctl)

    def vsctl(self, *args: str) -> str:
        res = subprocess.run(["ovs-vsctl", f"--db=unix:{self.sock}", "--timeout=30", *args],
                             capture_output=True, text=True, env=self.env, check=False)
        if res.returncode != 0:
            raise RuntimeError(f"ovs-vsctl {' '.join(args)} failed for {self.switch}: "
                               f"{res.stderr.strip()}")
        return res.stdout

    def appctl(self, *args: str) -> str:
        """Output of `ovs-appctl` against this instance; RuntimeError (with OVS's message)
        when it fails: an error must never read as an empty table."""
        res = subprocess.run(["ovs-appctl", "-t", str(self.vswitchd_ctl), *args],
                             capture_output=True, text=True, env=self.env, check=False,
                             timeout=30)
        if res.returncode != 0:
            raise RuntimeError(f"ovs-appctl {' '.join(args)} failed for {self.switch}: "
                               f"{(res.stderr or res.stdout).strip()}")
        return res.stdout

    def add_bridge(self, name: str, ports: list[str], datapath: str, settings: list[str]) -> None:
        args = ["add-br", name, "--", "set", "bridge", name, f"datapath_type={datapath}",
                "fail_mode=standalone", *settings]
        for port in ports:
            args += ["--", "add-port", name, port]
        self.vsctl(*args)
        self.net.cmd(self.switch, f"ip link set {name} up")

    def readback(self, bridge: str, rename: dict[str, str]) -> dict[str, Any]:
        """Snooping settings as stored, and the learnt group table (ports by logical name)."""
        snoop = self.vsctl("get", "bridge", bridge, "mcast_snooping_enable").strip()
        other = self.vsctl("get", "bridge", bridge, "other_config").strip()
        # One call for every port (one per port cost ~1.5 s per read-back at 150 ports).
        listing = self.vsctl("-f", "csv", "--no-headings", "--columns=name,ofport",
                             "list", "interface")
        ofports = {}
        for line in listing.splitlines():
            iface, _, ofport = line.partition(",")
            iface = iface.strip().strip('"')
            if iface in rename:
                ofports[ofport.strip()] = rename[iface]
        # With snooping off OVS keeps no table (mdb/show fails: "multicast snooping is
        # disabled"); with it on, a failure raises rather than reading as "no members".
        raw = self.appctl("mdb/show", bridge) if snoop == "true" else ""
        mdb = {g: [ofports.get(p, p) for p in ps]
               for g, ps in snooping.parse_ovs_mdb(raw).items()}
        return {"kind": "ovs", "settings": {"mcast_snooping_enable": snoop,
                                            "other_config": other,
                                            "querier": "none (OVS has no IGMP querier)"},
                "mdb": mdb, "mdb_raw": raw}


class OvsKernel(SwitchKind):
    """OVS with the kernel datapath (the openvswitch module)."""

    name: ClassVar[str] = "ovs-kernel"
    needs: ClassVar[str] = "ovs-kernel"
    offload_off: ClassVar[bool] = True
    prunes_without_querier: ClassVar[bool] = True
    datapath: ClassVar[str] = "system"

    def start(self, net: SwitchSite, sw: str) -> None:
        p = net.spec.params
        ports = [port for _, port, _ in net.switch_ports(sw)]
        lines = [f"ethtool -K {port} tx off rx off >/dev/null 2>&1 || true; "
                 f"ip link set {port} {net.mtu()}up" for port in ports]
        if sw == net.fail_on:
            lines.append("ip link set dev mcl-injected up")
        net.sh(sw, lines, "preparing the OVS ports")
        net.step = ("starting Open vSwitch", sw)
        inst = OvsInstance(net, sw, net.private / f"ovs-{sw}")
        net.switch_control[sw] = inst
        inst.start()
        inst.add_bridge(net.real_name(sw), ports, self.datapath,
                        snooping.ovs_bridge_settings(p["snooping"], p["flood_unregistered"]))

    def state(self, net: SwitchSite, sw: str) -> dict[str, Any]:
        return net.switch_control[sw].readback(net.real_name(sw), logical_ports(net, sw))


class OvsUser(OvsKernel):
    """OVS with the userspace (netdev) datapath: needs only /dev/net/tun."""

    name: ClassVar[str] = "ovs-user"
    needs: ClassVar[str] = "ovs-user"
    datapath: ClassVar[str] = "netdev"


class Ovs(OvsUser):
    """`switch=ovs`: the kernel datapath where this machine has it, else userspace."""

    name: ClassVar[str] = "ovs"
    needs: ClassVar[str] = "ovs-user"

    def resolve(self) -> SwitchKind:
        return OvsKernel() if capabilities.detect()["ovs-kernel"] else OvsUser()
