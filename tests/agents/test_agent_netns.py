"""The agents in real network namespaces, each test once per agent: the native agent
(Cyclone DDS) and the Fast DDS agent (agent differences in agentkinds.py). Plus the
shared-memory bypass test.

    ns h0 ---+            (publishers from h0, subscribers from h1, round-robin)
    ns h1 ---+--- Linux bridge (root namespace, tagged name, no IGMP snooping)
    ns h2 ---+
    ns h3 ---+
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from experiments.perftest_output import parse_latency_file, parse_perftest_output
from tests.helpers.agentkinds import AgentKind
from tests.helpers.agentrun import describe, pub_and_sub, run_agents
from tests.helpers.netlab import NetLab
from topologies.net import wait_for

AGENT_KINDS = ("native", "fastdds")
EXEC_S = 4
LATENCY_COUNT = 500


@pytest.mark.parametrize("mode", ["unicast", "multicast"])
@pytest.mark.parametrize(("pubs", "subs"), [(1, 1), (1, 3), (3, 3)])
@pytest.mark.parametrize("build", ["release", "asan"])
def test_reliable_throughput_no_loss_latency_rotation(
    request: pytest.FixtureRequest, lab4: NetLab, tmp_path: Path, agent_kind: AgentKind,
    build: str, mode: str, pubs: int, subs: int,
) -> None:
    """Reliable throughput, unicast and multicast: no loss, every sample counted, latency
    pings answered by every subscriber in turn (and no sanitizer report with the ASan
    build)."""
    agent = request.getfixturevalue("agent_asan" if build == "asan" else "agent")
    latfile = tmp_path / "pub0.latency.txt"
    args = ["-dataLen", "100", "-latencyCount", str(LATENCY_COUNT)]
    if mode == "multicast":
        args.append("-multicast")
    res = run_agents(lab4, agent, pubs, subs, args, timeout=EXEC_S + 15,
                     pub_args=["-executionTime", str(EXEC_S), "-latencyFile", str(latfile)])
    diag = describe(res)
    for r in res:
        assert r.rc == 0, diag
        assert r.elapsed <= EXEC_S + 15, diag
        if build == "asan":
            assert "AddressSanitizer" not in r.stderr and "runtime error" not in r.stderr, r.stderr
    pub_res = [r for r in res if r.role == "pub"]
    sent = {r.index: r.sent() for r in pub_res}
    for r in res:
        if r.role != "sub":
            continue
        out = parse_perftest_output(r.stdout)
        assert out.role == "subscriber", r.stdout
        assert out.summary["Lost Samples"] == 0, diag
        assert out.summary["Total Samples"] == sum(sent.values()), diag
        assert len(out.intervals) >= EXEC_S - 1
    pub0 = next(r for r in pub_res if r.index == 0)
    lat = parse_perftest_output(pub0.stdout)
    assert lat.role == "publisher"
    pings = -(-sent[0] // LATENCY_COUNT)  # seq 0 is a ping: ceil(sent / latencyCount)
    samples = parse_latency_file(latfile.read_text())
    # Perftest discards the first echo: pings - 1 latency samples, a few late echoes aside
    assert abs(len(samples) - (pings - 1)) <= 0.05 * pings, (len(samples), pings)
    assert len(lat.intervals) == len(samples)
    assert 0 < lat.summary["50% (us)"] < 1_000_000
    echoes = pub0.echoes_per_subscriber()
    assert set(echoes) == set(range(subs)) and min(echoes.values()) > 0, echoes
    assert max(echoes.values()) - min(echoes.values()) <= 1 + 0.05 * pings / subs, echoes


def test_best_effort_over_limited_link_counts_gaps(lab2: NetLab, agent: str) -> None:
    """1→1 best effort through a 20 Mbit/s TBF: the loss the subscriber
    reports equals the sequence numbers it never saw (received + lost == sent)."""
    lab2.limit_rate(0, "20mbit")
    res = run_agents(lab2, agent, 1, 1, ["-bestEffort", "-dataLen", "1000", "-batchSize", "0"],
                     pub_args=["-executionTime", "3"], timeout=25)
    diag = describe(res)
    assert all(r.rc == 0 for r in res), diag
    pub, sub = pub_and_sub(res)
    out = parse_perftest_output(sub.stdout)
    received, lost = out.summary["Total Samples"], out.summary["Lost Samples"]
    assert lost > 0, diag  # 20 Mbit/s cannot carry what the publisher offers
    assert received + lost == pub.sent(), (received, lost, pub.sent())
    percent = 100 * lost / (received + lost)
    assert out.summary["Lost Samples (%)"] == pytest.approx(percent, abs=0.01)
    # interval rows report the cumulative loss, never decreasing
    lost_col = out.column("Lost Samples")
    assert lost_col == sorted(lost_col) and lost_col[-1] <= lost


SIZES = [2**k for k in range(5, 15)] + [65536, 524288]


def test_latency_test_size_sweep(lab2: NetLab, agent: str) -> None:
    """-latencyTest 1→1 from 32 B to 16 KB, 64 KB and 512 KB."""
    medians = {}
    for size in SIZES:
        res = run_agents(lab2, agent, 1, 1, ["-latencyTest", "-dataLen", str(size)],
                         pub_args=["-numIter", "200"], timeout=30)
        diag = describe(res)
        assert all(r.rc == 0 for r in res), f"dataLen {size}:\n{diag}"
        pub = next(r for r in res if r.role == "pub")
        out = parse_perftest_output(pub.stdout)
        assert out.data_length == size
        assert len(out.intervals) >= 190, f"dataLen {size}: {len(out.intervals)} echoes"
        s = out.summary
        assert 0 < s["Min (us)"] <= s["50% (us)"] <= s["99% (us)"] <= s["Max (us)"]
        assert s["50% (us)"] < 100_000, f"dataLen {size}: median {s['50% (us)']} us"
        medians[size] = s["50% (us)"]
    # a 512 KB sample (fragmented, reassembled) takes longer than a 32 B one
    assert medians[524288] > medians[32], medians


def _text(path: Path) -> str:
    return path.read_text(errors="replace") if path.exists() else ""


def _rows(path: Path) -> list[list[str]]:
    """The csv interval rows an agent printed so far (lines of numbers)."""
    return [[f.strip() for f in line.split(",")] for line in _text(path).splitlines()
            if line.strip()[:1].isdigit()]


def _start(lab: NetLab, i: int, argv: list[str], logs: Path,
           name: str) -> tuple[subprocess.Popen[str], Path, Path]:
    """Start argv in host i with stdout/stderr in files (readable while it runs)."""
    out, err = logs / f"{name}.out", logs / f"{name}.err"
    with out.open("w") as fo, err.open("w") as fe:
        return lab.popen(i, argv, stdout=fo, stderr=fe), out, err


def test_never_appearing_and_dying_peers(lab2: NetLab, agent: str, tmp_path: Path) -> None:
    """Bounded waits with non-zero exits naming who was missing."""
    def common(finish_s: int) -> list[str]:
        # both counts, as the campaign runner gives them to the native agent (NATIVE_CROSS_ROLE)
        return ["-numPublishers", "1", "-numSubscribers", "2", "-noPrintConfig",
                "-discoveryTimeout", "3", "-finishTimeout", str(finish_s), "-leaseDuration", "2"]

    # (a) subscriber 1 never appears
    sub0 = lab2.popen(1, [agent, "-sub", "-sidMultiSubTest", "0", "-nic", lab2.ip(1), *common(3)])
    pub = lab2.popen(0, [agent, "-pub", "-nic", lab2.ip(0), "-executionTime", "2", *common(3)])
    _, perr = pub.communicate(timeout=20)
    _, serr = sub0.communicate(timeout=20)
    assert pub.returncode == 1 and "saw 1 of 2 subscribers" in perr and "missing 1" in perr, perr
    assert "config: 3 participants (-numPublishers + -numSubscribers)" in perr
    assert sub0.returncode == 1 and "vanished before FINISHED: 0" in serr, serr
    # (b) subscriber 1 is killed (SIGKILL) during the run: once all three matched. Until the
    # killed reader's lease (2 s) has expired, the publisher's KEEP_ALL window stays full and
    # nothing goes out, FINISHED included; Fast DDS once took over 4 s to expire it, longer
    # than a 3 s FINISHED wait (subscriber 0 was then reported missing as well). 8 s each.
    errs = {}
    subs = []
    for i in range(2):
        p, _, errs[f"sub{i}"] = _start(lab2, 1, [agent, "-sub", "-sidMultiSubTest", str(i),
                                                 "-nic", lab2.ip(1), *common(8)],
                                       tmp_path, f"b-sub{i}")
        subs.append(p)
    pub, _, errs["pub"] = _start(lab2, 0, [agent, "-pub", "-nic", lab2.ip(0), "-executionTime",
                                           "4", *common(8)], tmp_path, "b-pub")
    assert wait_for(lambda: all("discovery complete" in _text(e) for e in errs.values()), 15), {
        n: _text(e)[-500:] for n, e in errs.items()}
    assert pub.poll() is None  # the kill falls inside the publisher's 4 s run
    os.kill(subs[1].pid, signal.SIGKILL)
    pub.wait(timeout=30)
    subs[0].wait(timeout=30)
    perr, serr = _text(errs["pub"]), _text(errs["sub0"])
    assert pub.returncode == 1 and "missing 1" in perr, perr
    assert subs[0].returncode == 0, serr


@pytest.mark.parametrize("victim", ["pub", "sub"])
def test_sigterm_prints_summary_and_exits_0(lab2: NetLab, agent: str, victim: str,
                                            tmp_path: Path) -> None:
    """SIGTERM mid-run prints the summary so far and exits 0 promptly.

    "Mid-run": once the subscriber has printed an interval with samples and publisher 0 a
    latency row (an echo came back), so the summaries have something to report."""
    sub, sout, serr = _start(lab2, 1, [agent, "-sub", "-nic", lab2.ip(1), "-noPrintConfig"],
                             tmp_path, "sub")
    pub, pout, perr = _start(lab2, 0, [agent, "-pub", "-nic", lab2.ip(0), "-executionTime", "60",
                                       "-noPrintConfig", "-latencyCount", "100"], tmp_path, "pub")
    flowing = wait_for(lambda: any(len(r) > 1 and r[1].isdigit() and int(r[1]) > 0
                                   for r in _rows(sout)) and bool(_rows(pout)), 20)
    assert flowing, _text(serr)[-1000:] + _text(perr)[-1000:]
    assert sub.poll() is None and pub.poll() is None
    target, out, err = (pub, pout, perr) if victim == "pub" else (sub, sout, serr)
    t0 = time.monotonic()
    target.send_signal(signal.SIGTERM)
    target.wait(timeout=10)
    assert time.monotonic() - t0 < 5
    assert target.returncode == 0, _text(err)
    # A signal means "stop now": no DDS teardown, which can wait on peers still sending.
    assert "(stopped by a signal: DDS teardown skipped)" in _text(err), _text(err)[-500:]
    parsed = parse_perftest_output(_text(out))
    assert parsed.summary, _text(out)
    if victim == "sub":
        assert parsed.summary["Total Samples"] > 0
        pub.send_signal(signal.SIGTERM)
    else:
        assert parsed.summary["50% (us)"] > 0
        sub.wait(timeout=20)  # the publisher's FINISHED ends the subscriber
        assert sub.returncode == 0, _text(serr)


@pytest.mark.parametrize(("multicast", "descriptor"),
                         [(False, False), (True, False), (False, True)])
def test_unicast_peers_discovery(lab4: NetLab, agent: str, agent_kind: AgentKind,
                                 multicast: bool, descriptor: bool) -> None:
    """The explicit fully-unicast discovery variant (-peer list, ParticipantIndex auto);
    ``descriptor``: the peers written as RTI command lines carry them, ``N@address``
    (N = the highest participant id: it raises the indices probed per host)."""
    peers = [x for i in range(lab4.n)
             for x in ("-peer", f"9@{lab4.ip(i)}" if descriptor else lab4.ip(i))]
    args = ["-latencyCount", "100", *peers, *(["-multicast"] if multicast else [])]
    res = run_agents(lab4, agent, 2, 3, args, pub_args=["-executionTime", "3"], timeout=25)
    diag = describe(res)
    assert all(r.rc == 0 for r in res), diag
    pub0 = next(r for r in res if r.role == "pub" and r.index == 0)
    assert "discovery: unicast peers list" in pub0.stderr
    if descriptor:
        for evidence in agent_kind.peers(lab4.ip(0)):
            assert evidence in pub0.stderr, (evidence, pub0.stderr[-3000:])
    total = sum(r.sent() for r in res if r.role == "pub")
    for r in res:
        if r.role == "sub":
            out = parse_perftest_output(r.stdout)
            assert out.summary["Total Samples"] == total and out.summary["Lost Samples"] == 0
    assert min(pub0.echoes_per_subscriber().values()) > 0


def _count(pcap: Path, bpf: str) -> int:
    r = subprocess.run(["tcpdump", "-nn", "-r", str(pcap), bpf], capture_output=True, text=True)
    return len(r.stdout.splitlines())


@pytest.mark.parametrize("mode", ["unicast", "multicast"])
def test_data_path_on_the_wire(lab4: NetLab, agent: str, tmp_path: Path, mode: str) -> None:
    """-multicast sends Throughput data to 239.255.1.1 (Perftest's group); without it the
    data is unicast and the data groups carry nothing. Captured on publisher 0's link.

    Expected: multicast mode: the Throughput group carries the bulk of publisher 0's UDP
    packets; unicast mode: not one packet to 239.255.1.1/.2/.100.
    """
    pcap, log = tmp_path / "pub0.pcap", tmp_path / "tcpdump.log"
    with log.open("w") as lf:
        cap = lab4.popen_root(["tcpdump", "-i", f"pt{lab4.tag}v0", "-nn", "-s", "96", "-w",
                               str(pcap), "udp"], stdout=subprocess.DEVNULL, stderr=lf)
    assert wait_for(lambda: "listening on" in _text(log) or cap.poll() is not None, 10)
    assert cap.poll() is None, _text(log)
    args = ["-latencyCount", "100", *(["-multicast"] if mode == "multicast" else [])]
    res = run_agents(lab4, agent, 1, 3, args, pub_args=["-executionTime", "2"], timeout=20)
    # The last packets may still sit in tcpdump's buffer and be lost at SIGINT: the bounds
    # below (> 100 packets, a 3:1 ratio, exactly 0 to the groups) do not depend on them.
    cap.send_signal(signal.SIGINT)
    cap.wait(timeout=10)
    assert all(r.rc == 0 for r in res), describe(res)
    src = f"src host {lab4.ip(0)}"
    to_tp = _count(pcap, f"{src} and dst host 239.255.1.1")
    to_groups = _count(pcap, f"{src} and (dst host 239.255.1.1 or dst host 239.255.1.2 "
                             "or dst host 239.255.1.100)")
    unicast = _count(pcap, f"{src} and not dst net 224.0.0.0/4")
    if mode == "multicast":
        assert to_tp > 100 and to_tp > 3 * unicast, (to_tp, unicast)
    else:
        assert to_groups == 0 and unicast > 100, (to_groups, unicast)


def test_no_shared_memory_bypass(lab2: NetLab, agent: str, agent_kind: AgentKind) -> None:
    """No shared-memory bypass of the emulated network, for every -transport the agent
    has (none: Perftest's default, UDPv4|SHMEM where the middleware has shared memory):
    with host 1's bridge port down, a publisher on host 0 and a subscriber on host 1
    exchange nothing (both give up discovery, exit 1, the subscriber prints no data); with
    the port up again, the same command lines exchange data, except SHMEM alone, which
    still reaches nobody on another host.

    The two namespaces share /dev/shm (the lab's one, unlike the testbed's emulated hosts
    which have one each) and the hostname: Fast DDS takes shared memory only to participants
    whose host id, a hash of the IPv4 addresses, equals its own (perftest-wrappers/fastdds/
    config.cpp), so the hosts' different addresses keep it apart; an agent that delivered
    through shared memory (SHM transport or data sharing) would discover its peer and
    deliver samples with the link down. Each transport runs in its own domain, all at once."""
    port = f"pt{lab2.tag}v1"  # host 1's veth on the bridge
    transports = [None, "UDPv4", "SHMEM"] if agent_kind.shm else [None, "UDPv4"]

    def cmds(i: int, tr: str | None) -> tuple[list[str], list[str]]:
        common = ["-noPrintConfig", "-discoveryTimeout", "4", "-finishTimeout", "2",
                  "-domain", str(10 + i), *(["-transport", tr] if tr else [])]
        return ([agent, "-pub", "-nic", lab2.ip(0), "-executionTime", "2", "-latencyCount",
                 "100", *common], [agent, "-sub", "-nic", lab2.ip(1), *common])

    def run_all() -> list[tuple[subprocess.Popen[str], subprocess.Popen[str]]]:
        pairs = []
        for i, tr in enumerate(transports):
            pub_cmd, sub_cmd = cmds(i, tr)
            sub = lab2.popen(1, sub_cmd)
            pairs.append((lab2.popen(0, pub_cmd), sub))
        return pairs

    def none_exchanged(pub: subprocess.Popen[str], sub: subprocess.Popen[str]) -> None:
        pout, perr = pub.communicate(timeout=30)
        sout, serr = sub.communicate(timeout=30)
        assert pub.returncode == 1 and "saw 0 of 1 subscribers" in perr, perr
        assert sub.returncode == 1 and "saw 0 of 1 publishers" in serr, serr
        assert sout == "" and pout == "", (sout, pout)

    subprocess.run(["ip", "link", "set", port, "down"], check=True, capture_output=True)
    for pub, sub in run_all():
        none_exchanged(pub, sub)
    subprocess.run(["ip", "link", "set", port, "up"], check=True, capture_output=True)
    for tr, (pub, sub) in zip(transports, run_all(), strict=True):
        if tr == "SHMEM":
            none_exchanged(pub, sub)
            continue
        _, perr = pub.communicate(timeout=30)
        sout, serr = sub.communicate(timeout=30)
        assert pub.returncode == 0 and sub.returncode == 0, perr[-1500:] + serr[-1500:]
        out = parse_perftest_output(sout)
        assert out.summary["Total Samples"] > 0 and out.summary["Lost Samples"] == 0, sout
        said = next(ln for ln in serr.splitlines() if ln.startswith("config: transport"))
        default = "UDPv4|SHMEM" if agent_kind.shm else "UDPv4"
        assert said.startswith(f"config: transport {tr or default}"), said


def test_keyed_instances_no_loss(lab2: NetLab, agent: str) -> None:
    """-keyed -instances 50: a keyed topic whose key cycles over 50 instances, reliable, so
    every sample arrives (the Fast DDS agent shares its window over the instances: Fast DDS
    refuses per-instance limits that exceed the total, and the writer was not created)."""
    res = run_agents(lab2, agent, 1, 1, ["-keyed", "-instances", "50", "-latencyCount", "100"],
                     pub_args=["-executionTime", "2"], timeout=25)
    diag = describe(res)
    assert all(r.rc == 0 for r in res), diag
    pub, sub = pub_and_sub(res)
    out = parse_perftest_output(sub.stdout)
    assert out.summary["Total Samples"] == pub.sent() > 0 and out.summary["Lost Samples"] == 0
    assert ", keyed" in pub.stderr


def test_peers_mode_sends_no_multicast(lab2: NetLab, agent: str, tmp_path: Path) -> None:
    """-peer without -multicast is fully unicast: not one datagram to a multicast group on
    the bridge (SPDP included), while the test runs and every process exits 0."""
    pcap, log = tmp_path / "br.pcap", tmp_path / "tcpdump.log"
    with log.open("w") as lf:
        cap = lab2.popen_root(["tcpdump", "-i", f"pt{lab2.tag}br", "-nn", "-s", "96", "-w",
                               str(pcap), "udp"], stdout=subprocess.DEVNULL, stderr=lf)
    assert wait_for(lambda: "listening on" in _text(log) or cap.poll() is not None, 10)
    assert cap.poll() is None, _text(log)
    peers = ["-peer", lab2.ip(0), "-peer", lab2.ip(1)]
    res = run_agents(lab2, agent, 2, 2, [*peers, "-latencyCount", "100"],
                     pub_args=["-executionTime", "2"], timeout=25)
    cap.send_signal(signal.SIGINT)
    cap.wait(timeout=10)
    assert all(r.rc == 0 for r in res), describe(res)
    assert _count(pcap, "dst net 224.0.0.0/4") == 0
    assert _count(pcap, "not dst net 224.0.0.0/4") > 100
