"""Perftest 4.3's role rules over every command line the runner can build.

The rules are experiments/agent_options.py's table, written from rtiperftest 4.3's
ParameterManager.cxx: a publisher-only option given with -sub (or a subscriber-only one
with -pub) makes real Perftest exit at once ("Cannot use '-numPublishers' while setting
'-pub'."). Every shipped scenario is expanded for agent kinds rti and native, as its
throughput runs and, for its 1-publisher points, as latency runs too, and with both
discovery settings; each process's argv must pass. No root, nothing built.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from experiments import agent_options as ao
from experiments import agents, matrix
from experiments.scenario import validate
from mcastlab import paths

SHIPPED = sorted(paths.EXPERIMENTS_DIR.glob("*.toml"))
PUB_ONLY = ("-numSubscribers", "-pidMultiPubTest", "-latencyCount", "-latencyTest",
            "-executionTime", "-numIter", "-batchSize", "-latencyFile", "-pubRate")
SUB_ONLY = ("-numPublishers", "-sidMultiSubTest")


def _runs(path: Path, kind: str) -> list[dict[str, Any]]:
    """Every run of the scenario as agent ``kind``: throughput and (1 publisher) latency
    tests, with multicast and with fully unicast (``-peer``) discovery."""
    import topologies

    sc, specs = validate(path, check_machine=False)
    hosts = {v: topologies.host_names(s) for v, s in specs.items()}
    sc = sc.model_copy(update={
        "matrix": sc.matrix.model_copy(update={"tests": ["throughput", "latency"],
                                 "discovery": ["spdp-multicast", "unicast-peers"]})})
    runs = [r for r in matrix.expand(sc, hosts, str(path))
            if r["test"] == "throughput" or r["publishers"] == 1]
    for r in runs:
        r["agent"] = kind
    return runs


def _addresses(runs: list[dict[str, Any]]) -> dict[str, str]:
    names = sorted({h for r in runs for h in r["placement"].values()})
    return {h: f"10.{i // 250}.{i % 250}.1" for i, h in enumerate(names)}


def test_role_table_matches_perftest_groups() -> None:
    """Each option listed here is in the role the 4.3 sources give it."""
    for name in PUB_ONLY:
        assert ao.role_of(name) == "pub", name
    for name in SUB_ONLY:
        assert ao.role_of(name) == "sub", name
    for name in ("-dataLen", "-domain", "-nic", "-peer", "-multicast", "-bestEffort",
                 "-outputFormat", "-cpu", "-sendQueueSize", "-transport", "-qosFile"):
        assert ao.role_of(name) == "both", name
    # Perftest's matching: case-insensitive prefixes, first in key order.
    assert ao.resolve("-numpub").name == "-numPublishers"
    assert ao.resolve("-b").name == "-batchSize"
    assert ao.resolve("-pub").name == "-pub"
    assert ao.resolve("-pubrate").name == "-pubRate"


def test_rules_reject_what_perftest_rejects() -> None:
    errs = ao.perftest_errors
    assert errs(["-sub", "-latencyCount", "10"]) == [
        "Cannot use '-latencyCount' while setting '-sub'."]
    assert errs(["-pub", "-sidMultiSubTest", "1"]) == [
        "Cannot use '-sidMultiSubTest' while setting '-pub'."]
    assert errs(["-sub", "-batch", "0"]) == ["Cannot use '-batchSize' while setting '-sub'."]
    assert errs(["-pub", "-latencyTest", "-pidMultiPubTest", "1"]) == [
        "Only the publisher with ID = 0 can run the latency test"]
    assert errs(["-pub", "-numIter", "10", "-latencyCount", "100"]) == [
        "numIter (10) must be greater than latencyCount (100)."]
    assert errs(["-pub", "-latencyTest", "-batchSize", "8192"]) == [
        "Batching cannot be used in a Latency test."]
    assert errs(["-pub", "-pubRate", "100"]) == ["Missing argument after '-pubRate'"]
    assert errs(["-pub", "-dataLen", "27"])[0].startswith("In the argument '-dataLen'")
    assert errs(["-pub", "-discoveryTimeout", "5"]) == [
        "Cannot parse '-discoveryTimeout', invalid input.", "Cannot parse '5', invalid input."]
    assert errs(["-pub", "-discoveryTimeout", "5", "-numPublishers", "2"], native=True) == []
    assert errs(["-sub", "-numPublishers", "2", "-numSubscribers", "2"], native=True) == []
    assert errs(["-sub", "-latencyCount", "2"], native=True) == [
        "Cannot use '-latencyCount' while setting '-sub'."]


@pytest.mark.parametrize("kind", ["rti", "native"])
@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_every_runner_command_line_passes_perftest_role_rules(
        path: Path, kind: str, tmp_path: Path) -> None:
    runs = _runs(path, kind)
    host_ip = _addresses(runs)
    checked: set[str] = set()
    for r in runs:
        for spec in agents.build(r, host_ip, tmp_path):
            argv = spec.argv[1:]
            errs = ao.perftest_errors(argv, native=kind != "rti")
            assert not errs, f"{r['run_id']} {spec.name}: {errs}\n{argv}"
            role = "pub" if spec.name.startswith("pub") else "sub"
            other = SUB_ONLY if role == "pub" else PUB_ONLY
            allowed = ao.NATIVE_CROSS_ROLE[role] if kind != "rti" else frozenset()
            assert not (set(argv) & set(other)) - allowed, (r["run_id"], spec.name, argv)
            if kind == "rti":
                _check_peers(r, host_ip, argv)
            checked.add(r["test"])
    assert checked == {"throughput", "latency"} or not any(
        r["publishers"] == 1 for r in runs), checked


def _check_peers(run: dict[str, Any], host_ip: dict[str, str], argv: list[str]) -> None:
    """Each -peer reaches every participant id its host uses (Connext: 0-4 unless N@)."""
    peers = [argv[i + 1] for i, a in enumerate(argv) if a == "-peer"]
    if run["discovery"] != "unicast-peers":
        assert not peers
        return
    per_host = {h: list(run["placement"].values()).count(h)
                for h in set(run["placement"].values())}
    want = {host_ip[h]: n for h, n in per_host.items()}
    got: dict[str, int] = {}
    for p in peers:
        limit, _, addr = p.rpartition("@")
        got[addr] = int(limit) if limit else 4
    assert set(got) == set(want)
    for addr, n in want.items():
        assert got[addr] >= n - 1, (addr, n, got[addr])


def test_rti_peer_form_for_many_participants_per_host(tmp_path: Path) -> None:
    cfg = {"agent": "rti", "publishers": 10, "subscribers": 10, "mode": "unicast",
           "discovery": "unicast-peers", "reliable": True, "data_len": 100, "domain": 0,
           "latency_count": 1000, "execution_time": 10, "num_iter": None,
           "test": "throughput", "agent_extra_args": [],
           "placement": {**{f"pub{i}": "h1" for i in range(10)},
                         **{f"sub{i}": ("h2" if i < 3 else "h1") for i in range(10)}}}
    sub = next(s for s in agents.build(cfg, {"h1": "10.0.0.1", "h2": "10.0.0.2"}, tmp_path)
               if s.name == "sub0").argv
    assert [sub[i + 1] for i, a in enumerate(sub) if a == "-peer"] == ["16@10.0.0.1",
                                                                       "10.0.0.2"]
    assert "-numSubscribers" not in sub and "-latencyCount" not in sub


def _count_by_count(kind: str, count: int, extra: list[str], mode: str,
                    tmp_path: Path) -> list[agents.ProcSpec]:
    """The processes of a count x count run, publishers on h1 and subscribers on h2."""
    cfg = {"agent": kind, "publishers": count, "subscribers": count, "mode": mode,
           "discovery": "spdp-multicast", "reliable": True, "data_len": 100, "domain": 0,
           "latency_count": 1000, "execution_time": 10, "num_iter": None,
           "test": "throughput", "agent_extra_args": extra,
           "placement": {**{f"pub{i}": "h1" for i in range(count)},
                         **{f"sub{i}": "h2" for i in range(count)}}}
    return agents.build(cfg, {"h1": "10.0.0.1", "h2": "10.0.0.2"}, tmp_path)


@pytest.mark.parametrize("kind,count,extra,want", [
    ("native", 25, [], 1), ("native-asan", 75, [], 1), ("native", 10, [], 0),
    ("native", 25, ["-scaleSettings"], 1), ("fastdds", 75, [], 0), ("rti", 75, [], 0)])
def test_native_large_tests_get_the_discovery_tuning(kind: str, count: int, extra: list[str],
                                                      want: int, tmp_path: Path) -> None:
    """Cyclone's heartbeat and socket buffers are per domain: above 20 participants the
    runner gives every native agent -scaleSettings (once, also when extra_args has it)."""
    for spec in _count_by_count(kind, count, extra, "multicast", tmp_path):
        assert spec.argv.count("-scaleSettings") == want, (spec.name, spec.argv)


@pytest.mark.parametrize("kind,count,extra,want", [
    ("native", 25, [], ["240"]), ("fastdds", 75, [], ["240"]), ("native", 10, [], []),
    ("native", 75, ["-discoveryTimeout", "90"], ["90"]), ("rti", 75, [], [])])
def test_large_tests_get_a_longer_discovery_bound(kind: str, count: int, extra: list[str],
                                                  want: list[str], tmp_path: Path) -> None:
    """Above 20 participants the mcastlab agents may discover for 240 s (their own
    extension: real Perftest has no bound and refuses the option); a scenario's value wins."""
    for spec in _count_by_count(kind, count, extra, "unicast", tmp_path):
        got = [spec.argv[i + 1] for i, a in enumerate(spec.argv) if a == "-discoveryTimeout"]
        assert got == want, (spec.name, spec.argv)


def test_extra_args_by_agent_kind() -> None:
    assert ao.check_extra_args(["-discoveryTimeout", "60"]) is None
    why = ao.check_extra_args(["-discoveryTimeout", "60"], "rti")
    assert why is not None and "not accepted by real RTI Perftest" in why
    assert ao.check_extra_args(["-noPositiveAcks"], "rti") is None
    why = ao.check_extra_args(["-noPositiveAcks"], "native")
    assert why is not None and "not accepted by the native agent" in why
    for kind in ("rti", "native"):
        why = ao.check_extra_args(["-transport", "SHMEM"], kind)
        assert why is not None and "matrix.same_host" in why
    why = ao.check_extra_args(["-numPublishers", "3"], "rti")
    assert why is not None and "subscriber-only" in why
    why = ao.check_extra_args(["-sendQueueSize", "0"], "rti")
    assert why is not None and "range" in why
