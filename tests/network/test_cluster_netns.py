"""Issue 16: a network over two servers controlled over ssh, on one machine (the second
server: tests/network/second_server.py, its own namespaces, sshd, /run and ledger).

   server 1 (this machine's root namespace)     server 2 (ssh root@10.253.0.2)
   s1, h1 (sender), h3 (member)  ====VXLAN====  h2 (member), h4 (non-member)

What this shows: nodes made and driven over ssh (their shells, every command and the
probe's receivers run on server 2, recorded in its own ledger); multicast and IGMP
snooping across the VXLAN tunnels between the servers' root namespaces; nothing left on
either server after teardown, or after a SIGKILL of the controller and `mcastlab clean`.
PIM across the servers (r2 and its pimd on server 2) is in the campaign test
(tests/campaign/test_cluster_campaign_netns.py). What this does not show: a physical
network between machines, two kernels, two clocks.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import topologies
from mcastlab import ledger
from mcastlab.paths import REPO_ROOT, STATE_DIR
from tests.network.second_server import SecondServer
from topologies import probe
from topologies.net import neighbour_need

pytestmark = [pytest.mark.netns, pytest.mark.timeout(300)]

COUNT = 1000


@pytest.fixture(scope="module")
def server2() -> Iterator[SecondServer]:
    with SecondServer() as srv:
        yield srv


def _nothing_left(srv: SecondServer, tag: str) -> None:
    """No process in server 2's namespace but its sshd, no ledger, no staging directory,
    no link of `tag` on either side (polled: killed processes take a moment)."""
    deadline = time.monotonic() + 10
    while srv.processes() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert srv.processes() == []
    assert srv.inside(["ls", "/run/mcastlab"]).split() == []
    assert not list(Path("/var/tmp").glob(f"mcastlab-{tag}-*"))
    assert tag not in srv.inside(["ip", "-o", "link"])
    assert tag not in subprocess.run(["ip", "-o", "link"], capture_output=True,
                                     text=True).stdout


def test_snooped_lan_across_two_ssh_servers(server2: SecondServer, workdir: Path) -> None:
    spec = topologies.resolve("lan", {"hosts": 4, "snooping": True, "querier": True})
    with topologies.build(spec, workdir=workdir, cluster=server2.config()) as net:
        tag = net.tag
        net.wait_converged(60)
        remote_ledger = server2.inside(["cat", f"/run/mcastlab/{tag}.ledger"])
        # primed as across routers: the remote receivers report their first datagram
        r = probe.probe(net, "h1", ["h2", "h3"], count=COUNT, rate=1000, prime=5)
        described = net.describe()["cluster"]
        h2_link = net.cmd("h2", "ip -d -o link show h2-eth0")
        # A command on server 2 that outlasts its timeout is stopped there, not only its
        # ssh client here (which left the ssh master holding the output pipes: run()
        # returned only when the command ended by itself).
        t0 = time.monotonic()
        timed_out = net.run("h2", ["sleep", "120"], timeout=1)
        assert time.monotonic() - t0 < 20, "run() waited for the remote command to end"
        sleeps = [json.loads(x) for x in server2.inside(["cat", f"/run/mcastlab/{tag}.ledger"])
                  .splitlines() if '"sleep"' in x]
        deadline = time.monotonic() + 5
        while (any(ledger.proc_alive(e["pid"], e["start"]) for e in sleeps)
               and time.monotonic() < deadline):
            time.sleep(0.1)
        assert timed_out.returncode == -9 and sleeps
        assert not any(ledger.proc_alive(e["pid"], e["start"]) for e in sleeps), sleeps
    # h2 and h4 live on server 2: their shells were recorded in its ledger, as "shell"
    recorded = [json.loads(line) for line in remote_ledger.splitlines()]
    shells = {e["node"] for e in recorded if e.get("what") == "shell"}
    assert shells == {"h2", "h4"}, recorded
    assert described["placement"] == {"srv1": ["s1", "h1", "h3"], "srv2": ["h2", "h4"]}
    assert described["servers"]["srv2"]["max_sessions"] == 64
    # server 2's session saw the network's need (its table is this machine's: not visible
    # from its namespace, so unchanged there and said so)
    room = described["servers"]["srv2"]["neighbour_table"]
    assert room["needed"] == neighbour_need(spec) and "not visible" in room["unchanged"], room
    assert "vxlan id" in h2_link and "mtu 1450" in h2_link
    hosts = r["hosts"]
    assert hosts["h2"]["received"] >= 0.99 * COUNT, hosts  # across the tunnel, over ssh
    assert hosts["h3"]["received"] >= 0.99 * COUNT, hosts
    assert hosts["h4"]["wire"] == 0, hosts  # pruned by s1: not a frame across the tunnel
    assert r["primed_s"]["h2"] is not None and r["primed_s"]["h3"] is not None, r["primed_s"]
    assert r["ok"]
    _nothing_left(server2, tag)


RUNNER = r"""
import json, subprocess, sys, time
sys.path.insert(0, sys.argv[2])
import topologies
from topologies.cluster import ClusterConfig
config = ClusterConfig(**json.loads(sys.argv[3]))
spec = topologies.resolve("lan", {"hosts": 4, "snooping": True, "querier": True})
ctx = topologies.build(spec, workdir=sys.argv[1], cluster=config)  # kept: no teardown
net = ctx.__enter__()
cap = net.popen("h2", ["tcpdump", "-ni", "h2-eth0", "-w",
                       net.output_path("h2", __import__("pathlib").Path(sys.argv[1]) / "h2.pcap")],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
# Not interruptible (exec'd by cluster-exec, as a long net.cmd line is): it ignores the
# end of its ssh session, so it outlives the controller until `mcastlab clean`.
net.ledger.spawn(net.node("h2").wrap(["sleep", "3600"], "sleep"), "h2", "ssh",
                 stdin=subprocess.DEVNULL, start_new_session=True)
print("READY", net.tag, flush=True)
time.sleep(3600)
"""


@pytest.mark.parametrize("killed", ["controller", "controller-and-session"])
def test_clean_after_sigkill_leaves_nothing_on_either_server(server2: SecondServer,
                                                             tmp_path: Path,
                                                             killed: str) -> None:
    """SIGKILL of the controller: server 2's session sees its connection end and undoes
    what its ledger lists. SIGKILL of that session too (a hung connection, an OOM kill):
    what server 2 still runs waits for `mcastlab clean` on the controller, which finds it
    through the two ledgers. Either way nothing is left on either server."""
    c = server2.config()
    cfg = {"servers": list(c.servers), "identity": c.identity, "known_hosts": c.known_hosts}
    runner = subprocess.Popen([sys.executable, "-c", RUNNER, str(tmp_path), str(REPO_ROOT),
                               json.dumps(cfg)], stdout=subprocess.PIPE, text=True,
                              cwd=REPO_ROOT, start_new_session=True)
    tag = None
    try:
        line = runner.stdout.readline().split() if runner.stdout else []
        assert line and line[0] == "READY", "runner did not build its network"
        tag = line[1]
        remote_ledger = f"/run/mcastlab/{tag}.ledger"
        local = ledger.read_ledger(STATE_DIR / f"{tag}.ledger")
        deadline = time.monotonic() + 15  # tcpdump's ssh session may still be opening
        while True:
            there = [json.loads(x) for x in server2.inside(["cat", remote_ledger]).splitlines()]
            remote_procs = [e for e in there if e["kind"] == "proc"]
            if ({"tcpdump", "sleep"} <= {e["what"] for e in remote_procs}
                    or time.monotonic() > deadline):
                break
            time.sleep(0.1)
        assert {"shell", "tcpdump", "sleep"} <= {e["what"] for e in remote_procs}
        assert any(e["kind"] == "remote" for e in local)
        session = next(e for e in there if e["kind"] == "owner")
        sleeper = [e for e in remote_procs if e["what"] == "sleep"]

        if killed == "controller-and-session":
            assert ledger.signal_recorded(session["pid"], session["start"], signal.SIGKILL)
        runner.send_signal(signal.SIGKILL)
        runner.wait(timeout=10)
        if killed == "controller":
            deadline = time.monotonic() + 15
            while server2.inside(["ls", "/run/mcastlab"]).split() and time.monotonic() < deadline:
                time.sleep(0.1)
            assert server2.inside(["ls", "/run/mcastlab"]).split() == []
            alive = [e for e in remote_procs if ledger.proc_alive(e["pid"], e["start"])]
            assert not alive, alive  # the session stopped even the sleep, which ignores EOF
        else:
            time.sleep(1)
            # sleep ignores its session's end: it lives on, and so does the ledger
            assert all(ledger.proc_alive(e["pid"], e["start"]) for e in sleeper)
            assert f"{tag}.ledger" in server2.inside(["ls", "/run/mcastlab"]).split()

        res = subprocess.run([str(REPO_ROOT / ".venv/bin/mcastlab"), "clean"],
                             capture_output=True, text=True, check=False, cwd=REPO_ROOT)
        assert res.returncode == 0, res.stderr
        assert f"{tag}: cleaned server srv2" in res.stdout, res.stdout
        if killed == "controller-and-session":
            assert f"stopped sleep pid {sleeper[0]['pid']} on h2" in res.stdout, res.stdout
        assert f"{tag}: ledger removed" in res.stdout
        assert not (STATE_DIR / f"{tag}.ledger").exists() and not (STATE_DIR / tag).exists()
        alive = [e for e in remote_procs if ledger.proc_alive(e["pid"], e["start"])]
        assert not alive, (alive, res.stdout)
        _nothing_left(server2, tag)
    finally:
        if runner.poll() is None:
            runner.kill()
        if tag and (STATE_DIR / f"{tag}.ledger").exists():  # the test failed half-way
            subprocess.run([str(REPO_ROOT / ".venv/bin/mcastlab"), "clean", "--tag", tag],
                           capture_output=True, check=False)
