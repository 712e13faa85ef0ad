"""The effective protocol settings of a run's agents, against RTI Perftest's ThroughputQos.

Every mcastlab agent prints, at start, the effective QoS of its Throughput writer
(publishers) or reader (subscribers) and of its transport in the terms of Perftest's
ThroughputQos, one line per setting: ``qos: <key> = <value> (<how>)``. Perftest's own
values are the table perftest-wrappers/perftest_throughput_qos.toml (read in
rticommunity/rtiperftest 4.3). :func:`evidence` reads a run's agents' stderr into the
manifest's ``agent_qos``, so a report can say which protocol settings produced a result:

- ``publisher`` and ``subscriber``: publisher 0's and subscriber 0's settings;
- ``uniform``: every other publisher (subscriber) printed the same values;
- ``missing``: processes that printed none (real RTI Perftest, ddsperf, or a process that
  failed before its entities existed);
- ``perftest``: Perftest's values for this run (with or without batching, in a multicast
  run or not, as Perftest would run it) and ``differences``: the settings whose values
  differ from them;
- ``asked``: the settings the scenario's protocol factors set ([matrix] multicast_resend,
  receive_buffer), so a difference there is asked for.

``parse`` keeps the last line of a key: an agent that changes a setting during the run
(-scaleDiscovery at the end of discovery) prints it again, and the last value is the one
the measurement ran with.

Example::

    >>> parse("x\\nqos: writer.heartbeat_period = 10 ms (Cyclone HeartbeatInterval)\\n")
    {'writer.heartbeat_period': '10 ms'}
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from experiments.agents import PUBLISHER_BATCHING
from experiments.schema import PROTOCOL_FACTORS
from mcastlab import paths

REFERENCE = paths.REPO_ROOT / "perftest-wrappers" / "perftest_throughput_qos.toml"
_LINE = re.compile(r"^qos: (\S+) = (.*?)(?: \((.*)\))?$", re.M)
# Perftest batches only samples up to half its 8192-byte batch (RTIDDSImpl.cxx).
_BATCH_SIZE = 8192


def parse(stderr: str) -> dict[str, str]:
    """An agent's printed effective QoS: key -> value (the "how" is left in the stderr)."""
    return {m.group(1): m.group(2) for m in _LINE.finditer(stderr)}


def reference(batching: bool, multicast: bool = True) -> dict[str, str]:
    """Perftest's ThroughputQos: key -> value, with batching on or off, in a multicast run
    or not.

    >>> reference(True)["writer.send_window"], reference(False)["writer.send_window"]
    ('50 batches', '50 samples')
    >>> reference(False)["writer.multicast_resend_threshold"]
    '2'
    >>> reference(False, multicast=False)["writer.multicast_resend_threshold"]
    'none'
    """
    table = tomllib.loads(REFERENCE.read_text())["setting"]
    out = {}
    for s in table:
        value = s["perftest"]
        if not batching and "unbatched" in s:
            value = s["unbatched"]
        if not multicast and "unicast" in s:
            value = s["unicast"]
        out[s["key"]] = value
    return out


def perftest_batches(cfg: Mapping[str, Any], batch_size: int = _BATCH_SIZE) -> bool:
    """Whether Perftest would batch a run's Throughput samples given -batchSize
    ``batch_size``: a batch that holds two samples, not a latency test, not paced
    (Perftest's printout: "BatchSize disabled by default when using -pubRate"). The runner
    gives every Perftest publisher -batchSize 0 (experiments/agents.py PUBLISHER_BATCHING).

    >>> perftest_batches({"data_len": 100, "test": "throughput"})
    True
    >>> perftest_batches({"data_len": 100, "test": "throughput"}, 0)
    False
    """
    return (batch_size >= 2 * int(cfg["data_len"]) and cfg.get("test") != "latency"
            and not cfg.get("pub_rate"))


def _runner_batch_size() -> int:
    """-batchSize the runner gives Perftest publishers (experiments/agents.py)."""
    return int(PUBLISHER_BATCHING[PUBLISHER_BATCHING.index("-batchSize") + 1])


def differences(qos: Mapping[str, str], ref: Mapping[str, str],
                keys: Iterable[str]) -> dict[str, dict[str, str | None]]:
    """Settings among ``keys`` whose value differs from Perftest's (None: not printed).

    >>> differences({"a": "1"}, {"a": "2", "b": "3"}, ["a", "b"])
    {'a': {'agent': '1', 'perftest': '2'}, 'b': {'agent': None, 'perftest': '3'}}
    """
    return {k: {"agent": qos.get(k), "perftest": ref[k]} for k in keys
            if qos.get(k) != ref[k]}


def role_keys(ref: Mapping[str, str], role: str) -> list[str]:
    """The reference's keys a role prints: writer.* and transport.* for a publisher,
    reader.* and transport.* for a subscriber."""
    own = "writer." if role == "pub" else "reader."
    return [k for k in ref if k.startswith((own, "transport."))]


def evidence(cfg: Mapping[str, Any], agents_dir: Path,
             names: Iterable[str]) -> dict[str, Any]:
    """The manifest's ``agent_qos`` for the processes ``names`` (pub0, sub3, ...)."""
    batching = perftest_batches(cfg, _runner_batch_size())
    ref = reference(batching, cfg.get("mode") == "multicast")
    got: dict[str, dict[str, str]] = {}
    for n in names:
        f = agents_dir / f"{n}.stderr"
        got[n] = parse(f.read_text(errors="replace")) if f.is_file() else {}
    out: dict[str, Any] = {"reference": str(REFERENCE.relative_to(paths.REPO_ROOT)),
                           "perftest_batching": batching,
                           "missing": sorted(n for n, q in got.items() if not q)}
    uniform = True
    diffs: dict[str, Any] = {}
    for role, label in (("pub", "publisher"), ("sub", "subscriber")):
        mine = {n: q for n, q in got.items() if n.startswith(role) and q}
        if not mine:
            continue
        first = mine.get(f"{role}0") or next(iter(mine.values()))
        out[label] = first
        uniform = uniform and all(q == first for q in mine.values())
        diffs[label] = differences(first, ref, role_keys(ref, role))
    out["uniform"] = uniform
    # The settings the scenario's protocol factors asked to differ (a difference there is
    # the factor, not a deviation of the agent): qos key -> "factor = value".
    out["asked"] = {f.qos_key: f"{f.key} = {cfg[f.key]}" for f in PROTOCOL_FACTORS
                    if cfg.get(f.key)}
    out["perftest"] = ref
    out["differences"] = diffs
    return out
