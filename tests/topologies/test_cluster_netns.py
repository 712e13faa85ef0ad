"""A network over two servers controlled over ssh, on one machine (the second
server: tests/helpers/second_server.py, its own namespaces, sshd, /run and ledger).

   server 1 (this machine's root namespace)     server 2 (ssh root@10.253.0.2)
   s1, h1 (sender), h3 (member)  ====VXLAN====  h2 (member), h4 (non-member)

What this shows: nodes made and driven over ssh (their shells, every command and the
probe's receivers run on server 2, recorded in its own ledger); multicast and IGMP
snooping across the VXLAN tunnels between the servers' root namespaces; nothing left on
either server after teardown, or after a SIGKILL of the controller and `mcastlab clean`.
PIM across the servers (r2 and its pimd on server 2) is in the campaign test
(tests/experiments/test_cluster_campaign_netns.py). What this does not show: a physical
network between machines, two kernels, two clocks.

Hardening: a server holding a live testbed with the controller's tag keeps all of it when
the controller's session is refused and torn down; a server whose code cannot be verified
(a changed tracked file, no readable git revision) is refused before anything is made
there, or run with the override and recorded; a remote clean that fails keeps its entry,
and `mcastlab clean` from another directory finishes it once the server answers.

Server 2 runs this very checkout (it shares the files), so the same-code check has
nothing to compare in the other tests: they set the override (`allow_unverified_revision`)
and run in an edited checkout too; the refusal is tested where server 2 is given other
code (a file bind-mounted over one of the checkout's in its mount namespace only).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import topologies
from mcastlab import ledger
from mcastlab.errors import BuildError
from mcastlab.paths import REPO_ROOT, STATE_DIR
from mcastlab.provenance import code_state
from tests.helpers.second_server import SERVER_ADDR, SecondServer
from topologies import probe
from topologies.cluster import MCASTLAB
from topologies.neighbours import neighbour_need

pytestmark = pytest.mark.timeout(300)

COUNT = 1000


@pytest.fixture(scope="module")
def server2() -> Iterator[SecondServer]:
    with SecondServer() as srv:
        yield srv


def _config(srv: SecondServer) -> Any:
    """Server 2 as [cluster], with the override: it runs this checkout (module docstring)."""
    return srv.config(allow_unverified_revision=True)


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
    with topologies.build(spec, workdir=workdir, cluster=_config(server2)) as net:
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


# A controller that builds a network over the two servers and is never torn down (it is
# SIGKILLed): argv work directory, the checkout, its [cluster] table (read from the current
# directory, as a scenario's is), the number of hosts.
RUNNER = r"""
import json, subprocess, sys, time
sys.path.insert(0, sys.argv[2])
import topologies
from topologies.cluster import ClusterConfig
config = ClusterConfig.from_section(json.loads(sys.argv[3]), "test")
spec = topologies.resolve("lan", {"hosts": int(sys.argv[4]), "snooping": True,
                                  "querier": True})
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
    runner = _start_runner(tmp_path, server2.section(allow_unverified_revision=True),
                           REPO_ROOT, hosts=4)
    tag = None
    try:
        tag = _ready(runner)
        local = ledger.read_ledger(STATE_DIR / f"{tag}.ledger")
        there, remote_procs = _remote_procs(server2, tag)
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
        _stop_runner(runner, tag)


def _start_runner(workdir: Path, section: dict[str, Any], cwd: Path,
                  hosts: int) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", RUNNER, str(workdir), str(REPO_ROOT),
                             json.dumps(section), str(hosts)], stdout=subprocess.PIPE,
                            text=True, cwd=cwd, start_new_session=True)


def _ready(runner: subprocess.Popen[str]) -> str:
    """The runner's tag, once its network is built."""
    line = runner.stdout.readline().split() if runner.stdout else []
    assert line and line[0] == "READY", "runner did not build its network"
    return line[1]


def _remote_procs(srv: SecondServer, tag: str) -> tuple[list[dict], list[dict]]:
    """Server 2's ledger of `tag` and its processes, once the runner's tcpdump and sleep
    are recorded there (their ssh sessions may still be opening)."""
    deadline = time.monotonic() + 15
    while True:
        there = [json.loads(x) for x in
                 srv.inside(["cat", f"/run/mcastlab/{tag}.ledger"]).splitlines()]
        procs = [e for e in there if e["kind"] == "proc"]
        if {"tcpdump", "sleep"} <= {e["what"] for e in procs} or time.monotonic() > deadline:
            return there, procs
        time.sleep(0.1)


def _stop_runner(runner: subprocess.Popen[str], tag: str | None) -> None:
    if runner.poll() is None:
        runner.kill()
    if tag and (STATE_DIR / f"{tag}.ledger").exists():  # the test failed half-way
        subprocess.run([str(MCASTLAB), "clean", "--tag", tag], capture_output=True,
                       check=False)


def test_a_failed_remote_clean_keeps_its_entry_and_a_later_clean_elsewhere_finishes(
        server2: SecondServer, tmp_path: Path) -> None:
    """The controller and server 2's session SIGKILLed (server 2 keeps what its
    ledger lists), then `mcastlab clean` while server 2 does not answer (its link down):
    the controller's ledger keeps the entry and says so; once server 2 answers, `mcastlab
    clean` from another directory cleans it. The [cluster]'s key files are given relative
    to the runner's directory, as a scenario next to them would."""
    section = {"servers": ["localhost", SERVER_ADDR], "identity": "client_ed25519",
               "known_hosts": "known_hosts", "allow_unverified_revision": True}
    runner = _start_runner(tmp_path, section, server2.dir, hosts=2)
    tag = None
    try:
        tag = _ready(runner)
        there, remote_procs = _remote_procs(server2, tag)
        session = next(e for e in there if e["kind"] == "owner")
        sleeper = next(e for e in remote_procs if e["what"] == "sleep")
        assert ledger.signal_recorded(session["pid"], session["start"], signal.SIGKILL)
        runner.send_signal(signal.SIGKILL)
        runner.wait(timeout=10)
        path = STATE_DIR / f"{tag}.ledger"
        local_procs = [e for e in ledger.read_ledger(path) if e["kind"] == "proc"]

        subprocess.run(["ip", "link", "set", server2.link, "down"], check=True)
        try:
            res = subprocess.run([str(MCASTLAB), "clean", "--tag", tag], capture_output=True,
                                 text=True, check=False, cwd=server2.dir, timeout=180)
        finally:
            subprocess.run(["ip", "link", "set", server2.link, "up"], check=True)
        assert res.returncode == 1, res.stdout + res.stderr
        assert f"{tag}: server srv2 not cleaned (ssh exit 255): " in res.stdout, res.stdout
        assert res.stdout.splitlines()[-1] == (
            f"{tag}: ledger {path} kept for srv2, not cleaned: run `mcastlab clean --tag {tag}` "
            f"once it answers"), res.stdout
        kept = ledger.read_ledger(path)
        assert [e["kind"] for e in kept] == ["owner", "remote"] and kept[0]["released"]
        # what the controller itself held is gone; server 2's sleep waits for its clean
        assert not any(ledger.proc_alive(e["pid"], e["start"]) for e in local_procs)
        assert ledger.proc_alive(sleeper["pid"], sleeper["start"])

        res = subprocess.run([str(MCASTLAB), "clean", "--tag", tag], capture_output=True,
                             text=True, check=False, cwd=tmp_path, timeout=180)
        assert res.returncode == 0, res.stdout + res.stderr
        assert f"{tag}: cleaned server srv2\n" in res.stdout, res.stdout
        assert (f"{tag}: server srv2: {tag}: stopped sleep pid {sleeper['pid']} on h2"
                in res.stdout), res.stdout
        assert res.stdout.splitlines()[-1] == f"{tag}: ledger removed"
        assert not path.exists()
        _nothing_left(server2, tag)
    finally:
        _stop_runner(runner, tag)


# A testbed of server 2's own (not a cluster's), built inside its namespaces with the tag
# argv[2], a `sleep` on h1; it stays up until a line on stdin.
SERVER_TESTBED = r"""
import sys
sys.path.insert(0, sys.argv[1])
from mcastlab import ledger
ledger.new_tag = lambda: sys.argv[2]
import topologies
with topologies.build(topologies.resolve("lan", {"hosts": 2}), workdir=sys.argv[3]) as net:
    net.popen("h1", ["sleep", "3600"])
    print("READY", flush=True)
    sys.stdin.readline()
"""


def _links(srv: SecondServer) -> set[str]:
    return {line.split(":")[1].strip().split("@")[0]
            for line in srv.inside(["ip", "-o", "link"]).splitlines()}


def test_a_server_holding_the_tag_keeps_its_testbed(server2: SecondServer, workdir: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Server 2 runs a live testbed of its own whose tag is the one the
    controller gets. The controller's session there is refused (the tag is taken), and the
    teardown's remote clean runs: every process, link and ledger entry of server 2's testbed
    is still there, and the ledger file is unchanged."""
    tag = next(t for t in iter(ledger.new_tag, None) if not (STATE_DIR / f"{t}.ledger").exists())
    theirs = subprocess.Popen(
        ["nsenter", f"--target={server2.pid}", "--net", "--mount", "--", sys.executable, "-c",
         SERVER_TESTBED, str(REPO_ROOT), tag, "/tmp/server-testbed"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, start_new_session=True)
    try:
        assert theirs.stdout is not None and theirs.stdout.readline().strip() == "READY"
        their_ledger = server2.inside(["cat", f"/run/mcastlab/{tag}.ledger"])
        entries = [json.loads(x) for x in their_ledger.splitlines()]
        procs = [e for e in entries if e["kind"] == "proc"]
        links = {e["name"] for e in entries if e["kind"] == "link"}
        assert any(e["what"] == "sleep" for e in procs) and links <= _links(server2)

        monkeypatch.setattr(ledger, "new_tag", lambda: tag)  # the controller draws that tag
        spec = topologies.resolve("lan", {"hosts": 2})
        with (pytest.raises(BuildError) as err,
              topologies.build(spec, workdir=workdir, cluster=_config(server2))):
            pass
        assert "the session did not start: mcastlab cluster-session: refused on" in str(err.value)
        assert f"tag {tag!r} is taken: /run/mcastlab/{tag}.ledger exists (owner pid " \
               f"{entries[0]['pid']}, running); nothing was changed there" in str(err.value)
        assert not (STATE_DIR / f"{tag}.ledger").exists()  # the controller's teardown ran

        assert server2.inside(["cat", f"/run/mcastlab/{tag}.ledger"]) == their_ledger
        dead = [e for e in procs if not ledger.proc_alive(e["pid"], e["start"])]
        assert dead == [], dead
        assert links <= _links(server2), links - _links(server2)
        # a command of another session is not run, nor recorded, in that ledger either
        r = server2.ssh([str(MCASTLAB), "cluster-exec", "--tag", tag, "--session", "0" * 16,
                         "--node", "h1", "--what", "true", "--", "true"])
        assert r.returncode == 2 and "is not session" in r.stderr, r.stderr
        assert server2.inside(["cat", f"/run/mcastlab/{tag}.ledger"]) == their_ledger
    finally:
        if theirs.stdin is not None:
            theirs.stdin.close()  # server 2's testbed comes down by itself
        theirs.wait(timeout=60)
    assert f"{tag}.ledger" not in server2.inside(["ls", "/run/mcastlab"]).split()
    assert not any(ledger.proc_alive(e["pid"], e["start"]) for e in procs)


def _other_code(srv: SecondServer, state: str) -> tuple[Path, Path]:
    """(path in the checkout, what server 2 sees there instead): an edited tracked file,
    or a `.git` git cannot read (an unknown revision)."""
    if state == "dirty":
        edited = srv.dir / "README.md"
        edited.write_text((REPO_ROOT / "README.md").read_text() + "\nedited on server 2\n")
        return REPO_ROOT / "README.md", edited
    git = REPO_ROOT / ".git"
    empty = srv.dir / "empty-git"
    if git.is_dir():
        empty.mkdir(exist_ok=True)
    else:
        empty.write_text("")
    return git, empty


@pytest.mark.parametrize("state, why", [
    ("dirty", "tracked files changed since "),
    ("unknown", "git revision unknown: fatal: "),
])
def test_preflight_refuses_a_server_whose_code_cannot_be_verified(
        server2: SecondServer, workdir: Path, state: str, why: str) -> None:
    """Server 2 with a changed tracked file, or no readable revision, is refused
    before anything is made there, naming the server and why."""
    spec = topologies.resolve("lan", {"hosts": 2})
    with (server2.masked(*_other_code(server2, state)), pytest.raises(BuildError) as err,
          topologies.build(spec, workdir=workdir, cluster=server2.config())):
        pass
    message = str(err.value)
    assert message.startswith("checking the code on every server failed on ")
    assert f"srv2 ({SERVER_ADDR}): {why}" in message, message
    assert "or set allow_unverified_revision = true in [cluster] (recorded)" in message
    assert server2.inside(["ls", "/run/mcastlab"]).split() == [] and server2.processes() == []


def test_the_override_runs_and_records_what_each_server_ran(server2: SecondServer,
                                                            workdir: Path) -> None:
    spec = topologies.resolve("lan", {"hosts": 2})
    with (server2.masked(*_other_code(server2, "dirty")),
          topologies.build(spec, workdir=workdir, cluster=_config(server2)) as net):
        tag = net.tag
        described = net.describe()["cluster"]
        log = net.build_log.read_text()
    assert described["allow_unverified_revision"] is True
    ours, theirs = (described["servers"][s]["code"] for s in ("srv1", "srv2"))
    assert ours == code_state()
    assert theirs["revision"] == ours["revision"] and theirs["dirty"] is True
    assert theirs["diff_sha256"] != ours.get("diff_sha256")  # not this checkout's changes
    assert described["unverified"]["srv2"] == (f"tracked files changed since "
                                               f"{ours['revision'][:12]}")
    assert "allow_unverified_revision = true, run on unverified code" in log
    _nothing_left(server2, tag)


def test_a_checkout_owned_by_another_user_reads_as_unknown_and_says_why(
        tmp_path: Path) -> None:
    """Root over ssh in a checkout owned by another user: git refuses ("dubious
    ownership"), so the revision is unknown, with git's reason (a refusal in a cluster)."""
    repo = tmp_path / "checkout"
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(repo)]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "f").write_text("x\n")
    subprocess.run([*git, "add", "f"], check=True)
    subprocess.run([*git, "commit", "-qm", "f"], check=True)
    assert code_state(repo)["dirty"] is False
    for p in [repo, *repo.rglob("*")]:
        os.lchown(p, 65534, 65534)
    assert code_state(repo) == {
        "revision": None, "dirty": None,
        "unknown": f"fatal: detected dubious ownership in repository at '{repo}'"}
