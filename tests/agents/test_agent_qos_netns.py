"""The agents' effective protocol settings against RTI Perftest's ThroughputQos, once per
agent: a 1 -> 1 test between two namespaces, with Perftest's default batching and with
-batchSize 0. Each process prints its effective QoS at start (``qos: <key> = <value>``);
every setting of perftest-wrappers/perftest_throughput_qos.toml must be printed, the
protocol settings both middlewares can express must equal Perftest's, and every other
difference must be a row of the agent README's table "Perftest's ThroughputQos".

    ns h0 (publisher) --+-- Linux bridge --+-- ns h1 (subscriber)
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from experiments import agent_qos
from experiments.perftest_output import parse_perftest_output
from mcastlab import paths
from tests.helpers.agentkinds import AgentKind
from tests.helpers.agentrun import describe, pub_and_sub, run_agents
from tests.helpers.netlab import NetLab

AGENT_KINDS = ("native", "fastdds")

# What both middlewares can set as Perftest does: these must be equal, in every agent.
MUST_MATCH = (
    "writer.reliability", "writer.history", "writer.max_blocking_time",
    "writer.heartbeat_period", "writer.min_nack_response_delay",
    "writer.max_nack_response_delay", "writer.max_heartbeat_retries",
    "reader.reliability", "reader.history", "reader.min_heartbeat_response_delay",
    "reader.max_heartbeat_response_delay", "reader.max_samples",
    "reader.max_samples_per_instance", "reader.max_samples_per_remote_writer",
    "transport.recv_socket_buffer_size", "transport.send_socket_buffer_size",
)
SECTION = "## Perftest's ThroughputQos"


def readme_rows(kind: AgentKind) -> set[str]:
    """The settings (`key` in a row's first column) of the README's ThroughputQos table."""
    text = (paths.REPO_ROOT / kind.source / "README.md").read_text()
    assert SECTION in text, f"{kind.source}/README.md has no section {SECTION!r}"
    section = text.split(SECTION, 1)[1].split("\n## ", 1)[0]
    return {m.group(1) for m in re.finditer(r"^\| `([a-z_]+\.[a-z_]+)`", section, re.M)}


def kernel_limit(lab: NetLab, name: str) -> int:
    """net.core.<name> as seen in the lab's namespaces: Linux caps SO_RCVBUF/SO_SNDBUF there
    (RTI Connext gets no more than that either)."""
    r = lab.run(0, ["cat", f"/proc/sys/net/core/{name}"])
    return int(r.stdout)


@pytest.mark.parametrize("batching", ["default", "off"])
def test_effective_qos_is_perftests(lab2: NetLab, agent: str, agent_kind: AgentKind,
                                    batching: str, tmp_path: Path) -> None:
    args = ["-dataLen", "100", "-latencyCount", "100"]
    if batching == "off":
        args += ["-batchSize", "0"]
    res = run_agents(lab2, agent, 1, 1, args, pub_args=["-executionTime", "2"], timeout=30)
    diag = describe(res)
    assert all(r.rc == 0 for r in res), diag
    pub, sub = pub_and_sub(res)
    assert parse_perftest_output(sub.stdout).summary["Lost Samples"] == 0, diag
    # Perftest batches these samples by default; the Fast DDS agent cannot batch (README).
    # A unicast run (no group to resend repairs to).
    ref = agent_qos.reference(batching == "default", multicast=False)
    for limit, key in (("rmem_max", "transport.recv_socket_buffer_size"),
                       ("wmem_max", "transport.send_socket_buffer_size")):
        granted = min(int(ref[key].split()[0]), kernel_limit(lab2, limit))
        ref = {**ref, key: f"{granted} B"}
    documented = readme_rows(agent_kind)
    for proc, role in ((pub, "pub"), (sub, "sub")):
        qos = agent_qos.parse(proc.stderr)
        keys = agent_qos.role_keys(ref, role)
        assert set(keys) <= set(qos), (set(keys) - set(qos), proc.stderr[-3000:])
        diffs = agent_qos.differences(qos, ref, keys)
        assert not set(diffs) & set(MUST_MATCH), {k: diffs[k] for k in diffs if k in MUST_MATCH}
        undocumented = set(diffs) - documented
        assert not undocumented, (f"differences from Perftest's ThroughputQos missing in "
                                  f"{agent_kind.source}/README.md: "
                                  f"{ {k: diffs[k] for k in undocumented} }")
    pub_q = agent_qos.parse(pub.stderr)
    # The window: Perftest's in samples without batching; in batches where the agent batches.
    if batching == "off" or agent_kind.name == "native":
        assert pub_q["writer.send_window"] == ref["writer.send_window"], pub_q
    if agent_kind.name == "native":
        assert pub_q["writer.batching"] == ref["writer.batching"], pub_q


def _low_watermark_line(stderr: str) -> str:
    (line,) = [ln for ln in stderr.splitlines() if ln.startswith("qos: writer.low_watermark = ")]
    return line


def test_low_watermark_says_where_a_writer_resumes_also_when_the_user_moves_it(
        lab2: NetLab) -> None:
    """The native agent's WhcLow is one sample below the window (-batchSize 0, 100 B samples:
    184 B each in Cyclone's count, window 50); a user's CYCLONEDDS_URI may move it, and the
    printed line must then say where the writer really resumes (5 samples: after 45)."""
    agent = str(paths.NATIVE_AGENT)
    args = ["-dataLen", "100", "-latencyCount", "100", "-batchSize", "0"]
    lines = {}
    for name, env in (("agent's", None), ("user's", {
            **os.environ, "CYCLONEDDS_URI": "<CycloneDDS><Domain><Internal><Watermarks>"
                                            "<WhcLow>920B</WhcLow></Watermarks></Internal>"
                                            "</Domain></CycloneDDS>"})):
        res = run_agents(lab2, agent, 1, 1, args, pub_args=["-executionTime", "2"],
                         timeout=30, env=env)
        assert all(r.rc == 0 for r in res), describe(res)
        pub, _ = pub_and_sub(res)
        lines[name] = _low_watermark_line(pub.stderr)
    assert lines["agent's"].startswith("qos: writer.low_watermark = 49 (samples: Cyclone WhcLow "
                                       "9016 B"), lines
    assert "once 1 sample of a full window is acknowledged)" in lines["agent's"], lines
    assert "CYCLONEDDS_URI" not in lines["agent's"], lines
    assert lines["user's"].startswith("qos: writer.low_watermark = 5 (samples: Cyclone WhcLow "
                                      "920 B"), lines
    assert "once 45 samples of a full window are acknowledged (not the agent's" in lines["user's"]
    assert "set in CYCLONEDDS_URI" in lines["user's"], lines


@pytest.mark.parametrize("build", ["release", "asan"])
def test_scale_discovery_ends_with_perftests_protocol(lab2: NetLab, build: str) -> None:
    """-scaleDiscovery in a large test (-totalParticipants 100): the discovery tuning at start
    (heartbeat 1.333 s, Cyclone's socket buffers), then, once the peers have matched, Perftest's
    heartbeat timing and socket buffers: the last value printed for each setting is
    Perftest's (agent_qos.parse keeps the last), in the release and the ASan build (the
    agent reaches into Cyclone's domain state there: perftiming.c)."""
    agent = str(paths.NATIVE_AGENT if build == "release" else paths.NATIVE_AGENT_ASAN)
    if not os.access(agent, os.X_OK):
        pytest.fail(f"{agent} is missing: run ./setup.sh")
    args = ["-dataLen", "100", "-latencyCount", "100", "-batchSize", "0",
            "-totalParticipants", "100", "-scaleDiscovery"]
    res = run_agents(lab2, agent, 1, 1, args, pub_args=["-executionTime", "2"], timeout=60)
    diag = describe(res)
    assert all(r.rc == 0 for r in res), diag
    ref = agent_qos.reference(False)
    for limit, key in (("rmem_max", "transport.recv_socket_buffer_size"),
                       ("wmem_max", "transport.send_socket_buffer_size")):
        granted = min(int(ref[key].split()[0]), kernel_limit(lab2, limit))
        ref = {**ref, key: f"{granted} B"}
    for proc in res:
        assert "scale settings on (-scaleDiscovery)" in proc.stderr, proc.stderr[-2000:]
        assert "config: discovery complete: from now on Perftest's heartbeat timing" in (
            proc.stderr), proc.stderr[-2000:]
        qos = agent_qos.parse(proc.stderr)
        for key in ("transport.recv_socket_buffer_size", "transport.send_socket_buffer_size"):
            assert qos[key] == ref[key], (proc.name, key, qos[key], ref[key])
    pub, _ = pub_and_sub(res)
    # during discovery: 100^2 / 7500 s in whole ms, the value the agent checks in the domain
    assert "qos: writer.heartbeat_period = 1333 ms" in pub.stderr
    qos = agent_qos.parse(pub.stderr)
    assert qos["writer.heartbeat_period"] == ref["writer.heartbeat_period"] == "10 ms", qos


def test_receive_buffer_option_is_applied_and_read_back(lab2: NetLab, agent: str) -> None:
    """Perftest's -receiveBufferSize, as [matrix] receive_buffer = "stock" gives it (a stock
    kernel's rmem_max, 212,992 B): every UDP socket of both processes gets it, and the
    effective QoS reads it back from the sockets (the kernel reports twice the size)."""
    args = ["-dataLen", "100", "-latencyCount", "100", "-batchSize", "0",
            "-receiveBufferSize", "212992"]
    res = run_agents(lab2, agent, 1, 1, args, pub_args=["-executionTime", "2"], timeout=30)
    assert all(r.rc == 0 for r in res), describe(res)
    for proc in res:
        line = next(ln for ln in proc.stderr.splitlines()
                    if ln.startswith("qos: transport.recv_socket_buffer_size = "))
        assert line.startswith("qos: transport.recv_socket_buffer_size = 212992 B ("), line
        assert "is 425984 B" in line, line


@pytest.mark.parametrize("option", ["-scaleDiscovery", "-multicastResendOnFirstNack"])
def test_fast_dds_agent_refuses_the_cyclone_options(tmp_path: Path, option: str) -> None:
    """The Fast DDS agent shares the native agent's parser but has neither -scaleDiscovery
    nor -multicastResendOnFirstNack: it says so and exits with status 2 before DDS starts
    (no network needed)."""
    agent = paths.FASTDDS_AGENT
    if not os.access(agent, os.X_OK):
        pytest.fail(f"{agent} is missing: run ./setup.sh")
    r = subprocess.run([str(agent), "-pub", option, "-executionTime", "1"],
                       capture_output=True, text=True, timeout=30, cwd=tmp_path, check=False)
    assert r.returncode == 2, r.stderr
    assert f"{option} is the Cyclone DDS agent's" in r.stderr, r.stderr
