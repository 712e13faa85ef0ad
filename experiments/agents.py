"""Command lines of the agents (docs/contracts.md §1) for one process of one run.

Perftest-compatible agents (``native``, ``native-asan`` on Cyclone DDS, ``fastdds``,
``fastdds-asan`` on Fast DDS, ``rti``) get RTI Perftest 4.x options, each role only its own
(publisher-only options never to subscribers and the reverse: real Perftest refuses them;
the role table is experiments/agent_options.py). The mcastlab agents (native and Fast DDS:
one command-line parser) still need the other role's count (agent_options.NATIVE_CROSS_ROLE);
real Perftest gets ``-peer N@address`` so that more than 5 participants per host are
contacted. ``ddsperf`` (Cyclone's own tool, a reference) gets its own command line and a
Cyclone configuration in ``CYCLONEDDS_URI``.

A run with ``fanout = "joined-only"`` gives every agent the IP_MULTICAST_ALL=0 shim in
``LD_PRELOAD`` (perftest-wrappers/mcastall) and ``MCASTLAB_MCASTALL_LOG=1``, so each agent's
stderr says the shim was active; the runner checks it (:func:`shim_evidence`).

Same-host pairs: ``same_host = "udp"`` (the default) gives every Perftest agent ``-transport
UDPv4``; ``"shm"`` gives none, Perftest's own default (UDPv4|SHMEM). Each agent prints the
transport it really uses (``config: transport ...``; experiments/samehost.py).
"""

from __future__ import annotations

import functools
import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from experiments import agent_options
from experiments.results import sha256_file
from experiments.schema import MULTICAST_RESEND, RECEIVE_BUFFER, STOCK_RMEM_MAX
from mcastlab import paths

PERFTEST_KINDS = ("native", "native-asan", "fastdds", "fastdds-asan", "rti")


def executable(kind: str) -> Path:
    return {
        "native": paths.NATIVE_AGENT,
        "native-asan": paths.NATIVE_AGENT_ASAN,
        "fastdds": paths.FASTDDS_AGENT,
        "fastdds-asan": paths.FASTDDS_AGENT_ASAN,
        "rti": paths.RTI_WRAPPER,
        "ddsperf": Path("ddsperf"),
    }[kind]


@functools.cache
def agent_info(kind: str) -> dict[str, Any]:
    """The agent executable a run used, with its sha256 (binaries have no version flag)."""
    exe = shutil.which(str(executable(kind))) or str(executable(kind))
    path = Path(exe)
    return {"kind": kind, "executable": exe,
            "sha256": sha256_file(path) if path.is_file() else None}


@dataclass
class ProcSpec:
    """One agent process: where it runs, its argv and extra environment."""

    name: str  # pub0, sub3, ...
    host: str
    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)
    latency_file: Path | None = None


SHIM_ACTIVE = "mcastlab-mcastall: active:"
SHIM_FAILED = "mcastlab-mcastall: FAILED"
_SHIM_COUNT = re.compile(
    r"mcastlab-mcastall: IP_MULTICAST_ALL=0 on (\d+) UDP sockets, (\d+) failed")


def fanout_env(kind: str, fanout: str) -> dict[str, str]:
    """Environment an agent needs for the run's fan-out setting (empty for "kernel").

    >>> sorted(fanout_env("native", "joined-only"))
    ['LD_PRELOAD', 'MCASTLAB_MCASTALL_LOG']
    >>> fanout_env("native", "kernel")
    {}
    """
    if fanout == "kernel":
        return {}
    env = {"LD_PRELOAD": str(paths.MCASTALL_SHIM), "MCASTLAB_MCASTALL_LOG": "1"}
    if kind.endswith("-asan"):
        # ASan refuses to start when a library is preloaded before its runtime; the shim
        # intercepts only socket(), which ASan does not.
        old = os.environ.get("ASAN_OPTIONS", "")
        env["ASAN_OPTIONS"] = f"{old}:verify_asan_link_order=0" if old else \
            "verify_asan_link_order=0"
    return env


def shim_evidence(stderr: str) -> dict[str, object]:
    """What an agent's stderr says about the shim: active, failures, sockets set.

    >>> shim_evidence("mcastlab-mcastall: active: IP_MULTICAST_ALL=0 on UDP sockets of pid 7\\n"
    ...               "mcastlab-mcastall: IP_MULTICAST_ALL=0 on 4 UDP sockets, 0 failed\\n")
    {'active': True, 'failed': 0, 'sockets': 4}
    """
    m = _SHIM_COUNT.search(stderr)
    return {
        "active": SHIM_ACTIVE in stderr,
        "failed": max(stderr.count(SHIM_FAILED), int(m.group(2)) if m else 0),
        "sockets": int(m.group(1)) if m else None,  # None: the agent did not exit normally
    }


def _cyclone_uri(cfg: dict[str, Any], ip: str, peers: list[str], per_host: int) -> str:
    allow = "true" if cfg["mode"] == "multicast" else "spdp"
    disc = ""
    if cfg["discovery"] == "unicast-peers":
        allow = "false"
        peer_xml = "".join(f'<Peer address="{p}"/>' for p in peers)
        disc = (
            f"<Discovery><ParticipantIndex>auto</ParticipantIndex>"
            f"<MaxAutoParticipantIndex>{max(per_host, 10) + 1}</MaxAutoParticipantIndex>"
            f"<Peers>{peer_xml}</Peers></Discovery>"
        )
    return (
        "<CycloneDDS><Domain id=\"any\"><General>"
        f'<Interfaces><NetworkInterface address="{ip}"/></Interfaces>'
        f"<AllowMulticast>{allow}</AllowMulticast></General>{disc}</Domain></CycloneDDS>"
    )


# Perftest ends a test at -executionTime or after -numIter samples (default 1e8), whichever
# comes first (perftest_cpp.cxx 4.3). An agent sends at most ~1 M samples/s here (1->1,
# 100 B), so a run longer than 100 s could stop early on the sample count: such runs get
# -numIter for 1 M samples/s over their whole time, and the clock decides.
PERFTEST_DEFAULT_NUM_ITER = 100_000_000
MAX_SAMPLES_PER_S = 1_000_000


def iterations_for(execution_time: int) -> int | None:
    """-numIter that lets ``execution_time`` end the test; None where Perftest's default does.

    >>> iterations_for(20) is None, iterations_for(21600)
    (True, 21600000000)
    """
    need = execution_time * MAX_SAMPLES_PER_S
    return need if need > PERFTEST_DEFAULT_NUM_ITER else None


# Perftest as the study ran it: without batching, one sample per datagram and a send window
# of -sendQueueSize samples (50), one ping every latency_count samples: what the RTI wrapper
# gives real Perftest (perftest-wrappers/rti/README.md, "Batching and pings"). The mcastlab
# agents batch by default as Perftest does (8192 B, a window of 50 batches); their
# publishers get the same -batchSize 0 here, so both paths run one regime.
PUBLISHER_BATCHING = ["-batchSize", "0"]
# Cyclone DDS has one heartbeat interval and one set of socket buffers per domain, so
# Perftest's 10 ms heartbeat and 2 MiB / 1 MiB buffers also drive the discovery writers and
# sockets: measured at 75 + 75 on 2 cores, discovery then did not finish within 120 s (at
# 25 + 25 it took 13.5 s). The native agent's -scaleSettings (heartbeat 1-3 s, SPDP 10 s,
# Cyclone's buffers; applied only in tests of more than 20 participants, printed and in the
# effective QoS, manifest agent_qos) is what makes large tests run; Fast DDS and Connext
# set heartbeats per writer and need nothing of the kind. It is a factor of the scenario
# ([matrix] heartbeat_timing: "perftest", "scaled" or "scaled-discovery"; unset, the native
# agent gets -scaleSettings), and the manifest says which timing each run's writers had
# (heartbeat_timing()).
NATIVE_SCALE = ["-scaleSettings"]
# ... or only until discovery completes, then Perftest's timing and socket buffers
# ([matrix] heartbeat_timing = "scaled-discovery"; perftest-wrappers/native/perftiming.c).
NATIVE_SCALE_DISCOVERY = ["-scaleDiscovery"]
NATIVE_KINDS = ("native", "native-asan")
LARGE_TEST = 20  # participants (publishers + subscribers) above which the agent applies it
# The mcastlab agents' own bound on discovery (120 s by default; Perftest waits without
# one). At 75 + 75 on 2 cores discovery took 80-119 s unicast and the stragglers of an
# unpaced multicast run more than 120 s: in large tests the agents wait up to 240 s and the
# run's timeout is the limit (a scenario's extra_args may set another bound).
LARGE_DISCOVERY_TIMEOUT = ["-discoveryTimeout", "240"]


def heartbeat_timing(cfg: dict[str, Any]) -> str | None:
    """The heartbeat timing a run's writers get ([matrix] heartbeat_timing, schema.py):
    "scaled" (the native agent's -scaleSettings) or "scaled-discovery" (-scaleDiscovery)
    only in tests of more than LARGE_TEST participants, where the agent applies them;
    "perftest" otherwise; None for ddsperf, which is not Perftest (Cyclone's default
    timing).

    >>> heartbeat_timing({"agent": "native", "publishers": 25, "subscribers": 25})
    'scaled'
    >>> heartbeat_timing({"agent": "native", "publishers": 25, "subscribers": 25,
    ...                   "heartbeat_timing": "perftest"})
    'perftest'
    >>> heartbeat_timing({"agent": "native", "publishers": 10, "subscribers": 10})
    'perftest'
    """
    kind = cfg["agent"]
    if kind not in PERFTEST_KINDS:
        return None
    if cfg["publishers"] + cfg["subscribers"] <= LARGE_TEST:
        return "perftest"  # the options change nothing there
    extra = cfg.get("agent_extra_args") or []
    if NATIVE_SCALE_DISCOVERY[0] in extra:  # the scenario check refuses it with the axis
        return "scaled-discovery"
    if NATIVE_SCALE[0] in extra:
        return "scaled"
    # the axis, where the agent has the options (the expansion leaves the others' "scaled*"
    # runs out; a configuration made otherwise runs Perftest's timing), else the agent's
    # own: the native agent gets -scaleSettings
    asked = cfg.get("heartbeat_timing")
    if asked and (asked == "perftest" or kind in NATIVE_KINDS):
        return asked
    return "scaled" if kind in NATIVE_KINDS else "perftest"


def protocol_args(cfg: dict[str, Any]) -> list[str]:
    """The options that apply a run's protocol factors ([matrix] multicast_resend, receive_buffer;
    experiments/schema.py PROTOCOL_FACTORS). The scenario check refused the values an agent
    cannot apply; the values that are an agent's own need no option ("second-nack" is
    Connext's and Cyclone's default, every Perftest agent asks for 2 MiB).

    >>> protocol_args({"agent": "native", "mode": "multicast", "multicast_resend": "first-nack",
    ...                "receive_buffer": "stock"})
    ['-multicastResendOnFirstNack', '-receiveBufferSize', '212992']
    >>> protocol_args({"agent": "native", "mode": "unicast", "multicast_resend": "first-nack"})
    []
    """
    out: list[str] = []
    kind = cfg["agent"]
    if (cfg.get("multicast_resend") == "first-nack" and kind in NATIVE_KINDS
            and cfg["mode"] == "multicast"):  # no group in a unicast run
        out.append(MULTICAST_RESEND.option)
    if cfg.get("receive_buffer") == "stock" and kind in PERFTEST_KINDS:
        out += [RECEIVE_BUFFER.option, str(STOCK_RMEM_MAX)]
    return out


def _perftest_args(cfg: dict[str, Any], is_pub: bool, idx: int, ip: str,
                   peer_counts: dict[str, int], latency_file: Path | None) -> list[str]:
    """A Perftest agent's options: each role gets only its own (Perftest refuses the other
    role's, experiments/agent_options.py), plus what the mcastlab agents still need."""
    native = cfg["agent"] != "rti"  # the native and Fast DDS agents share one parser
    pubs, subs = cfg["publishers"], cfg["subscribers"]
    if is_pub:
        args = ["-pub", "-pidMultiPubTest", str(idx), "-numSubscribers", str(subs)]
        if native:  # NATIVE_CROSS_ROLE: its range check and discovery tuning
            args += ["-numPublishers", str(pubs)]
    else:
        args = ["-sub", "-sidMultiSubTest", str(idx), "-numPublishers", str(pubs)]
        if native:
            args += ["-numSubscribers", str(subs)]
    args += ["-dataLen", str(cfg["data_len"]), "-domain", str(cfg["domain"])]
    args += ["-nic", ip, "-outputFormat", "csv"]
    if cfg.get("same_host", "udp") == "udp":
        # "shm" gives no -transport: Perftest's default (UDPv4|SHMEM), as the study ran it.
        args += ["-transport", "UDPv4"]
    if not cfg["reliable"]:
        args.append("-bestEffort")
    if cfg["mode"] == "multicast":
        args.append("-multicast")
    if cfg["discovery"] == "unicast-peers":
        for p, n in peer_counts.items():
            # Connext contacts participant ids 0-4 per address unless told N@address.
            args += ["-peer", p if native else agent_options.peer_descriptor(p, n)]
    if is_pub:
        if native:
            args += PUBLISHER_BATCHING
        if cfg["test"] == "latency":
            args.append("-latencyTest")
        args += ["-latencyCount", str(cfg["latency_count"])]
        if cfg["execution_time"]:
            args += ["-executionTime", str(cfg["execution_time"])]
        num_iter = cfg.get("num_iter") or iterations_for(cfg["execution_time"])
        if num_iter:
            args += ["-numIter", str(num_iter)]
        if cfg.get("pub_rate"):
            # Sleep, not Perftest's default spin: 75 spinning publishers would
            # saturate the testbed's cores by themselves.
            args += ["-pubRate", f"{cfg['pub_rate']}:sleep"]
        if latency_file is not None:
            args += ["-latencyFile", str(latency_file)]
    extra = list(cfg.get("agent_extra_args", []))
    if pubs + subs > LARGE_TEST:  # what large tests need, unless the scenario gave it
        timing = heartbeat_timing(cfg)
        for wanted, option in ((timing == "scaled", NATIVE_SCALE),
                               (timing == "scaled-discovery", NATIVE_SCALE_DISCOVERY),
                               (native, LARGE_DISCOVERY_TIMEOUT)):
            if wanted and option[0] not in extra:
                args += option
    return args + protocol_args(cfg) + extra


def build(cfg: dict[str, Any], host_ip: dict[str, str], agents_dir: Path) -> list[ProcSpec]:
    """Processes of a run, publishers first (``cfg`` is the run's config.json dict)."""
    kind = cfg["agent"]
    exe = str(executable(kind))
    placement: dict[str, str] = cfg["placement"]
    hosts_used = sorted(set(placement.values()))
    peers = [host_ip[h] for h in hosts_used]
    host_count = {h: list(placement.values()).count(h) for h in hosts_used}
    peer_counts = {host_ip[h]: n for h, n in host_count.items()}
    per_host = max(host_count.values())
    shim_env = fanout_env(kind, cfg.get("fanout", "kernel"))
    out: list[ProcSpec] = []
    for name, host in placement.items():
        is_pub = name.startswith("pub")
        idx = int(name[3:])
        ip = host_ip[host]
        lat = agents_dir / f"{name}.latency.txt" if is_pub and idx == 0 else None
        if kind in PERFTEST_KINDS:
            argv = [exe, *_perftest_args(cfg, is_pub, idx, ip, peer_counts, lat)]
            out.append(ProcSpec(name, host, argv, env=dict(shim_env), latency_file=lat))
        else:
            dur = cfg["execution_time"] or 60
            # Subscribers outlive the publishers a little so they see the last second.
            argv = [exe, "-D", str(dur if is_pub else dur + 2), "-i", str(cfg["domain"])]
            if not cfg["reliable"]:
                argv.append("-u")
            if is_pub:
                pct = 100.0 / cfg["latency_count"] if idx == 0 else 0
                argv += ["pub", "size", str(max(cfg["data_len"], 12))]
                if pct:
                    argv.append(f"{pct:g}%")
            else:
                argv += ["sub", "pong"]
            argv += list(cfg.get("agent_extra_args", []))
            env = {"CYCLONEDDS_URI": _cyclone_uri(cfg, ip, peers, per_host), **shim_env}
            out.append(ProcSpec(name, host, argv, env=env))
    return out
