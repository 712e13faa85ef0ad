"""Command lines of the agents (docs/contracts.md §1) for one process of one run.

Perftest-compatible agents (``native``, ``native-asan``, ``rti``) get RTI Perftest 4.x
options; ``ddsperf`` (Cyclone's own tool, a reference) gets its own command line and a
Cyclone configuration in ``CYCLONEDDS_URI``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcastlab import paths

PERFTEST_KINDS = ("native", "native-asan", "rti")


def executable(kind: str) -> Path:
    return {
        "native": paths.NATIVE_AGENT,
        "native-asan": paths.NATIVE_AGENT_ASAN,
        "rti": paths.RTI_WRAPPER,
        "ddsperf": Path("ddsperf"),
    }[kind]


@dataclass
class ProcSpec:
    """One agent process: where it runs, its argv and extra environment."""

    name: str  # pub0, sub3, ...
    host: str
    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)
    latency_file: Path | None = None


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


def build(cfg: dict[str, Any], host_ip: dict[str, str], agents_dir: Path) -> list[ProcSpec]:
    """Processes of a run, publishers first (``cfg`` is the run's config.json dict)."""
    kind = cfg["agent"]
    exe = str(executable(kind))
    pubs, subs = cfg["publishers"], cfg["subscribers"]
    placement: dict[str, str] = cfg["placement"]
    hosts_used = sorted(set(placement.values()))
    peers = [host_ip[h] for h in hosts_used]
    per_host = max(list(placement.values()).count(h) for h in hosts_used)
    out: list[ProcSpec] = []
    for name, host in placement.items():
        is_pub = name.startswith("pub")
        idx = int(name[3:])
        ip = host_ip[host]
        lat = agents_dir / f"{name}.latency.txt" if is_pub and idx == 0 else None
        if kind in PERFTEST_KINDS:
            argv = [exe, "-pub" if is_pub else "-sub"]
            argv += ["-pidMultiPubTest", str(idx)] if is_pub else ["-sidMultiSubTest", str(idx)]
            argv += ["-numPublishers", str(pubs), "-numSubscribers", str(subs)]
            argv += ["-dataLen", str(cfg["data_len"]), "-domain", str(cfg["domain"])]
            argv += ["-nic", ip, "-outputFormat", "csv"]
            if not cfg["reliable"]:
                argv.append("-bestEffort")
            if cfg["mode"] == "multicast":
                argv.append("-multicast")
            if cfg["discovery"] == "unicast-peers":
                for p in peers:
                    argv += ["-peer", p]
            if cfg["test"] == "latency":
                argv.append("-latencyTest")
            if is_pub:
                argv += ["-latencyCount", str(cfg["latency_count"])]
                if cfg["execution_time"]:
                    argv += ["-executionTime", str(cfg["execution_time"])]
                if cfg.get("num_iter"):
                    argv += ["-numIter", str(cfg["num_iter"])]
                if cfg.get("pub_rate"):
                    # Sleep, not Perftest's default spin: 75 spinning publishers would
                    # saturate the testbed's cores by themselves.
                    argv += ["-pubRate", f"{cfg['pub_rate']}:sleep"]
            if lat is not None:
                argv += ["-latencyFile", str(lat)]
            argv += list(cfg.get("agent_extra_args", []))
            out.append(ProcSpec(name, host, argv, latency_file=lat))
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
            env = {"CYCLONEDDS_URI": _cyclone_uri(cfg, ip, peers, per_host)}
            out.append(ProcSpec(name, host, argv, env=env))
    return out
