"""Snooping on a switched LAN, Linux bridge and OVS userspace.

        h1 (sender)
         |
   h2 -- s1 -- h4 (non-member)
         |
         h3
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

import topologies
from topologies import probe

pytestmark = pytest.mark.timeout(240)

COUNT = 1000  # packets in the counted stream


def _run(params: dict, workdir: Path) -> dict:
    spec = topologies.resolve("lan", {"hosts": 4, **params})
    with topologies.build(spec, workdir=workdir) as net:
        net.wait_converged(60)
        return probe.probe(net, "h1", ["h2", "h3"], count=COUNT, rate=1000)


def test_linux_bridge_snooping_with_querier_prunes_the_non_member(workdir: Path) -> None:
    r = _run({"snooping": "on", "querier": "on"}, workdir)
    for member in ("h2", "h3"):
        assert r["hosts"][member]["received"] >= 0.99 * COUNT, r["hosts"]
    # Exactly 0: h4 never joined, the bridge's mdb holds only h2/h3 ports.
    assert r["hosts"]["h4"]["wire"] == 0, r["hosts"]
    mdb = r["multicast_state"]["switches"]["s1"]["mdb"]
    assert mdb["239.1.2.3"] == ["s1-eth2", "s1-eth3"]
    assert r["switch_ports_tx"]["s1"]["s1-eth4"] < 10  # no stream out of h4's port
    assert r["ok"]


def test_linux_bridge_without_snooping_floods_the_non_member(workdir: Path) -> None:
    r = _run({"snooping": "off"}, workdir)
    for member in ("h2", "h3"):
        assert r["hosts"][member]["received"] >= 0.99 * COUNT
    # Flooding: the non-member's interface sees the whole stream (its kernel drops it).
    assert r["hosts"]["h4"]["wire"] >= 0.99 * COUNT
    assert r["hosts"]["h4"]["must_be_zero"] is False and r["ok"]


def _iperf_succeeded(stdout: str) -> bool:
    try:
        report = json.loads(stdout)
    except ValueError:
        return False
    return "error" not in report and "end" in report


@pytest.mark.parametrize(("snooping", "non_member_gets_stream"), [("on", False), ("off", True)])
def test_ovs_userspace_snooping(workdir: Path, snooping: str, non_member_gets_stream: bool) -> None:
    spec = topologies.resolve("lan", {"hosts": 4, "switch": "ovs-user", "snooping": snooping})
    with topologies.build(spec, workdir=workdir) as net:
        net.wait_converged(60)
        r = probe.probe(net, "h1", ["h2", "h3"], count=COUNT, rate=500)
        # TCP works (checksum offload is off on every veth of the userspace datapath).
        # The server stays up across client attempts (the first may race its listen);
        # it is stopped by its recorded pid afterwards. iperf3 3.12 with -J can exit 0
        # on "connection refused", so success is a JSON report without an error.
        server = net.popen("h2", ["iperf3", "-s", "-B", net.host_ip("h2")],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        client = None
        try:
            for _ in range(50):
                client = net.run("h1", ["iperf3", "-c", net.host_ip("h2"), "-t", "1", "-J"])
                if client.returncode == 0 and _iperf_succeeded(client.stdout):
                    break
                subprocess.run(["sleep", "0.2"], check=False)
        finally:
            server.terminate()
            server.wait(timeout=10)
        assert client is not None and client.returncode == 0, client.stderr
        assert '"bits_per_second"' in client.stdout
    for member in ("h2", "h3"):
        assert r["hosts"][member]["received"] >= 0.99 * COUNT, r["hosts"]
    if non_member_gets_stream:
        assert r["hosts"]["h4"]["wire"] >= 0.99 * COUNT
    else:
        assert r["hosts"]["h4"]["wire"] == 0  # exactly 0: OVS learnt only h2 and h3
    assert r["multicast_state"]["switches"]["s1"]["settings"]["mcast_snooping_enable"] == (
        "true" if snooping == "on" else "false")


def test_delay_without_netem_fails_before_building(monkeypatch: pytest.MonkeyPatch) -> None:
    """A delay without netem fails before building: nothing is created (no ledger appears)
    and the message names netem."""
    from mcastlab import capabilities
    from mcastlab.paths import STATE_DIR

    if capabilities.detect()["netem"]:
        pytest.skip("this machine has netem")
    before = set(STATE_DIR.glob("*.ledger")) if STATE_DIR.exists() else set()
    spec = topologies.resolve("lan", {"delay": "10ms", "loss": 1})
    with pytest.raises(topologies.TopologyParamError, match="netem qdisc unavailable"), \
            topologies.build(spec):
        pass
    after = set(STATE_DIR.glob("*.ledger")) if STATE_DIR.exists() else set()
    assert after == before
    res = subprocess.run([".venv/bin/mcastlab", "probe", "lan", "--param", "delay=5ms",
                          "--sender", "h1", "--members", "all"], capture_output=True, text=True,
                         cwd=Path(__file__).resolve().parents[2], check=False)
    assert res.returncode == 2
    assert "netem qdisc unavailable" in res.stderr and "drop the delay/loss" in res.stderr


def test_each_host_has_its_own_shared_memory(workdir: Path) -> None:
    """Same-host pairs: a shared-memory transport reaches only its own emulated host, POSIX
    (/dev/shm: Fast DDS) or System V (RTI Connext). Each host has a private tmpfs on
    /dev/shm (its own mount namespace) and its own IPC namespace: what one host creates
    there is seen neither by another host nor by the machine, and goes with the host."""
    probe_name = f"mcastlab-shm-probe-{workdir.name}"
    root_sysv = subprocess.run(["ipcs", "-m"], capture_output=True, text=True).stdout
    spec = topologies.resolve("lan", {"hosts": 2})
    with topologies.build(spec, workdir=workdir) as net:
        # entering the host's mount namespace keeps our working directory: relative paths
        # (make run's `--results results/...`) mean the same inside a host
        assert net.run("h1", ["pwd"]).stdout.strip() == os.getcwd()
        w = net.run("h1", ["sh", "-c", f"echo x > /dev/shm/{probe_name} && "
                                       "grep ' /dev/shm ' /proc/self/mounts"])
        assert w.returncode == 0 and w.stdout.splitlines()[-1].startswith("mcastlab-shm "), w
        assert net.run("h1", ["ls", "/dev/shm"]).stdout.split() == [probe_name]
        assert probe_name not in net.run("h2", ["ls", "/dev/shm"]).stdout
        assert probe_name not in subprocess.run(["ls", "/dev/shm"], capture_output=True,
                                                text=True).stdout
        # System V: a segment made by a process of h1 (ipcmk exits, the segment stays in
        # h1's IPC namespace) is listed there and nowhere else
        made = net.run("h1", ["ipcmk", "-M", "4096"])
        assert made.returncode == 0 and "Shared memory id" in made.stdout, made
        assert net.run("h1", ["ipcs", "-m"]).stdout.count("0x") == 1  # one segment: its key
        assert net.run("h2", ["ipcs", "-m"]).stdout.count("0x") == 0
        assert subprocess.run(["ipcs", "-m"], capture_output=True,
                              text=True).stdout == root_sysv
    mounts = Path("/proc/self/mounts").read_text()
    assert "mcastlab-shm" not in mounts
