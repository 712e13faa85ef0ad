"""Campaigns end to end on real namespaces.

Each test runs ``mcastlab run`` as a separate process, like a user, into a private
results directory; networks are built by topologies/ with a per-testbed tag and torn down
by the runner (or, after SIGKILL, from the killed runner's own ledger). SIGKILL at each
phase of a run and at random moments is in test_kill_anywhere_netns.py.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from experiments import agent_qos, results
from mcastlab import ledger, paths
from tests.helpers.killcheck import (
    assert_nothing_left,
    mcastlab_clean,
    process_tree,
    runner_ledgers,
)

SMOKE = paths.EXPERIMENTS_DIR / "smoke.toml"
RUN_FILES = ("config.json", "manifest.json", "tables/latency.parquet",
             "tables/throughput.parquet", "tables/resources.parquet", "tables/summary.json")
VERSION_KEYS = ("kernel", "mininet", "openvswitch", "pimd", "smcroute", "cyclonedds",
                "native_agent")


def _need_native_agent() -> None:
    if not os.access(paths.NATIVE_AGENT, os.X_OK):
        pytest.fail(f"{paths.NATIVE_AGENT} is not built (run ./setup.sh)")


def _fastdds_or_skip() -> None:
    if not os.access(paths.FASTDDS_AGENT, os.X_OK):
        if paths.FASTDDS_UNSUPPORTED_NOTE.is_file():
            pytest.skip(f"setup.sh did not build the Fast DDS agent: "
                        f"{paths.FASTDDS_UNSUPPORTED_NOTE.read_text().strip()}")
        pytest.fail(f"{paths.FASTDDS_AGENT} is not built (run ./setup.sh)")


def _mcastlab(*args: str) -> list[str]:
    return [sys.executable, "-m", "mcastlab.cli", *args]


def _run(*args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(_mcastlab(*args), capture_output=True, text=True, timeout=timeout,
                          check=False)


def _status(root: Path) -> dict[str, str]:
    idx = results.read_json(root / "campaign.json") or {}
    return {r["id"]: r["status"] for r in idx.get("runs", [])}


def _fingerprint(run_dir: Path) -> dict[str, tuple[str, int]]:
    """sha256 and mtime of every file of a run directory."""
    return {p.relative_to(run_dir).as_posix(): (hashlib.sha256(p.read_bytes()).hexdigest(),
                                                p.stat().st_mtime_ns)
            for p in sorted(run_dir.rglob("*")) if p.is_file()}


def _my_ledgers(pid: int) -> list[Path]:
    out = []
    for p in ledger.ledgers():
        owner = next((e for e in ledger.read_ledger(p) if e.get("kind") == "owner"), {})
        if owner.get("pid") == pid:
            out.append(p)
    return out


def _interval_lines(stdout: str) -> int:
    """Rows of the agent's "Interval Throughput" table (lines of numbers before the summary)."""
    body = stdout.split("Throughput Summary")[0]
    return sum(1 for line in body.splitlines() if line.strip()[:1].isdigit())


def _check_complete_run(run_dir: Path) -> None:
    for f in RUN_FILES:
        assert (run_dir / f).is_file(), f"{run_dir.name}: {f} missing"
    assert (run_dir / "logs").is_dir()
    cfg = json.loads((run_dir / "config.json").read_text())
    man = json.loads((run_dir / "manifest.json").read_text())
    assert man["status"] == "complete"
    assert results.verify(run_dir) == (True, "complete")
    for k in VERSION_KEYS:
        assert k in man["versions"], k
    assert man["versions"]["kernel"] and man["versions"]["cyclonedds"]
    assert set(man["git"]) == {"revision", "dirty"} and man["cpu"]["count"] >= 1
    assert man["started"] <= man["ended"]
    procs = [f"pub{i}" for i in range(cfg["publishers"])] + [
        f"sub{j}" for j in range(cfg["subscribers"])]
    assert man["exit_codes"] == dict.fromkeys(procs, 0)
    for p in procs:
        assert (run_dir / "agents" / f"{p}.stdout").is_file()
        assert (run_dir / "agents" / f"{p}.stderr").is_file()
    assert (run_dir / "agents" / "pub0.latency.txt").is_file()
    # The parsed latency count matches the count publisher 0 reports.
    summary = json.loads((run_dir / "tables" / "summary.json").read_text())
    lat = pq.read_table(run_dir / "tables" / "latency.parquet")
    assert summary["agent_latency_count"] is not None and summary["agent_latency_count"] > 0
    assert lat.num_rows == summary["agent_latency_count"] - cfg.get("warmup_samples", 0)
    assert lat.column("sample").to_pylist() == list(range(lat.num_rows))
    # Throughput: one row per subscriber per second that the subscriber reported.
    thr = pq.read_table(run_dir / "tables" / "throughput.parquet").to_pylist()
    if cfg["test"] == "throughput":
        for j in range(cfg["subscribers"]):
            secs = [r["second"] for r in thr if r["subscriber"] == j]
            out = (run_dir / "agents" / f"sub{j}.stdout").read_text()
            intervals = _interval_lines(out)
            assert secs == list(range(1, len(secs) + 1)), f"sub{j}: {secs}"
            assert len(secs) == intervals
            if cfg["execution_time"]:
                assert cfg["execution_time"] - 3 <= len(secs) <= cfg["execution_time"] + 2
            if cfg["execution_time"]:
                assert sum(r["samples"] for r in thr if r["subscriber"] == j) > 0
    # Every agent host's UDP counters: the agents' datagrams arrived, socket drops counted.
    assert set(man["udp"]) == set(cfg["placement"].values())
    for host, counters in man["udp"].items():
        assert counters["InDatagrams"] > 0 and counters["OutDatagrams"] > 0, (host, counters)
        # the kernel counts every buffer-full drop in InErrors too (udp.c)
        assert 0 <= counters["RcvbufErrors"] <= counters["InErrors"], (host, counters)
    # Host socket fan-out: the hosts' factors and per-socket drops by role (and the setting).
    assert set(man["host_fanout"]) == set(man["udp"])
    for host, f in man["host_fanout"].items():
        # About >= 1 copy per datagram, but IGMP/PIM arrivals are counted as UDP arrivals
        # (sockstats.fanout): a routed scenario's host measured 0.899 (775 of 862).
        assert f["udp_arrived"] > 0 and f["factor"] > 0.5, (host, f)
    assert man["socket_drops"]["samples"] >= 1
    # sampled every 2 s: a process that ends within its first 2 s may never be seen
    assert set(man["socket_drops"]["processes"]) <= set(procs)
    assert man["fanout"]["setting"] == cfg.get("fanout", "kernel")
    res = pq.read_table(run_dir / "tables" / "resources.parquet").to_pylist()
    assert {r["process"] for r in res} == set(procs)
    assert all(r["rss_bytes"] > 0 for r in res)


def test_smoke_campaign_completes(tmp_path: Path) -> None:
    """Every run completes, with the documented files and tables."""
    _need_native_agent()
    root = tmp_path / "smoke"
    p = _run("run", str(SMOKE), "--results", str(root), "--no-progress", timeout=400)
    assert p.returncode == 0, p.stderr[-3000:]
    st = json.loads(_run("status", str(root), "--json", timeout=60).stdout)
    assert [r["status"] for r in st["runs"]] == ["complete"] * 4
    for r in st["runs"]:
        _check_complete_run(root / r["id"])
    idx = json.loads((root / "campaign.json").read_text())
    assert idx["campaign"] == "smoke" and len(idx["runs"]) == 4
    assert all(set(r) >= {"id", "status", "attempts", "reason", "config"} for r in idx["runs"])


def _start_and_wait_mid_run(root: Path) -> tuple[subprocess.Popen[bytes], str]:
    """Start the smoke campaign; return once run 1 is complete and run 2's agents print."""
    proc = subprocess.Popen(_mcastlab("run", str(SMOKE), "--results", str(root),
                                      "--no-progress"),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        st = _status(root)
        done = [r for r, s in st.items() if s == "complete"]
        if done:
            nxt = next(r for r in st if st[r] != "complete")
            out = root / f".{nxt}.partial" / "agents" / "sub0.stdout"
            if out.exists() and out.stat().st_size > 200:
                return proc, nxt
        if proc.poll() is not None:
            raise AssertionError(f"runner exited early with {proc.returncode}")
        time.sleep(0.2)
    proc.kill()
    raise AssertionError("the campaign did not reach its second run in time")


def _resume_and_check(root: Path, kept: dict[str, dict[str, tuple[str, int]]]) -> None:
    p = _run("run", str(SMOKE), "--results", str(root), "--no-progress", timeout=400)
    assert p.returncode == 0, p.stderr[-3000:]
    assert set(_status(root).values()) == {"complete"}
    for rid, fp in kept.items():
        assert _fingerprint(root / rid) == fp, f"{rid} was redone or changed"
    idx = json.loads((root / "campaign.json").read_text())
    for r in idx["runs"]:
        if r["id"] in kept:
            assert r["attempts"] == 1
        _check_complete_run(root / r["id"])
    assert not list(root.glob(".*.partial"))


def test_sigint_then_resume(tmp_path: Path) -> None:
    """SIGINT: clean stop, current run incomplete, resume skips finished runs."""
    _need_native_agent()
    root = tmp_path / "smoke"
    proc, current = _start_and_wait_mid_run(root)
    try:
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=60) == 130
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert _my_ledgers(proc.pid) == [], "the runner left its network behind"
    st = _status(root)
    assert st[current] == "incomplete"
    man = json.loads((root / current / "manifest.json").read_text())
    assert man["status"] == "incomplete" and man["reason"] == "interrupted"
    kept = {r: _fingerprint(root / r) for r, s in st.items() if s == "complete"}
    assert kept
    _resume_and_check(root, kept)


def test_sigkill_clean_then_resume(tmp_path: Path) -> None:
    """SIGKILL + clean: the ledger undoes the network, resume finishes."""
    _need_native_agent()
    root = tmp_path / "smoke"
    proc, current = _start_and_wait_mid_run(root)
    tree = process_tree(proc.pid)
    proc.kill()
    proc.wait(timeout=30)
    books = runner_ledgers(proc.pid)
    assert books, "a killed runner's testbed must still be listed in its ledger"
    procs = [e for entries in books.values() for e in entries if e["kind"] == "proc"]
    cfg = next(r["config"] for r in results.read_json(root / "campaign.json")["runs"]
               if r["id"] == current)
    agents = sum(e["what"] == "perftest_cyclone" for e in procs)
    assert agents == cfg["publishers"] + cfg["subscribers"], procs  # every agent recorded
    assert all(not ledger.owner_alive(entries) for entries in books.values())
    # `mcastlab clean` as a user runs it (it skips the ledgers of live owners: testbeds of
    # concurrent tests stay); then the ledgers, all they list and the runner's processes
    # are gone
    mcastlab_clean()
    assert_nothing_left(books, tree)
    assert _status(root)[current] == "incomplete"
    kept = {r: _fingerprint(root / r) for r, s in _status(root).items() if s == "complete"}
    assert kept
    _resume_and_check(root, kept)


@pytest.mark.parametrize("scenario", ["seed001-lab.toml", "seed001-production.toml",
                                      "seed004-latency.toml"])
def test_secondary_scenarios_quick(tmp_path: Path, scenario: str) -> None:
    """The quick variants run and produce their metrics (both
    implementations: Cyclone DDS and Fast DDS). Every cell of each quick matrix runs; of
    seed001's (48 and 32 runs, 2 repetitions) the first repetition only: the second is the
    same command (seed004-latency's quick matrix runs both of its repetitions)."""
    _need_native_agent()
    _fastdds_or_skip()
    root = tmp_path / scenario.removesuffix(".toml")
    path = str(paths.EXPERIMENTS_DIR / scenario)
    check = _run("run", path, "--quick", "--check", timeout=60)
    assert check.returncode == 0, check.stderr[-3000:]
    planned = [ln.strip() for ln in check.stdout.splitlines() if ln.startswith("  ")]
    chosen = ([r for r in planned if r.endswith("-r1")] if scenario.startswith("seed001")
              else planned)
    assert chosen and len(chosen) >= len(planned) // 2, planned
    only = [a for r in chosen for a in ("--only", r)]
    p = _run("run", path, "--quick", "--results", str(root), "--no-progress", *only,
             timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    st = json.loads(_run("status", str(root), "--json", timeout=60).stdout)
    done = [r for r in st["runs"] if r["id"] in chosen]
    assert sorted(r["id"] for r in done) == sorted(chosen), st["runs"]
    assert {r["status"] for r in done} == {"complete"}
    for r in done:
        run_dir = root / r["id"]
        _check_complete_run(run_dir)
        cfg = json.loads((run_dir / "config.json").read_text())
        bw = cfg["topology_params"].get("bw")
        if bw:  # the manifest records the shaping read back from every link interface
            shaping = json.loads((run_dir / "manifest.json").read_text())["topology"]["shaping"]
            assert shaping["requested"] == {"bw_mbit": float(bw)}
            assert shaping["links"] and all(link["bw_mbit"] == float(bw)
                                            for link in shaping["links"].values())
        lat = pq.read_table(run_dir / "tables" / "latency.parquet").column("latency_us")
        # Quick runs that end at execution_time (seed001's) stop before num_iter.
        timed = bool(cfg["execution_time"])
        if cfg["test"] == "latency":
            # Every round trip is a latency sample but the first (Perftest discards the
            # first pong), minus the warm-up ones.
            expect = cfg["num_iter"] - 1 - cfg["warmup_samples"]
            assert 0 < len(lat) <= expect if timed else len(lat) == expect
        else:
            # Stress test: every subscriber's summary counts the samples it received.
            procs = json.loads((run_dir / "tables" / "summary.json").read_text())["processes"]
            for j in range(cfg["subscribers"]):
                (row,) = procs[f"sub{j}"]["throughput_summary"]
                least = 1 if timed else cfg["num_iter"] * 0.99
                assert row["Total Samples"] >= least, (j, row)
                assert row["Ave Mbps"] > 0


def test_failed_run_is_retried_then_recorded(tmp_path: Path) -> None:
    """Runs that fail, fail on every attempt, are recorded as failed with the reason, and
    the campaign goes on to the next run.

    The failure is `-noPrintIntervals` in extra_args: a valid option the agents take, but
    then the subscribers print no throughput intervals, which the runner's check of a run
    refuses. (Before, values the agent refused did this: `-dataLen` above 16 MiB, then
    `-instances 0`, then `-discoveryTimeout 0.001`; the scenario check now refuses each,
    by the agent's own rules.)"""
    _need_native_agent()
    scenario = tmp_path / "retry.toml"
    scenario.write_text(
        '[campaign]\nname = "retry"\nretries = 1\n'
        '[topology]\nname = "lan"\nparams = { hosts = 2, querier = false }\n'
        '[agent]\nextra_args = ["-noPrintIntervals"]\n'
        '[matrix]\nparticipants = [1]\nmodes = ["unicast", "multicast"]\n'
        'execution_time = 4\n'
    )
    root = tmp_path / "retry"
    p = _run("run", str(scenario), "--results", str(root), "--no-progress", timeout=300)
    assert p.returncode == 1, p.stderr[-3000:]
    idx = {r["id"]: r for r in json.loads((root / "campaign.json").read_text())["runs"]}
    assert set(idx) == {"lan-rel-100B-1x1-unicast-r1", "lan-rel-100B-1x1-multicast-r1"}
    for rid, r in idx.items():
        # both runs were attempted twice: the first failure did not stop the campaign
        assert (r["status"], r["attempts"]) == ("failed", 2), r
        assert r["reason"] == "no throughput intervals from sub0", r["reason"]
        man = json.loads((root / rid / "manifest.json").read_text())
        assert man["status"] == "failed" and man["attempt"] == 2
    st = json.loads(_run("status", str(root), "--json", timeout=60).stdout)
    assert {r["id"]: r["status"] for r in st["runs"]} == dict.fromkeys(idx, "failed")


TINY = """# tiny: one 1x1 unicast run of {secs} s
[campaign]
name = "tiny"
description = "{desc}"
retries = 0
[topology]
name = "lan"
params = {{ hosts = 2, snooping = true, querier = false }}
[matrix]
participants = [1]
modes = ["unicast"]
execution_time = {secs}
[timing]
converge_timeout = {conv}
run_timeout = {rt}
[capture]
points = ["s1-eth2"]
snaplen = 256
window_s = 0
"""


def test_neutral_edit_keeps_runs_result_edit_is_refused_redo_supersedes(tmp_path: Path
                                                                        ) -> None:
    """A neutral edit keeps the finished runs, a result-relevant edit is refused, a redo
    supersedes (execution_time stands for a result-relevant edit: data_len is part of the
    run id, so editing it makes new runs beside the old ones)."""
    _need_native_agent()
    sc, root = tmp_path / "tiny.toml", tmp_path / "res"
    sc.write_text(TINY.format(secs=3, desc="first", conv=30, rt=60))
    assert _run("run", str(sc), "--results", str(root), "--no-progress",
                timeout=200).returncode == 0
    (rid,) = _status(root)
    fp = _fingerprint(root / rid)
    # the run carries its capture and the wire evidence derived from it
    assert sum(f.stat().st_size for f in (root / rid / "pcaps").glob("s1-eth2.pcap*")) > 0
    man = json.loads((root / rid / "manifest.json").read_text())
    assert "s1-eth2" in man["capture_drops"] and "wire_error" not in man
    wire = json.loads((root / rid / "wire" / "summary.json").read_text())
    assert wire["packets"] > 0 and wire["rtps_submessages"].get("DATA", 0) > 0
    # timeouts and the description cannot change results: the run is kept as it is
    sc.write_text(TINY.format(secs=3, desc="edited", conv=45, rt=90))
    p = _run("run", str(sc), "--results", str(root), "--no-progress", timeout=200)
    assert p.returncode == 0, p.stderr[-2000:]
    assert _fingerprint(root / rid) == fp
    # a longer run changes results: refused, naming the run and the key; nothing touched
    sc.write_text(TINY.format(secs=4, desc="edited", conv=45, rt=90))
    p = _run("run", str(sc), "--results", str(root), "--no-progress", timeout=200)
    assert p.returncode == 2, p.stdout[-1000:] + p.stderr[-1000:]
    assert rid in p.stderr and "execution_time" in p.stderr and "--redo" in p.stderr
    assert _fingerprint(root / rid) == fp
    # --redo: the old run moves to superseded/<time>/, byte-identical; a new one is made
    p = _run("run", str(sc), "--results", str(root), "--no-progress", "--redo", timeout=200)
    assert p.returncode == 0, p.stderr[-2000:]
    (old,) = list((root / "superseded").glob(f"*/{rid}"))
    assert _fingerprint(old) == fp
    assert json.loads((root / rid / "config.json").read_text())["execution_time"] == 4


TWO_AGENTS = """\
[campaign]
name = "impl-smoke"
[topology]
name = "lan"
params = { hosts = 4, snooping = true, querier = false }
[matrix]
agents = ["native", "fastdds"]
participants = [1]
modes = ["unicast", "multicast"]
latency_count = [100]
execution_time = 5
[timing]
warmup = 1
"""


def _check_agent_qos(run_dir: Path, man: dict, agent: str, mode: str) -> None:
    """The manifest's agent_qos: what pub0 and sub0 printed, Perftest's ThroughputQos as the
    runner runs it (unbatched), the differences, each a row of the agent README's table."""
    qos = man["agent_qos"]
    assert not qos["missing"] and qos["uniform"] and not qos["perftest_batching"], qos
    for role, name in (("publisher", "pub0"), ("subscriber", "sub0")):
        stderr = (run_dir / "agents" / f"{name}.stderr").read_text()
        assert qos[role] == agent_qos.parse(stderr), role
    assert qos["perftest"] == agent_qos.reference(batching=False, multicast=mode == "multicast")
    assert qos["publisher"]["writer.send_window"] == "50 samples"
    assert qos["publisher"]["writer.heartbeat_period"] == "10 ms"
    readme = (paths.REPO_ROOT / "perftest-wrappers" / agent / "README.md").read_text()
    table = readme.split("## Perftest's ThroughputQos", 1)[1].split("\n## ", 1)[0]
    for role in ("publisher", "subscriber"):
        for key in qos["differences"][role]:
            assert f"| `{key}` |" in table, (agent, key, qos["differences"][role][key])


def test_two_implementations_run_by_run(tmp_path: Path) -> None:
    """[matrix] agents runs each run once per implementation on the same network
    and placement; each run records its agent; the report pairs the implementations."""
    _need_native_agent()
    _fastdds_or_skip()
    scenario = tmp_path / "impl.toml"
    scenario.write_text(TWO_AGENTS)
    root = tmp_path / "impl"
    p = _run("run", str(scenario), "--results", str(root), "--no-progress", timeout=400)
    assert p.returncode == 0, p.stderr[-3000:]
    st = json.loads(_run("status", str(root), "--json", timeout=60).stdout)
    assert [r["id"] for r in st["runs"]] == [
        "lan-rel-100B-native-1x1-unicast-r1", "lan-rel-100B-native-1x1-multicast-r1",
        "lan-rel-100B-fastdds-1x1-unicast-r1", "lan-rel-100B-fastdds-1x1-multicast-r1"]
    assert {r["status"] for r in st["runs"]} == {"complete"}
    cfgs = {}
    for r in st["runs"]:
        run_dir = root / r["id"]
        _check_complete_run(run_dir)
        cfg = json.loads((run_dir / "config.json").read_text())
        man = json.loads((run_dir / "manifest.json").read_text())
        exe = paths.NATIVE_AGENT if cfg["agent"] == "native" else paths.FASTDDS_AGENT
        assert man["agent"]["kind"] == cfg["agent"] and man["agent"]["executable"] == str(exe)
        assert {c["argv"][0] for c in man["commands"].values()} == {str(exe)}
        _check_agent_qos(run_dir, man, cfg["agent"], cfg["mode"])
        cfgs[(cfg["agent"], cfg["mode"])] = cfg
    for mode in ("unicast", "multicast"):
        a, b = cfgs[("native", mode)], cfgs[("fastdds", mode)]
        assert a["placement"] == b["placement"] and a["topology_params"] == b["topology_params"]
    rep = _run("report", str(root), "--out", str(tmp_path / "report"), "--bootstrap", "99",
               "--json", timeout=300)
    assert rep.returncode == 0, rep.stderr[-3000:]
    data = json.loads(rep.stdout)
    assert data["agents"] == ["native", "fastdds"]
    assert {(c["participants"], c["metric"]) for c in data["implementations"]} == {
        ("1×1", "latency"), ("1×1", "throughput")}
    # one run per mode: every verdict is undecided, so agreement cannot be judged
    assert {c["agreement"] for c in data["implementations"]} <= {"all undecided",
                                                                "mixed fidelity",
                                                                "testbed-bound"}


FANOUT = """\
[campaign]
name = "fanout"
[topology]
name = "lan"
params = { hosts = 2, snooping = true, querier = false }
[matrix]
participants = [2]
modes = ["multicast"]
latency_count = [100]
execution_time = 4
fanout = ["kernel", "joined-only"]
[timing]
converge_timeout = 30
run_timeout = 60
"""


def test_fanout_axis_campaign(tmp_path: Path) -> None:
    """Host socket fan-out: the same 2x2 multicast run with the kernel's fan-out and with
    the shim. h1 and h2 each hold pub and sub (round-robin); Cyclone sends Throughput on one
    data port, so by default each host's publisher takes a copy of the other host's (and its
    own, looped back) samples: factor near 2; with the shim near 1 (measured in
    tests/agents/test_mcastall_agents_netns.py: 1.92 and 1.00)."""
    _need_native_agent()
    scen = tmp_path / "fanout.toml"
    scen.write_text(FANOUT)
    root = tmp_path / "fanout"
    p = _run("run", str(scen), "--results", str(root), "--no-progress", timeout=300)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-3000:]
    kernel = root / "lan-rel-100B-fanout-kernel-2x2-multicast-r1"
    shim = root / "lan-rel-100B-fanout-joined-only-2x2-multicast-r1"
    mk, ms = (json.loads((d / "manifest.json").read_text()) for d in (kernel, shim))
    for d in (kernel, shim):
        _check_complete_run(d)
    assert mk["fanout"] == {"setting": "kernel"}
    assert ms["fanout"]["setting"] == "joined-only" and ms["fanout"]["inactive"] == []
    assert ms["fanout"]["failed"] == [] and ms["fanout"]["sockets"] >= 4 * 3
    assert set(ms["fanout"]["agents"]) == {"pub0", "pub1", "sub0", "sub1"}
    fk = {h: f["factor"] for h, f in mk["host_fanout"].items()}
    fs = {h: f["factor"] for h, f in ms["host_fanout"].items()}
    print(f"\nhost fan-out factors: kernel {fk}, joined-only {fs}; socket drops by role: "
          f"{mk['socket_drops']['hosts']} / {ms['socket_drops']['hosts']}")
    assert all(v >= 1.5 for v in fk.values()) and all(v <= 1.25 for v in fs.values()), (fk, fs)
    for man in (mk, ms):
        for roles in man["socket_drops"]["hosts"].values():
            assert set(roles) == {"publisher", "subscriber"}, roles


SAME_HOST = """\
[campaign]
name = "samehost"
[topology]
name = "lan"
params = { hosts = 4 }
[agent]
kind = "fastdds"
[matrix]
participants = [10]
modes = ["unicast", "multicast"]
same_host = ["udp", "shm"]
latency_count = [100]
pub_rate = [100]
execution_time = 3
[timing]
converge_timeout = 30
run_timeout = 90
"""


def test_same_host_axis_campaign(tmp_path: Path) -> None:
    """Same-host pairs: the Fast DDS agent on a 4-host LAN at 10x10 (round-robin: 24
    of the 100 publisher->subscriber pairs share a host). With same_host "shm", unicast
    same-host pairs take shared memory (Fast DDS's own path counters, lo idle) and the
    cross-host pairs the bridge; with "udp" the same pairs take UDP over lo. Multicast
    readers take UDP multicast looped back by the kernel in both settings: a reader given a
    multicast locator has no unicast (so no shared-memory) locator in Fast DDS 2.9
    (RTPSParticipantImpl::createAndAssociateReceiverswithEndpoint). Nothing is left in the
    machine's own /dev/shm: each emulated host has its own."""
    _fastdds_or_skip()
    before = set(os.listdir("/dev/shm"))
    scen = tmp_path / "samehost.toml"
    scen.write_text(SAME_HOST)
    root = tmp_path / "samehost"
    p = _run("run", str(scen), "--results", str(root), "--no-progress", timeout=600)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-3000:]
    ev = {}
    for setting in ("udp", "shm"):
        for mode in ("unicast", "multicast"):
            d = root / f"lan-rel-100B-rate100-samehost-{setting}-10x10-{mode}-r1"
            _check_complete_run(d)
            ev[setting, mode] = json.loads((d / "manifest.json").read_text())["same_host"]
    print("\nsame-host evidence: " + json.dumps({f"{s}/{m}": e for (s, m), e in ev.items()}))
    for (setting, mode), e in ev.items():
        assert e["setting"] == setting and e["silent"] == []
        assert e["transports"] == {"UDPv4" if setting == "udp" else "UDPv4|SHMEM": 20}
        assert e["pairs"] == {"same_host": 24, "cross_host": 76}
        same, other = e["samples_by_origin"]["same_host"], e["samples_by_origin"]["other_hosts"]
        path = e["data_by_path"]
        assert same > 0 and other > 0, e
        assert path["udp_other_hosts"] >= other, e  # every cross-host sample crossed the bridge
        if setting == "shm" and mode == "unicast":
            assert path["shared_memory"] >= same and path["udp_this_host"] == 0, e
            assert e["kernel_rx_packets"]["loopback"] < same / 10, e  # lo nearly idle
        else:
            assert path["shared_memory"] == 0 and path["udp_this_host"] >= same, e
    udp = ev["udp", "unicast"]  # lo carried its same-host samples
    assert udp["kernel_rx_packets"]["loopback"] >= udp["samples_by_origin"]["same_host"]
    assert not {f for f in set(os.listdir("/dev/shm")) - before if f.startswith("fastrtps")}


SHM_KILL = """\
[campaign]
name = "shmkill"
[topology]
name = "lan"
params = { hosts = 2 }
[agent]
kind = "fastdds"
[matrix]
participants = [2]
modes = ["unicast"]
same_host = ["shm"]
latency_count = [100]
pub_rate = [100]
execution_time = 60
[timing]
converge_timeout = 30
run_timeout = 120
"""


def _shm_devices(pid: int) -> set[int]:
    """The devices of the /dev/shm files `pid` has mapped (its host's tmpfs)."""
    devs = set()
    for line in Path(f"/proc/{pid}/maps").read_text().splitlines():
        fields = line.split(maxsplit=5)
        if len(fields) == 6 and fields[5].startswith("/dev/shm/"):
            major, minor = (int(x, 16) for x in fields[3].split(":"))
            devs.add(os.makedev(major, minor))
    return devs


def test_sigkilled_shared_memory_run_then_clean_leaves_no_shared_memory(
        tmp_path: Path) -> None:
    """A Fast DDS run with same-host shared memory, its `mcastlab run` SIGKILLed while the
    agents exchange, then `mcastlab clean`: the agents' segments were in their hosts' own
    tmpfs (not the machine's /dev/shm), and every process of the run is gone, so no mount
    namespace holds those file systems any more (their memory is freed); nothing of the
    run is in the machine's /dev/shm."""
    _fastdds_or_skip()
    scen = tmp_path / "shmkill.toml"
    scen.write_text(SHM_KILL)
    root = tmp_path / "shmkill"
    before = set(os.listdir("/dev/shm"))
    proc = subprocess.Popen(_mcastlab("run", str(scen), "--results", str(root),
                                      "--no-progress"),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)

    def sub0_printed() -> bool:
        out = [p / "agents" / "sub0.stdout" for p in root.glob(".*.partial")]
        return any(o.exists() and o.stat().st_size > 200 for o in out)

    try:
        deadline = time.monotonic() + 120
        while not sub0_printed():
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            assert time.monotonic() < deadline, "the agents did not print in time"
            time.sleep(0.2)
        books = runner_ledgers(proc.pid)
        agents = [e["pid"] for es in books.values() for e in es
                  if e["kind"] == "proc" and e["what"] == "perftest_fastdds"]
        assert len(agents) == 4, books
        tmpfs = set().union(*(_shm_devices(pid) for pid in agents))
        tree = process_tree(proc.pid)
    finally:
        proc.kill()
        proc.wait(timeout=30)
    assert tmpfs and os.stat("/dev/shm").st_dev not in tmpfs, tmpfs  # the hosts' own
    mcastlab_clean()
    assert_nothing_left(books, tree)
    assert not {f for f in set(os.listdir("/dev/shm")) - before if f.startswith("fastrtps")}
