"""`mcastlab clean` after SIGKILL removes exactly what the ledger lists.

   runner process (SIGKILLed)                 foreign, created before the test:
     routed: h1,h2 -- s1 (OVS) -- r1 (pimd)     - Linux bridge fx...b (root namespace)
             h3,h4 -- s2 (OVS) -- r2 (pimd)     - namespace fx...n
             + tcpdump on s1's port 1           - OVS bridge fx...o (its own ovsdb/vswitchd)
     segment 1 on emulated server srv1, segment 2 on srv2, r1 -- r2 a VXLAN tunnel over
     their underlay (nothing left on either server)
"""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from mcastlab import capabilities, ledger
from mcastlab.paths import REPO_ROOT, STATE_DIR
from tests.helpers import kernel_features
from tests.helpers.killcheck import assert_nothing_left

pytestmark = pytest.mark.timeout(240)

RUNNER = r"""
import sys, time, subprocess, topologies
spec = topologies.resolve("routed", {"routers": 2, "hosts": 2, "switch": "ovs-user",
                                     "emulated_servers": 2})
ctx = topologies.build(spec, workdir=sys.argv[1])
net = ctx.__enter__()  # daemons running (convergence is not what this test is about)
sw, intf = net.capture_points()["s1-eth1"]
net.popen(sw, ["tcpdump", "-ni", intf, "-w", sys.argv[1] + "/s1-eth1.pcap"],
          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print("READY", net.tag, flush=True)
time.sleep(3600)
"""


def _uml_processes(tag: str, gone_within: float = 0.0) -> list[int]:
    """Pids of this testbed's user-mode routers' processes (the kernel and its helpers all
    carry its umid on their command line); with `gone_within`, polled that long for none."""
    deadline = time.monotonic() + gone_within
    while True:
        pids = []
        mark = f"umid={tag}r".encode()
        for proc in Path("/proc").iterdir():
            try:
                if proc.name.isdigit() and mark in (proc / "cmdline").read_bytes():
                    pids.append(int(proc.name))
            except OSError:
                continue
        if not pids or time.monotonic() >= deadline:
            return pids
        time.sleep(0.2)


def _sh(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run(list(argv), capture_output=True, text=True, check=False)


class ForeignOvs:
    """An OVS instance the testbed knows nothing about (not in any ledger)."""

    def __init__(self, rundir: Path, netns: str, bridge: str):
        self.rundir, self.netns, self.bridge = rundir, netns, bridge
        self.db = f"unix:{rundir}/db.sock"
        self.env = dict(os.environ, OVS_RUNDIR=str(rundir), OVS_LOGDIR=str(rundir))
        self.procs: list[subprocess.Popen] = []

    def start(self) -> None:
        _sh("ovsdb-tool", "create", f"{self.rundir}/conf.db",
            "/usr/share/openvswitch/vswitch.ovsschema")
        ns = ["ip", "netns", "exec", self.netns]
        self.procs.append(subprocess.Popen(
            [*ns, "ovsdb-server", f"{self.rundir}/conf.db", f"--remote=punix:{self.rundir}/db.sock",
             f"--unixctl={self.rundir}/ovsdb.ctl"], env=self.env,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        for _ in range(200):
            if (self.rundir / "db.sock").exists():
                break
            time.sleep(0.05)
        subprocess.run(["ovs-vsctl", f"--db={self.db}", "--no-wait", "init"], check=True,
                       env=self.env, capture_output=True)
        self.procs.append(subprocess.Popen(
            [*ns, "ovs-vswitchd", self.db, f"--unixctl={self.rundir}/vswitchd.ctl"],
            env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        subprocess.run(["ovs-vsctl", f"--db={self.db}", "--timeout=60", "add-br", self.bridge,
                        "--", "set", "bridge", self.bridge, "datapath_type=netdev"],
                       check=True, env=self.env, capture_output=True)

    def bridge_exists(self) -> bool:
        res = subprocess.run(["ovs-vsctl", f"--db={self.db}", "--timeout=10", "br-exists",
                              self.bridge], env=self.env, capture_output=True, check=False)
        return res.returncode == 0

    def stop(self) -> None:
        for p in reversed(self.procs):
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    p.kill()


@kernel_features.routed
def test_clean_after_sigkill_spares_foreign_objects(tmp_path: Path) -> None:
    tag = "fx" + secrets.token_hex(3)
    f_bridge, f_netns, f_ovsbr = f"{tag}b", f"{tag}n", f"{tag}o"
    ovs = ForeignOvs(tmp_path, f_netns, f_ovsbr)
    runner = None
    try:
        assert _sh("ip", "link", "add", f_bridge, "type", "bridge").returncode == 0
        assert _sh("ip", "netns", "add", f_netns).returncode == 0
        ovs.start()
        assert ovs.bridge_exists()

        workdir = tmp_path / "runner"
        workdir.mkdir()
        runner = subprocess.Popen([sys.executable, "-c", RUNNER, str(workdir)],
                                  stdout=subprocess.PIPE, text=True, cwd=REPO_ROOT,
                                  start_new_session=True)
        line = runner.stdout.readline().split()
        assert line and line[0] == "READY", "runner did not build its topology"
        our_tag = line[1]
        entries = ledger.read_ledger(STATE_DIR / f"{our_tag}.ledger")
        procs = [e for e in entries if e["kind"] == "proc"]
        whats = {e["what"] for e in procs}
        assert {"shell", "pimd", "ovsdb-server", "ovs-vswitchd", "tcpdump"} <= whats
        # Where the host kernel cannot route multicast the routers bring their own
        # (router_kernel=uml): each a recorded process, its helpers in its pid namespace.
        uml = sorted(Path(tempfile.gettempdir()).glob(f"mcastlab-{our_tag}-uml-r*"))
        if not capabilities.detect()["mroute"]:
            assert len(uml) == 2, uml  # r1's and r2's state directories
            assert "linux.uml" in whats
            assert _uml_processes(our_tag), "no user-mode router process found"
        shells = {e["node"] for e in procs if e["what"] == "shell"}
        assert {"srv1", "srv2", "ul"} <= shells  # the emulated servers and their underlay
        # Every long-lived process is running (commands run to completion on a user-mode
        # router, each recorded as it starts, have ended).
        daemons = {"shell", "pimd", "ovsdb-server", "ovs-vswitchd", "tcpdump", "linux.uml"}
        assert all(ledger.proc_alive(e["pid"], e["start"]) for e in procs
                   if e["what"] in daemons)

        runner.send_signal(signal.SIGKILL)
        runner.wait(timeout=10)
        # The runner is gone but everything it started lives on until `mcastlab clean`.
        assert any(ledger.proc_alive(e["pid"], e["start"]) for e in procs)

        res = subprocess.run([str(REPO_ROOT / ".venv/bin/mcastlab"), "clean"],
                             capture_output=True, text=True, check=False, cwd=REPO_ROOT)
        assert res.returncode == 0, res.stderr
        assert f"{our_tag}: ledger removed" in res.stdout

        # every recorded process gone (polled: SIGKILLed ones take a moment), every link
        # and namespace with it, and the ledger
        assert_nothing_left({STATE_DIR / f"{our_tag}.ledger": entries}, {})
        assert not (STATE_DIR / our_tag).exists()
        # No user-mode router, none of its helper processes, no state directory, no tap.
        assert not _uml_processes(our_tag, gone_within=10)
        assert not any(p.exists() for p in uml)
        assert our_tag not in _sh("ip", "-o", "link", "show").stdout
        # Foreign objects are untouched.
        assert f_bridge in _sh("ip", "-o", "link", "show", "dev", f_bridge).stdout
        assert f_netns in _sh("ip", "netns", "list").stdout
        assert ovs.bridge_exists()
        assert all(p.poll() is None for p in ovs.procs)
    finally:
        if runner is not None and runner.poll() is None:
            runner.kill()
        ovs.stop()
        _sh("ip", "netns", "del", f_netns)
        _sh("ip", "link", "del", f_bridge)
