"""Evidence of a run's same-host pairs: which transport each agent used, how many
publisher→subscriber pairs shared an emulated host, and which path carried the data.

Same-host traffic never reaches a capture on the host's link, so the evidence comes from:

- the agents' stderr: every Perftest agent says its transport (``config: transport
  UDPv4|SHMEM``); a Fast DDS subscriber also says how many samples came from writers on
  its own host (Fast DDS's own test: the host id in the writer's GUID) and how many user
  DATA submessages each path delivered (shared memory, UDP from this host's address, UDP
  from other hosts; perftest-wrappers/fastdds/paths.cpp);
- the kernel: packets received on ``lo`` (same-host unicast) and on the links, per host
  (experiments/udpstats.parse_netdev), for any agent, RTI's included.

A run whose agents did not use what ``same_host`` asked for fails (:func:`problem`).

Example::

    >>> transport_evidence("config: x\\nconfig: transport UDPv4|SHMEM (Perftest's default)\\n")
    'UDPv4|SHMEM'
    >>> pairs({"pub0": "h1", "sub0": "h1", "sub1": "h2"})
    {'same_host': 1, 'cross_host': 1}
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

_TRANSPORT = re.compile(r"^config: transport (\S+)", re.M)
_ORIGIN = re.compile(r"samples by origin: same host (\d+), other hosts (\d+)")
_PATHS = re.compile(r"user DATA received by path: shared memory (\d+), UDP from this host "
                    r"(\d+), UDP from other hosts (\d+)")
PATHS = ("shared_memory", "udp_this_host", "udp_other_hosts")


def transport_evidence(stderr: str) -> str | None:
    """The transport an agent said it uses, or None when it said nothing."""
    m = _TRANSPORT.search(stderr)
    return m.group(1) if m else None


def origin_evidence(stderr: str) -> tuple[int, int] | None:
    """A Fast DDS subscriber's samples by origin: (same host, other hosts), or None.

    >>> origin_evidence("subscriber 0: samples by origin: same host 12, other hosts 30 (x)")
    (12, 30)
    """
    m = _ORIGIN.search(stderr)
    return (int(m.group(1)), int(m.group(2))) if m else None


def path_evidence(stderr: str) -> dict[str, int] | None:
    """A Fast DDS subscriber's user DATA by path (PATHS), or None.

    >>> path_evidence("user DATA received by path: shared memory 5, UDP from this host 0, "
    ...               "UDP from other hosts 7")
    {'shared_memory': 5, 'udp_this_host': 0, 'udp_other_hosts': 7}
    """
    m = _PATHS.search(stderr)
    return {k: int(v) for k, v in zip(PATHS, m.groups(), strict=True)} if m else None


def pairs(placement: Mapping[str, str]) -> dict[str, int]:
    """Publisher→subscriber pairs on one emulated host and across hosts."""
    pubs = [h for n, h in placement.items() if n.startswith("pub")]
    subs = [h for n, h in placement.items() if n.startswith("sub")]
    same = sum(p == s for p in pubs for s in subs)
    return {"same_host": same, "cross_host": len(pubs) * len(subs) - same}


def _sum(rows: list[dict[str, int]]) -> dict[str, int] | None:
    if not rows:
        return None
    return {k: sum(r[k] for r in rows) for k in rows[0]}


def evidence(cfg: Mapping[str, Any], agents_dir: Path,
             netdev_before: Mapping[str, Mapping[str, int]],
             netdev_after: Mapping[str, Mapping[str, int]]) -> dict[str, Any]:
    """manifest ``same_host``: the setting, each agent's transport (``transports``:
    transport → agent count, ``silent``: agents that named none), the pairs, the Fast DDS
    subscribers' samples by origin and DATA by path (None for other agents), and the
    kernel's received packets on lo and on the links, summed over the agent hosts."""
    stderr = {n: (agents_dir / f"{n}.stderr").read_text(errors="replace")
              for n in cfg["placement"] if (agents_dir / f"{n}.stderr").is_file()}
    transports: dict[str, int] = {}
    silent = []
    for name, text in sorted(stderr.items()):
        t = transport_evidence(text)
        if t is None:
            silent.append(name)
        else:
            transports[t] = transports.get(t, 0) + 1
    subs = [text for n, text in sorted(stderr.items()) if n.startswith("sub")]
    origins = [o for o in map(origin_evidence, subs) if o is not None]
    paths = [p for p in map(path_evidence, subs) if p is not None]
    kernel = {k: sum(netdev_after[h][k] - netdev_before[h][k]
                     for h in netdev_after if h in netdev_before)
              for k in ("lo", "links")}
    return {
        "setting": cfg.get("same_host", "udp"),
        "transports": transports,
        "silent": silent,
        "pairs": pairs(cfg["placement"]),
        "samples_by_origin": _sum([{"same_host": a, "other_hosts": b} for a, b in origins]),
        "data_by_path": _sum(paths),
        "kernel_rx_packets": {"loopback": kernel["lo"], "links": kernel["links"]},
    }


def problem(ev: Mapping[str, Any], agent: str) -> str | None:
    """Why a run did not have the same-host transport its scenario asked for, or None.

    >>> problem({"setting": "shm", "transports": {"UDPv4": 2}, "silent": []}, "fastdds")
    "same_host 'shm': 2 agent(s) used UDPv4, not shared memory"
    """
    if agent == "ddsperf":
        return None  # not Perftest: no -transport; "shm" is refused for it at validation
    setting = ev["setting"]
    if ev["silent"]:
        return (f"same_host {setting!r}: {', '.join(ev['silent'][:5])} did not say which "
                "transport it used (no 'config: transport' line in its stderr)")
    if setting == "shm":
        wrong = {t: n for t, n in ev["transports"].items() if "SHMEM" not in t}
        if wrong:
            return ("same_host 'shm': " + ", ".join(f"{n} agent(s) used {t}"
                                                     for t, n in wrong.items())
                    + ", not shared memory")
    else:
        wrong = {t: n for t, n in ev["transports"].items() if t != "UDPv4"}
        if wrong:
            return ("same_host 'udp': " + ", ".join(f"{n} agent(s) used {t}"
                                                     for t, n in wrong.items())
                    + ", not UDPv4 only")
    return None
