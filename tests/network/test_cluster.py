"""Issue 16, pure logic of a [cluster] (topologies/cluster.py): the section's validation,
what a cluster refuses to build, the ssh commands and the ledger's remote entry."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

import topologies
from mcastlab import ledger
from topologies import cluster, servers
from topologies.spec import TopologyParamError


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
    ({"hosts": 3}, "unknown key(s) hosts; allowed: servers, identity, known_hosts, port, place"),
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
    routed = topologies.resolve("routed", {"routers": 3})
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


def test_ssh_commands_quote_the_remote_command_and_use_the_master(tmp_path: Path) -> None:
    c = _config(tmp_path, known_hosts=str(tmp_path / "id"))
    remote = cluster.Remote(2, "10.0.0.2", c, tmp_path, "mabc")
    argv = remote.command("h2", "sh", ["sh", "-c", "echo 'a b'; x"])
    assert argv[0] == "ssh" and "root@10.0.0.2" in argv and "BatchMode=yes" in argv
    assert argv[argv.index("-S") + 1] == str(tmp_path / "srv2.ctl")
    assert "ControlMaster=no" in argv and "-T" in argv
    remote_words = shlex.split(argv[-1])  # what the server's shell will run
    assert remote_words[1:8] == ["cluster-exec", "--tag", "mabc", "--node", "h2", "--what", "sh"]
    assert remote_words[-4:] == ["--", "sh", "-c", "echo 'a b'; x"]
    master = remote.ssh(["true"], master=True)
    assert "ControlMaster=yes" in master
    shell = remote.ssh(["bash"], tty=True)
    assert "-tt" in shell
    fresh = remote.ssh(["true"], shared=False)
    assert "-S" not in fresh


def test_the_ledger_runs_only_ssh_commands_naming_its_tag(tmp_path: Path) -> None:
    led = ledger.Ledger.create(tmp_path)
    with pytest.raises(ValueError):
        led.record_remote("srv2", ["rm", "-rf", f"/{led.tag}"])
    with pytest.raises(ValueError):
        led.record_remote("srv2", ["ssh", "root@x", "mcastlab clean --tag other"])
    led.record_remote("srv2", ["ssh", "-o", "ConnectTimeout=1", "root@192.0.2.1",
                               f"mcastlab clean --tag {led.tag}"])
    assert led.entries[-1]["kind"] == "remote"


def test_a_given_tag_is_taken_once(tmp_path: Path) -> None:
    ledger.Ledger.create(tmp_path, tag="mxyz")
    with pytest.raises(RuntimeError, match="exists already"):
        ledger.Ledger.create(tmp_path, tag="mxyz")
