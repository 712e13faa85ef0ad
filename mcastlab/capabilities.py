"""What this machine can emulate: kernel features and tools, detected once per process.

Each capability has a name used by topology specs (`needs`) and, when missing, a message
naming the missing piece and the alternative.
"""

from __future__ import annotations

import functools
import grp
import gzip
import os
import shutil
import subprocess
from pathlib import Path

from mcastlab.paths import FRR_LIBEXEC, SMCROUTECTL, SMCROUTED, VTYSH

CGROUP_ROOT = Path("/sys/fs/cgroup")

# name -> (what is missing, the alternative) shown when a scenario needs it.
MESSAGES: dict[str, tuple[str, str]] = {
    "ovs-kernel": ("OVS kernel datapath unavailable (no openvswitch module)",
                   "use switch=ovs-user or switch=linuxbridge"),
    "ovs-user": ("Open vSwitch userspace tools missing (ovsdb-server, ovs-vswitchd, ovs-vsctl)",
                 "install openvswitch-switch or use switch=linuxbridge"),
    "netem": ("netem qdisc unavailable (sch_netem module missing), needed for delay/loss",
              "drop the delay/loss parameters or run on a machine with sch_netem"),
    "htb": ("HTB qdisc unavailable, needed for bandwidth limits", "drop the bw parameter"),
    "mroute": ("kernel multicast routing unavailable (CONFIG_IP_MROUTE)",
               "use a lan topology"),
    "pim": ("kernel PIM-SM v2 support unavailable (CONFIG_IP_PIMSM_V2)",
            "use mrouting=smcroute or a lan topology"),
    "pimd": ("pimd not installed", "apt-get install pimd, or use mrouting=smcroute"),
    "smcroute": (f"smcroute not found at {SMCROUTED}", "run ./setup.sh, or use mrouting=pimd"),
    "frr": ("FRR's zebra/pimd not found in .deps/frr or /usr/lib/frr, or group frrvty missing",
            "run ./setup.sh, or use pim_daemon=pimd"),
    "bridge": ("Linux bridge tools missing (brctl/bridge)",
               "apt-get install bridge-utils iproute2"),
    "tcpdump": ("tcpdump not installed", "apt-get install tcpdump"),
    "mininet": ("Mininet's mnexec not installed", "apt-get install mininet"),
    "vxlan": ("VXLAN devices unavailable (CONFIG_VXLAN), needed for emulated_servers > 1",
              "use emulated_servers = 1"),
    "uml": ("user-mode Linux (linux.uml) or /dev/net/tun missing, needed for routers with "
            "their own kernel (router_kernel=uml)",
            "apt-get install user-mode-linux (setup.sh does), or router_kernel=host on a kernel "
            "with multicast routing"),
    "cpulimit": ("no cgroup CPU controller (v1 /sys/fs/cgroup/cpu or v2 with 'cpu'), needed "
                 "for CPU-limited hosts", "drop the cpu parameter"),
}


def _run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, check=False, timeout=10)


def _module_loaded_or_builtin(name: str) -> bool:
    if Path(f"/sys/module/{name}").exists():
        return True
    release = os.uname().release
    builtin = Path(f"/lib/modules/{release}/modules.builtin")
    if builtin.exists() and f"/{name}.ko" in builtin.read_text():
        return True
    # A loadable module only counts when it can be loaded here.
    return _run(["modprobe", "-q", name]).returncode == 0 and Path(f"/sys/module/{name}").exists()


def _qdisc_works(kind: str, args: list[str]) -> bool:
    """Try the qdisc on a throw-away dummy link inside a fresh network namespace."""
    if shutil.which("unshare") is None:
        return False
    script = (
        "ip link add q0 type veth peer name q1 && ip link set q0 up && "
        f"tc qdisc add dev q0 root {kind} {' '.join(args)}"
    )
    return _run(["unshare", "-n", "sh", "-c", script]).returncode == 0


def _kernel_config() -> str:
    gz = Path("/proc/config.gz")
    if gz.exists():
        return gzip.decompress(gz.read_bytes()).decode(errors="replace")
    boot = Path(f"/boot/config-{os.uname().release}")
    return boot.read_text() if boot.exists() else ""


def _mroute_works() -> tuple[bool, bool]:
    """(multicast routing, PIM) as seen from a fresh network namespace."""
    if shutil.which("unshare") is None:
        return False, False
    probe = _run(["unshare", "-n", "sh", "-c", "test -e /proc/net/ip_mr_vif && echo mr"])
    mroute = "mr" in probe.stdout
    text = _kernel_config()
    if text:
        pim = "CONFIG_IP_PIMSM_V2=y" in text
    else:
        # No kernel config to read: the pimreg device can only be made with PIM-SM v2.
        pim = mroute and Path("/proc/net/ip_mr_cache").exists()
    return mroute, pim


def frr_missing() -> str | None:
    """None when FRR can run here, else what is missing."""
    missing = [str(p) for p in (FRR_LIBEXEC / "zebra", FRR_LIBEXEC / "pimd", VTYSH)
               if not p.exists()]
    if missing:
        return f"FRR not found ({', '.join(missing)}): run ./setup.sh, or use pim_daemon=pimd"
    try:
        grp.getgrnam("frrvty")
    except KeyError:
        return "FRR needs the group frrvty: groupadd --system frrvty (setup.sh does)"
    return None


def cgroup_cpu_version(root: Path = CGROUP_ROOT) -> int | None:
    """1 or 2: which cgroup hierarchy can limit CPU here; None when neither can."""
    if (root / "cgroup.controllers").exists():
        ctrls = (root / "cgroup.controllers").read_text().split()
        return 2 if "cpu" in ctrls else None
    if (root / "cpu" / "cpu.cfs_quota_us").exists():
        return 1
    return None


@functools.cache
def detect() -> dict[str, bool]:
    """Detect every capability once; returns {name: available}."""
    tools_ovs = all(shutil.which(t) for t in ("ovsdb-server", "ovs-vswitchd", "ovs-vsctl",
                                                "ovsdb-tool"))
    mroute, pim = _mroute_works()
    return {
        "ovs-kernel": tools_ovs and _module_loaded_or_builtin("openvswitch"),
        "ovs-user": tools_ovs and Path("/dev/net/tun").exists(),
        "netem": _qdisc_works("netem", ["delay", "1ms"]),
        "htb": _qdisc_works("htb", ["default", "1"]),
        "mroute": mroute,
        "pim": pim,
        "pimd": shutil.which("pimd") is not None,
        "smcroute": SMCROUTED.exists() and SMCROUTECTL.exists(),
        "frr": frr_missing() is None,
        "bridge": shutil.which("bridge") is not None and shutil.which("brctl") is not None,
        "tcpdump": shutil.which("tcpdump") is not None,
        "mininet": shutil.which("mnexec") is not None,
        "cpulimit": cgroup_cpu_version() is not None,
        "uml": shutil.which("linux.uml") is not None and Path("/dev/net/tun").exists(),
        "vxlan": _run(["unshare", "-n", "ip", "link", "add", "vx0", "type", "vxlan", "id", "1",
                       "dstport", "4789"]).returncode == 0 if shutil.which("unshare") else False,
    }


def missing(needs: list[str]) -> list[str]:
    """Messages for each needed capability that is absent (empty list when all present)."""
    have = detect()
    out = []
    for name in needs:
        if not have.get(name, False):
            what, alternative = MESSAGES[name]
            out.append(f"{what}: {alternative}")
    return out
