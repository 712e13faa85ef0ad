"""Pure logic of a [cluster] (topologies/cluster.py): the section's validation,
what a cluster refuses to build, the ssh commands, the same-code check and the ledger's
remote entry (kept when its server cannot be cleaned, run only for its own session)."""

from __future__ import annotations

import doctest
import json
import shlex
import socket
from pathlib import Path

import pytest

import topologies
from mcastlab import ledger
from mcastlab.errors import TopologyParamError
from topologies import cluster, servers


def _config(tmp_path: Path, **over: object) -> cluster.ClusterConfig:
    key = tmp_path / "id"
    key.write_text("k")
    section = {"servers": ["localhost", "10.0.0.2"], "identity": str(key), **over}
    return cluster.ClusterConfig.from_section(section, "c.toml")


def test_a_valid_section_is_read(tmp_path: Path) -> None:
    c = _config(tmp_path, servers=["localhost", "root@10.0.0.2", "10.0.0.3"], port=2222)
    assert c.servers == ("localhost", "root@10.0.0.2", "10.0.0.3") and c.port == 2222


@pytest.mark.parametrize("over, words", [
    ({"servers": ["localhost"]}, "servers: expected a list of at least 2"),
    ({"servers": ["10.0.0.2", "localhost"]}, "servers[1] = 'localhost'"),
    ({"servers": ["localhost", "alice@10.0.0.2"]}, "as root@address"),
    ({"servers": ["localhost", "10.0.0.2; rm -rf /"]}, "servers[1]"),
    ({"servers": ["localhost", "10.0.0.2", "10.0.0.2"]}, "listed twice"),
    # The same server spelled twice, a host name (the VXLAN commands need addresses).
    ({"servers": ["localhost", "10.0.0.2", "root@10.0.0.2"]},
     "server 10.0.0.2 is listed twice"),
    ({"servers": ["localhost", "srv3.lab"]}, "servers[1] = 'srv3.lab': allowed: \"localhost\" "
                                             "as the first server only, else an IPv4 address"),
    ({"servers": ["localhost", "10.0.0.300"]}, "servers[1] = '10.0.0.300'"),
    ({"port": 0}, "port: expected an integer 1-65535"),
    ({"identity": "/nonexistent/key"}, "identity: expected the path of an existing file"),
    ({"hosts": 3}, "unknown key(s) hosts; allowed: servers, identity, known_hosts, port, place, "
                   "allow_unverified_revision"),
    ({"allow_unverified_revision": "yes"}, "allow_unverified_revision: expected true or false"),
    ({"place": {"h2": 3}}, "place: expected a table {node = server number} with server "
                           "numbers 1-2"),
])
def test_a_bad_section_is_refused_naming_file_key_and_allowed(tmp_path: Path, over: dict,
                                                              words: str) -> None:
    with pytest.raises(ValueError) as err:
        _config(tmp_path, **over)
    assert str(err.value).startswith("c.toml: [cluster]") and words in str(err.value)


@pytest.mark.parametrize("family, params, words", [
    ("routed", {"pim_daemon": "frr"}, "pim_daemon = 'frr'"),
    ("routed", {"router_kernel": "uml"}, "router_kernel = 'uml'"),
    ("lan", {"hosts": 4, "switch": "ovs"}, "switch = 'ovs'"),
    ("lan", {"hosts": 4, "cpu": 0.5}, "cpu"),
    ("lan", {"hosts": 4, "emulated_servers": 2}, "either emulated or real servers"),
    ("lan", {"hosts": 1}, "would leave servers empty"),
])
def test_what_a_cluster_cannot_build_is_refused_before_building(
        tmp_path: Path, family: str, params: dict, words: str) -> None:
    spec = topologies.resolve(family, params)
    with pytest.raises(TopologyParamError) as err:
        cluster.placement(spec, _config(tmp_path))
    assert words in str(err.value)


def test_placement_is_round_robin_and_tunnels_are_the_cross_server_links(tmp_path: Path) -> None:
    spec = topologies.resolve("lan", {"hosts": 4})
    where = cluster.placement(spec, _config(tmp_path))
    assert where == {"s1": 1, "h1": 1, "h2": 2, "h3": 1, "h4": 2}
    assert servers.tunnelled(spec, where) == [("h2", "s1"), ("h4", "s1")]
    routed = topologies.resolve("routed", {"routers": 3, "router_kernel": "host"})
    where = cluster.placement(routed, _config(tmp_path))
    assert {where[r] for r in ("r1", "r2", "r3")} == {1, 2}
    assert ("r1", "r2") in servers.tunnelled(routed, where)


def test_explicit_placement_overrides_round_robin_and_is_checked(tmp_path: Path) -> None:
    spec = topologies.resolve("lan", {"hosts": 4})
    where = cluster.placement(spec, _config(tmp_path, place={"s1": 2, "h1": 2}))
    assert where == {"s1": 2, "h1": 2, "h2": 2, "h3": 1, "h4": 2}
    assert servers.tunnelled(spec, where) == [("h3", "s1")]
    with pytest.raises(TopologyParamError, match=r"unknown node\(s\) h9; allowed: s1, h1"):
        cluster.placement(spec, _config(tmp_path, place={"h9": 1}))
    with pytest.raises(TopologyParamError, match="leaves srv1 without a node"):
        cluster.placement(spec, _config(tmp_path, place={n: 2 for n in where}))


def test_relative_key_paths_are_stored_absolute(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Checked from the current directory, so stored from it: the ledger's clean command
    (which carries them) then works from any directory."""
    (tmp_path / "id").write_text("k")
    (tmp_path / "kh").write_text("")
    monkeypatch.chdir(tmp_path)
    c = cluster.ClusterConfig.from_section(
        {"servers": ["localhost", "10.0.0.2"], "identity": "id", "known_hosts": "./kh"}, "c.toml")
    assert (c.identity, c.known_hosts) == (str(tmp_path / "id"), str(tmp_path / "kh"))
    clean = cluster.Remote(2, "10.0.0.2", c, tmp_path, "mabc", "0123abcd").clean_command()
    assert clean[clean.index("-i") + 1] == str(tmp_path / "id")
    assert f"UserKnownHostsFile={tmp_path / 'kh'}" in clean


def test_ssh_commands_quote_the_remote_command_and_use_the_master(tmp_path: Path) -> None:
    c = _config(tmp_path, known_hosts=str(tmp_path / "id"))
    remote = cluster.Remote(2, "10.0.0.2", c, tmp_path, "mabc", "0123abcd")
    argv = remote.command("h2", "sh", ["sh", "-c", "echo 'a b'; x"])
    assert argv[0] == "ssh" and "root@10.0.0.2" in argv and "BatchMode=yes" in argv
    assert argv[argv.index("-S") + 1] == str(tmp_path / "srv2.ctl")
    assert "ControlMaster=no" in argv and "-T" in argv
    remote_words = shlex.split(argv[-1])  # what the server's shell will run
    assert remote_words[1:10] == ["cluster-exec", "--tag", "mabc", "--session", "0123abcd",
                                  "--node", "h2", "--what", "sh"]
    assert remote_words[-4:] == ["--", "sh", "-c", "echo 'a b'; x"]
    master = remote.ssh(["true"], master=True)
    assert "ControlMaster=yes" in master
    shell = remote.ssh(["bash"], tty=True)
    assert "-tt" in shell
    fresh = remote.ssh(["true"], shared=False)
    assert "-S" not in fresh
    clean = remote.clean_command()  # its own connection: it must work once the master is gone
    assert "-S" not in clean and shlex.split(clean[-1])[1:] == [
        "clean", "--tag", "mabc", "--session", "0123abcd", "--include-live"]


def test_the_ledger_runs_only_ssh_commands_naming_its_tag_and_session(tmp_path: Path) -> None:
    led = ledger.Ledger.create(tmp_path)
    with pytest.raises(ValueError):
        led.record_remote("srv2", "s1", ["rm", "-rf", f"/{led.tag}"])
    with pytest.raises(ValueError):
        led.record_remote("srv2", "s1", ["ssh", "root@x",
                                         "mcastlab clean --tag other --session s1"])
    with pytest.raises(ValueError):  # the tag alone may be another testbed's there
        led.record_remote("srv2", "s1", ["ssh", "root@x", f"mcastlab clean --tag {led.tag}"])
    led.record_remote("srv2", "s1", ["ssh", "-o", "ConnectTimeout=1", "root@192.0.2.1",
                                     f"mcastlab clean --tag {led.tag} --session s1"])
    assert led.entries[-1] == {"kind": "remote", "server": "srv2", "session": "s1",
                               "clean": led.entries[-1]["clean"]}


def test_a_given_tag_is_taken_once(tmp_path: Path) -> None:
    ledger.Ledger.create(tmp_path, tag="mxyz", session="aa")
    with pytest.raises(ledger.TagTaken, match=r"tag 'mxyz' is taken: .*mxyz.ledger exists "
                                              r"\(owner pid \d+, running\)"):
        ledger.Ledger.create(tmp_path, tag="mxyz", session="bb")
    assert ledger.owner_of(tmp_path / "mxyz.ledger")["session"] == "aa"


def test_a_session_cleans_only_the_ledger_it_owns(tmp_path: Path) -> None:
    """`mcastlab clean --tag T --session S` (a controller cleaning its server) leaves a
    ledger with tag T that another testbed owns as it is."""
    other = ledger.Ledger.create(tmp_path, tag="mxyz")  # this server's own testbed
    d = tmp_path / "mxyz-dir"
    d.mkdir()
    other.record_dir(d)
    before = other.path.read_text()
    report = ledger.clean(tmp_path, include_live=True, tag="mxyz", session="ab12")
    assert report == [f"mxyz: another testbed's ledger (not session ab12: owner pid "
                      f"{other.entries[0]['pid']}, running), left alone"]
    assert other.path.read_text() == before and d.is_dir()
    other.release()
    mine = ledger.Ledger.create(tmp_path, tag="mxyz", session="ab12")
    mine.record_dir(d)
    d.mkdir()
    assert ledger.clean(tmp_path, include_live=True, tag="mxyz", session="ab12")[-1] == (
        "mxyz: ledger removed")
    assert not d.exists() and not mine.path.exists()


def _refused_port() -> int:
    """A local TCP port nothing listens on (bound, then closed): ssh gets "Connection
    refused" at once, as from a server whose sshd is down."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_remote_clean_that_fails_keeps_its_entry_and_says_so(tmp_path: Path) -> None:
    led = ledger.Ledger.create(tmp_path)
    work = tmp_path / f"work-{led.tag}"
    work.mkdir()
    led.record_dir(work)
    led.record_remote("srv2", "s1", ["ssh", "-o", "BatchMode=yes", "-p", str(_refused_port()),
                                     "root@127.0.0.1",
                                     f"mcastlab clean --tag {led.tag} --session s1"])
    report = led.release()  # the owner's teardown
    assert not work.exists()  # the rest is undone
    assert report[0].startswith("server srv2 not cleaned (ssh exit 255): ssh: connect to host "
                                "127.0.0.1 port"), report
    assert report[-1] == (f"ledger {led.path} kept for srv2, not cleaned: run `mcastlab clean "
                          f"--tag {led.tag}` once it answers")
    entries = ledger.read_ledger(led.path)
    assert [e["kind"] for e in entries] == ["owner", "remote"] and entries[1]["server"] == "srv2"
    # released: `mcastlab clean` does not wait for its owner (this process, still running)
    assert entries[0]["released"] and not ledger.owner_alive(entries)
    assert ledger.kept(tmp_path) == [led.path]
    again = ledger.clean(tmp_path)  # still no answer: still kept, said again
    assert again[-1].startswith(f"{led.tag}: ledger {led.path} kept for srv2"), again
    assert [e["kind"] for e in ledger.read_ledger(led.path)] == ["owner", "remote"]


def test_a_remote_entry_without_a_session_is_not_run(tmp_path: Path) -> None:
    """An entry of an older mcastlab (the tag alone) could clean another testbed there."""
    path = tmp_path / "mold.ledger"
    entries = [{"kind": "owner", "tag": "mold", "pid": 1, "start": 1},
               {"kind": "remote", "server": "srv2", "clean": [
                   "ssh", "-p", str(_refused_port()), "root@127.0.0.1",
                   "mcastlab clean --tag mold --include-live"]}]
    path.write_text("".join(json.dumps(e) + "\n" for e in entries))
    report = ledger.clean_ledger(path)
    assert "server srv2: its clean command names no session" in report[0], report
    assert not path.exists()


OK = {"revision": "a" * 40, "dirty": False}


def test_the_code_check_passes_one_committed_revision_everywhere() -> None:
    assert doctest.testmod(cluster).failed == 0
    states = {"srv1": ("localhost, the controller", OK), "srv2": ("10.0.0.2", OK)}
    assert cluster.code_problems(states, False) == ([], {})


@pytest.mark.parametrize("srv2, why", [
    ({"revision": None, "dirty": None,
      "unknown": "fatal: detected dubious ownership in repository at '/opt/mcastlab'"},
     "srv2 (10.0.0.2): git revision unknown: fatal: detected dubious ownership in repository "
     "at '/opt/mcastlab'"),
    ({"revision": "a" * 40, "dirty": True, "diff_sha256": "0123456789abcdef"},
     "srv2 (10.0.0.2): tracked files changed since aaaaaaaaaaaa"),
])
def test_an_unknown_revision_or_a_dirty_tree_is_refused_unless_overridden(srv2: dict,
                                                                         why: str) -> None:
    states = {"srv1": ("localhost, the controller", OK), "srv2": ("10.0.0.2", srv2)}
    refusals, unverified = cluster.code_problems(states, False)
    assert refusals == [why, "every server must run one committed revision, or set "
                             "allow_unverified_revision = true in [cluster] (recorded)"]
    refusals, unverified = cluster.code_problems(states, True)
    assert refusals == [] and list(unverified) == ["srv2"] and why.endswith(unverified["srv2"])
    # the controller counts too, as srv1 or (when it is not a server) as itself
    states = {"controller": ("this machine", srv2), "srv1": ("10.0.0.1", OK),
              "srv2": ("10.0.0.2", OK)}
    assert cluster.code_problems(states, False)[0][0].startswith("controller (this machine): ")


def test_different_revisions_are_refused_even_with_the_override() -> None:
    states = {"srv1": ("localhost, the controller", OK),
              "srv2": ("10.0.0.2", {"revision": "b" * 40, "dirty": False})}
    refusals, _ = cluster.code_problems(states, True)
    assert refusals == ["srv1 (localhost, the controller) at aaaaaaaaaaaa, srv2 (10.0.0.2) at "
                        "bbbbbbbbbbbb: check out the same revision on every server"]
