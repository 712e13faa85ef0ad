"""Scenario files' schema: the TOML tables as pydantic models, the constants their values
are checked against, and :class:`ScenarioError`, whose message names the file, the key and
the allowed values.

Reading a file, and the checks against a topology and this machine, are in
:mod:`experiments.scenario`, above this module and the ones that only need the models
(placement, the matrix, the bounds), so none of them imports the other back.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from experiments.fidelity import Thresholds

MODES = ("unicast", "multicast")
DISCOVERIES = ("spdp-multicast", "unicast-peers")
RELIABILITIES = ("reliable", "best-effort")
TESTS = ("throughput", "latency")
# Host socket fan-out: "kernel" leaves the agents' sockets as the kernel makes them
# (IP_MULTICAST_ALL = 1: a multicast datagram goes to every socket bound to its port once
# any socket of the host joined its group); "joined-only" preloads the shim of
# perftest-wrappers/mcastall (IP_MULTICAST_ALL = 0: a socket gets only the groups it
# joined).
Fanout = Literal["kernel", "joined-only"]
FANOUTS: tuple[str, ...] = get_args(Fanout)
# Same-host pairs: "udp" (every agent gets -transport UDPv4: same-host pairs over UDP
# loopback, or multicast looped back by the kernel) or "shm" (no -transport: Perftest's
# default, UDPv4|SHMEM; same-host pairs take the implementation's shared memory where it
# uses it). Agents without a shared-memory transport cannot run "shm" (SHM_MISSING).
SameHost = Literal["udp", "shm"]
SAME_HOSTS: tuple[str, ...] = get_args(SameHost)
_CYCLONE_NO_SHM = ("Cyclone DDS 0.10.2 (Debian 12's package, the native agent's middleware) is "
                   "built without a shared-memory transport (no iceoryx)")
SHM_MISSING = {
    "native": _CYCLONE_NO_SHM,
    "native-asan": _CYCLONE_NO_SHM,
    "ddsperf": "ddsperf is not Perftest: it has no -transport (and Cyclone DDS 0.10.2 has no "
               "shared-memory transport)",
}
# Heartbeat and acknowledgement timing of the writers in tests of more than 20
# participants, an ablation axis (HEARTBEAT_TIMINGS): "perftest" (Perftest's ThroughputQos
# from the start: heartbeats every 10 ms, 1 ms near a full window, NACKs answered at once,
# 2 MiB / 1 MiB socket buffers), "scaled" (the native agent's -scaleSettings for the whole
# test: heartbeats every 1-3 s, SPDP every 10 s, Cyclone's socket buffers; Cyclone has one
# heartbeat interval for every writer of a participant, discovery's too) or
# "scaled-discovery" (-scaleDiscovery: the scaled timing until every peer has matched,
# Perftest's from then on, so the measurement runs Perftest's protocol). Unset: each
# agent's own ("scaled" for the native agent, Perftest's for the others). Up to 20
# participants all three are Perftest's. Only agents that have -scaleSettings can run
# "scaled" and "scaled-discovery" (SCALED_KINDS).
HeartbeatTiming = Literal["perftest", "scaled", "scaled-discovery"]
HEARTBEAT_TIMINGS: tuple[str, ...] = get_args(HeartbeatTiming)
SCALED_KINDS = ("native", "native-asan")
HEARTBEAT_TIMING_MISSING = {
    "fastdds": "Fast DDS sets heartbeats per writer, so the agent has no -scaleSettings: its "
               "writers run Perftest's timing at every count",
    "fastdds-asan": "Fast DDS sets heartbeats per writer, so the agent has no -scaleSettings: "
                    "its writers run Perftest's timing at every count",
    "rti": "RTI Perftest runs its own QoS profiles (its heartbeats per writer) and has no "
           "-scaleSettings",
}
# Connext's reliability choices the open agents can also make, ablation axes of a campaign
# (each unset by default: each agent's own, and run ids do not name it). PROTOCOL_FACTORS
# lists them; a value an agent kind cannot apply is refused (``missing``).
# - [matrix] multicast_resend: when a repair goes to the group instead of the NACKing
#   reader. "second-nack": once a second reader NACKs the sample (Connext's
#   multicast_resend_threshold 2, Perftest's; Cyclone's default: a reader's repair still
#   queued when another reader's NACK of the sample arrives is sent once, to the group);
#   "first-nack": from the first NACK (threshold 1; the native agent's
#   -multicastResendOnFirstNack, Cyclone RetransmitMerging adaptive). Only multicast runs
#   have a group. No open agent repairs strictly per reader (Cyclone always merges queued
#   repairs), so that Connext choice is not a value.
# - [matrix] receive_buffer: "perftest" (Perftest's 2 MiB UDP receive buffer) or "stock"
#   (a stock kernel's net.core.rmem_max, 212,992 B, which caps what Connext asks for:
#   -receiveBufferSize 212992).
MulticastResend = Literal["second-nack", "first-nack"]
ReceiveBuffer = Literal["perftest", "stock"]
STOCK_RMEM_MAX = 212_992  # net.core.rmem_max of a stock Linux kernel (bytes)
_NOT_PERFTEST = "ddsperf is not Perftest: the protocol factors change Perftest agents only"


@dataclass(frozen=True)
class ProtocolFactor:
    """One reliability choice of Connext's as a campaign axis."""

    key: str  # [matrix] key, config key and runs-table column
    tag: str  # run id part: "<tag>-<value>" when the axis has more than one value
    values: tuple[str, ...]
    qos_key: str  # the effective-QoS line (experiments/agent_qos.py) that reads it back
    option: str  # the agent option that applies it (agent.extra_args may not give it too)
    # (value, agent kind) -> why that agent cannot apply the value
    missing: dict[tuple[str, str], str]

    def why_not(self, value: str, kind: str) -> str | None:
        """Why agent ``kind`` cannot run ``value`` (None: it can; "" runs the agent's own)."""
        if not value:
            return None
        return self.missing.get((value, kind))


_FASTDDS_RESEND = ("Fast DDS 2.9 has no multicast resend setting: the agent cannot say or "
                   "choose when a repair goes to the group")
_RTI_RESEND = ("Connext's multicast_resend_threshold is 2 in Perftest's profiles and Perftest "
               "has no option to change it")
_RTI_BUFFER = ("Perftest on Connext Professional takes its socket buffers from its QoS "
               "profile (2 MiB) and has no -receiveBufferSize (a Connext Micro option)")
MULTICAST_RESEND = ProtocolFactor(
    "multicast_resend", "resend", get_args(MulticastResend),
    "writer.multicast_resend_threshold", "-multicastResendOnFirstNack",
    {**{(v, k): _FASTDDS_RESEND for v in get_args(MulticastResend)
        for k in ("fastdds", "fastdds-asan")},
     **{(v, "ddsperf"): _NOT_PERFTEST for v in get_args(MulticastResend)},
     ("first-nack", "rti"): _RTI_RESEND})
RECEIVE_BUFFER = ProtocolFactor(
    "receive_buffer", "rcvbuf", get_args(ReceiveBuffer), "transport.recv_socket_buffer_size",
    "-receiveBufferSize",
    {("stock", "rti"): _RTI_BUFFER,
     ("stock", "ddsperf"): _NOT_PERFTEST, ("perftest", "ddsperf"): _NOT_PERFTEST})
PROTOCOL_FACTORS: tuple[ProtocolFactor, ...] = (MULTICAST_RESEND, RECEIVE_BUFFER)

AgentKind = Literal["native", "native-asan", "fastdds", "fastdds-asan", "rti", "ddsperf"]
AGENT_KINDS: tuple[str, ...] = get_args(AgentKind)
# Cyclone DDS, Fast DDS and RTI Connext all map participant index i to port
# 7400 + 250*domain + 10 + 2*i (+1): with DomainGain 250 and ParticipantGain 2, indices
# 0..119 fit before the next domain's ports, so at most 120 participants per host.
MAX_PARTICIPANTS_PER_HOST = 120
PERFTEST_MIN_DATA_LEN = 28  # Perftest's -dataLen includes a 28-byte header


class ScenarioError(Exception):
    """A scenario that cannot run; the message names file, key and allowed values."""

    def __init__(self, path: Path | str, key: str, message: str) -> None:
        self.path = str(path)
        self.key = key
        super().__init__(f"{path}: {key}: {message}")


# Every user string that becomes part of a path (campaign, topology variant and placement
# names end up in run ids, which are directory names) follows this one rule: no "/", no
# "..", no leading dot or dash.
PATH_NAME = r"^[A-Za-z0-9][A-Za-z0-9_-]*$"
# Topology variant and placement names both go into every run id (a directory name of at
# most 255 bytes, with the other axes' parts): 48 characters each leave room for them.
MAX_PATH_NAME = 48
PATH_NAME_ALLOWED = (f"letters, digits, - and _, starting with a letter or digit, at most "
                     f"{MAX_PATH_NAME} characters")
# Finite bounds of the numeric keys (beside the per-key checks below).
MAX_EXECUTION_TIME_S = 7 * 24 * 3600  # a week: the study ran 6 h per run
MAX_COUNT = 1000  # publishers or subscribers per run
MAX_VARIANTS = 100  # topology variants, and placements
AGENT_MAX_DATA_LEN = 16 * 1024 * 1024  # the mcastlab agents' -dataLen limit (PT_MAX_DATALEN)


def check_path_name(name: str, what: str) -> str:
    import re
    import reprlib

    if not re.fullmatch(PATH_NAME, name, re.ASCII) or len(name) > MAX_PATH_NAME:
        raise ValueError(f"{what} {reprlib.repr(name)} must be {PATH_NAME_ALLOWED}")
    return name


# Keys that intentionally change nothing a run measures (tests/experiments/test_key_audit.py
# shows every other key changes a run's configuration, command lines, topology, links,
# captures or fidelity verdict; a new key must do one or be listed here with its reason).
NO_MEASURABLE_EFFECT: dict[str, str] = {
    "campaign.description": "free text shown in the campaign index",
    "campaign.retries": ("how often a failed run, one host-bound for steal time alone "
                         "(fidelity.max_steal_share) or a CPU-limited one whose emulation "
                         "was unfaithful is tried again; a run's configuration is the same"),
    "timing.converge_timeout": "how long to wait for convergence before the run fails",
    "timing.run_timeout": "how long agents may run past execution_time before the run fails",
}


class _Strict(BaseModel):
    # allow_inf_nan=False: `inf` and `nan` are refused in every float key.
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, allow_inf_nan=False)


class Campaign(_Strict):
    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$", max_length=100)
    description: str = ""
    retries: int = Field(default=1, ge=0, le=10)


class Topology(_Strict):
    name: str
    params: dict[str, Any] = Field(default_factory=dict)
    # Named parameter overrides, each one a matrix axis (e.g. shared vs source tree).
    # (Each variant is a topology resolved and checked against every placement: bounded.)
    variants: dict[str, dict[str, Any]] = Field(default_factory=dict, max_length=MAX_VARIANTS)

    @field_validator("variants")
    @classmethod
    def _variant_names(cls, v: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        for name in v:
            check_path_name(name, "variant name")
        return v

    def resolved(self) -> dict[str, dict[str, Any]]:
        """{variant name ("" when none): merged parameters}."""
        if not self.variants:
            return {"": dict(self.params)}
        return {n: {**self.params, **over} for n, over in self.variants.items()}


class Agent(_Strict):
    kind: AgentKind = "native"
    domain: int = Field(default=0, ge=0, le=232)
    # Appended to every agent's command line; checked against the agent's option table
    # (experiments/agent_options.py).
    extra_args: list[str] = Field(default_factory=list, max_length=64)
    max_participants_per_host: int = Field(default=MAX_PARTICIPANTS_PER_HOST, ge=1)

    @field_validator("max_participants_per_host")
    @classmethod
    def _within_port_mapping(cls, v: int) -> int:
        if v > MAX_PARTICIPANTS_PER_HOST:
            raise ValueError(
                f"must be at most {MAX_PARTICIPANTS_PER_HOST} (participant indices 0..119 "
                "fit in one domain's port range)"
            )
        return v


def _count_order(key: str) -> tuple[int, ...]:
    return tuple(int(x) for x in key.split("x"))


def _each_in_range(values: list[int], low: int, high: int | None, allowed: str) -> list[int]:
    """Raise naming the first value outside low..high (high None: unbounded)."""
    for n in values:
        if n < low or (high is not None and n > high):
            raise ValueError(f"got {n}; allowed: {allowed}")
    return values


def _check_by_count(name: str, by: dict[str, int], keys: set[str], most: int,
                    unit: str = "") -> None:
    """A per-count table names only counts of the matrix, each once ("3" and "3x3" are the
    same count: one of them would be ignored), each with a value in 1..most."""
    for key, value in by.items():
        if key not in keys:
            raise ValueError(f"{name}: no count {key!r} in the matrix; "
                             f"allowed: {', '.join(sorted(keys, key=_count_order))}")
        if "x" not in key and f"{key}x{key}" in by:
            raise ValueError(f"{name}: {key!r} and '{key}x{key}' both name the count "
                             f"{key}x{key} ({by[key]} and {by[f'{key}x{key}']}); allowed: one "
                             f"key per count, {key!r} or '{key}x{key}'")
        if value < 1 or value > most:
            raise ValueError(f"{name}.{key}: got {value}; allowed: 1..{most}{unit}")


def _by_count(by: dict[str, int], publishers: int, subscribers: int, default: int) -> int:
    """A per-count value keyed "PxS", or "N" when publishers = subscribers = N."""
    key = f"{publishers}x{subscribers}"
    if key in by:
        return by[key]
    if publishers == subscribers and str(publishers) in by:
        return by[str(publishers)]
    return default



def _distinct_choices(v: list[str], allowed: tuple[str, ...] | list[str], how_many: str
                      ) -> list[str]:
    """A matrix axis of named choices: not empty, no value twice (the literal type already
    refused unknown values)."""
    if not v:
        raise ValueError(f"empty list; allowed: {how_many} {', '.join(allowed)}")
    dup = sorted({a for a in v if v.count(a) > 1})
    if dup:
        raise ValueError(f"{', '.join(dup)} listed twice; allowed: each of "
                         f"{', '.join(allowed)} at most once")
    return v

class Matrix(_Strict):
    # Either participants (publishers = subscribers, the study's design) or both lists,
    # paired element by element.
    participants: list[int] | None = None
    publishers: list[int] | None = None
    subscribers: list[int] | None = None
    modes: list[Literal["unicast", "multicast"]] = Field(default_factory=lambda: list(MODES))
    discovery: list[Literal["spdp-multicast", "unicast-peers"]] = Field(
        default_factory=lambda: ["spdp-multicast"]
    )
    reliability: list[Literal["reliable", "best-effort"]] = Field(
        default_factory=lambda: ["reliable"]
    )
    data_len: list[int] = Field(default_factory=lambda: [100])
    latency_count: list[int] = Field(default_factory=lambda: [1000])
    # Another ping interval for some counts, keyed like execution_time_by_count (with one
    # latency_count only): publisher 0 sends 1/N of the samples of N publishers, so at
    # 75x75 "a ping every 1000 samples" gives a few pings per run; a ping every 1000 samples
    # *of the whole test* is latency_count = 1000 / publishers.
    latency_count_by_count: dict[str, int] = Field(default_factory=dict)
    # throughput: Perftest's throughput test (pings every latency_count samples);
    # latency: -latencyTest, round trips one at a time.
    tests: list[Literal["throughput", "latency"]] = Field(default_factory=lambda: ["throughput"])
    # Run length: execution_time seconds, or num_iter samples when execution_time is 0;
    # num_iter may differ per test: {throughput = 1000000, latency = 5000}.
    execution_time: int = Field(default=60, ge=0, le=MAX_EXECUTION_TIME_S)
    # Longer (or shorter) runs for some counts, keyed "N" (publishers = subscribers = N) or
    # "PxS": at 75x75 publisher 0 sends a few thousand samples in 30 s on 2 cores, so with
    # latencyCount 1000 a run needs minutes to give more than a couple of pings.
    execution_time_by_count: dict[str, int] = Field(default_factory=dict)
    num_iter: int | dict[Literal["throughput", "latency"], int] | None = None
    repetitions: int = Field(default=1, ge=1, le=1000)
    # More (or fewer) repetitions for some counts, keyed like execution_time_by_count:
    # verdicts about the modes need >= 2 runs per mode (run-to-run variation), but a count
    # the testbed cannot carry (host-bound) gains nothing from repeating.
    repetitions_by_count: dict[str, int] = Field(default_factory=dict)
    # One-at-a-time designs only: the repetitions of the baseline (every axis at its first
    # value), keyed like repetitions. Every row of the ablation table compares a switch
    # with the same baseline runs, so runs given to the baseline serve every row: with k
    # switches it should get about sqrt(k) times a switch's runs (the usual allocation of
    # a control shared by k comparisons). Default: the same as every other combination.
    baseline_repetitions: int | None = Field(default=None, ge=1, le=1000)
    baseline_repetitions_by_count: dict[str, int] = Field(default_factory=dict)
    # Offered load: samples/s per publisher (Perftest -pubRate), 0 = as fast as the
    # testbed allows (the study's setting). A paced load below the testbed's capacity keeps
    # a run network-bound (see [fidelity]).
    pub_rate: list[int] = Field(default_factory=lambda: [0])
    # Latency samples discarded from the start of latency.parquet (warm-up / primer).
    warmup_samples: int = Field(default=0, ge=0, le=10**9)
    placements: list[str] | None = None
    # DDS implementations compared run by run on identical networks and placements
    # (default: [agent.kind]). With more than one, run ids and groups name the agent.
    agents: list[AgentKind] | None = None
    # Host socket fan-out, an ablation axis (FANOUTS): "kernel" (the default, the study's
    # setting) and/or "joined-only" (the agents run with IP_MULTICAST_ALL = 0).
    fanout: list[Fanout] = Field(default_factory=lambda: ["kernel"])
    # Same-host pairs, an ablation axis (SAME_HOSTS): "udp" (the default) and/or "shm".
    same_host: list[SameHost] = Field(default_factory=lambda: ["udp"])
    # Heartbeat timing in tests of more than 20 participants, an ablation axis
    # (HEARTBEAT_TIMINGS); unset, each agent's own, and run ids do not name it.
    heartbeat_timing: list[HeartbeatTiming] | None = None
    # Connext's reliability choices (PROTOCOL_FACTORS), ablation axes; unset, each agent's
    # own, and run ids do not name them.
    multicast_resend: list[MulticastResend] | None = None
    receive_buffer: list[ReceiveBuffer] | None = None
    # factorial: every combination of the axes' values. one-at-a-time: an ablation design;
    # the first value of each named axis (topology variants, placements, agents, fanout,
    # same_host, heartbeat_timing, multicast_resend, receive_buffer, reliability) is the baseline
    # and a run changes at most one of them, so k axes of two values cost k + 1 groups
    # instead of 2^k (analysis/ablation.py reads it back). "shm" with a baseline agent
    # that has no shared memory is switched on the first agent that has (shm_agent).
    design: Literal["factorial", "one-at-a-time"] = "factorial"

    @field_validator("fanout")
    @classmethod
    def _fanout(cls, v: list[str]) -> list[str]:
        return _distinct_choices(v, FANOUTS, "one or both of")

    @field_validator("same_host")
    @classmethod
    def _same_host(cls, v: list[str]) -> list[str]:
        return _distinct_choices(v, SAME_HOSTS, "one or both of")

    @field_validator("heartbeat_timing")
    @classmethod
    def _heartbeat_timing(cls, v: list[str] | None) -> list[str] | None:
        return None if v is None else _distinct_choices(v, HEARTBEAT_TIMINGS, "one or more of")

    @field_validator("multicast_resend")
    @classmethod
    def _multicast_resend(cls, v: list[str] | None) -> list[str] | None:
        return None if v is None else _distinct_choices(v, MULTICAST_RESEND.values,
                                                        "one or both of")

    @field_validator("receive_buffer")
    @classmethod
    def _receive_buffer(cls, v: list[str] | None) -> list[str] | None:
        return None if v is None else _distinct_choices(v, RECEIVE_BUFFER.values,
                                                        "one or both of")

    def protocol_values(self, factor: ProtocolFactor) -> list[str]:
        """A protocol factor's values ([""]: not given, each agent's own)."""
        return list(getattr(self, factor.key) or [""])

    @field_validator("agents")
    @classmethod
    def _agents(cls, v: list[str] | None) -> list[str] | None:
        return None if v is None else _distinct_choices(v, AGENT_KINDS, "one or more of")

    @field_validator("participants", "modes", "discovery", "reliability", "data_len",
                     "latency_count", "tests", "pub_rate", "placements")
    @classmethod
    def _no_value_twice(cls, v: list[Any] | None) -> list[Any] | None:
        """An axis value listed twice would be the same runs twice (one run id)."""
        from collections import Counter

        dup = sorted(str(a) for a, n in Counter(v or []).items() if n > 1)
        if dup:
            raise ValueError(f"{', '.join(dup)} listed twice; allowed: each value at most once")
        return v

    @field_validator("participants", "publishers", "subscribers")
    @classmethod
    def _positive_counts(cls, v: list[int] | None) -> list[int] | None:
        if v is not None:
            if not v:
                raise ValueError("empty list; allowed: at least one count")
            _each_in_range(v, 1, MAX_COUNT, f"counts of 1..{MAX_COUNT}")
        return v

    @field_validator("data_len")
    @classmethod
    def _data_len(cls, v: list[int]) -> list[int]:
        return _each_in_range(v, 4, 2**27, "data lengths of 4..134217728 bytes")

    @field_validator("pub_rate")
    @classmethod
    def _pub_rate(cls, v: list[int]) -> list[int]:
        if not v:
            raise ValueError("empty list; allowed: at least one rate")
        return _each_in_range(v, 0, 10_000_000, "0 (unpaced) or 1..10000000 samples/s")

    @field_validator("latency_count")
    @classmethod
    def _latency_count(cls, v: list[int]) -> list[int]:
        return _each_in_range(v, 1, 10**9, "latency counts of 1..1000000000")

    @field_validator("num_iter")
    @classmethod
    def _num_iter(cls, v: int | dict[str, int] | None) -> int | dict[str, int] | None:
        for n in [v] if isinstance(v, int) else (v or {}).values():
            if n < 1 or n > 10**12:
                raise ValueError(f"got {n}; allowed: 1..1000000000000 samples")
        return v

    def iterations(self, test: str) -> int | None:
        if isinstance(self.num_iter, dict):
            return self.num_iter.get(test)  # type: ignore[call-overload]
        return self.num_iter

    @field_validator("modes", "discovery", "reliability", "data_len", "latency_count", "tests")
    @classmethod
    def _nonempty(cls, v: list[Any]) -> list[Any]:
        if not v:
            raise ValueError("empty list; allowed: at least one value")
        return v

    @model_validator(mode="after")
    def _counts(self) -> Matrix:
        if self.participants is not None:
            if self.publishers is not None or self.subscribers is not None:
                raise ValueError("give either participants or publishers+subscribers, not both")
        elif self.publishers is None or self.subscribers is None:
            raise ValueError("give participants, or both publishers and subscribers")
        elif len(self.publishers) != len(self.subscribers):
            raise ValueError("publishers and subscribers must have the same length (paired)")
        pairs = self.count_pairs()
        from collections import Counter

        twice = sorted(f"{p}x{q}" for (p, q), n in Counter(pairs).items() if n > 1)
        if twice:
            raise ValueError(f"publishers/subscribers: the pair {', '.join(twice)} is listed "
                             "twice; allowed: each pair at most once")
        keys = {f"{p}x{q}" for p, q in pairs} | {str(p) for p, q in pairs if p == q}
        _check_by_count("execution_time_by_count", self.execution_time_by_count, keys,
                        MAX_EXECUTION_TIME_S, " seconds")
        if self.latency_count_by_count and len(self.latency_count) > 1:
            raise ValueError("latency_count_by_count needs a single latency_count (it "
                             f"replaces it for some counts); got latency_count = "
                             f"{self.latency_count}")
        _check_by_count("latency_count_by_count", self.latency_count_by_count, keys, 10**9)
        _check_by_count("repetitions_by_count", self.repetitions_by_count, keys, 1000)
        if ((self.baseline_repetitions is not None or self.baseline_repetitions_by_count)
                and self.design != "one-at-a-time"):
            raise ValueError('baseline_repetitions: only with design = "one-at-a-time" (a '
                             'factorial design has no single baseline); got design = '
                             f'{self.design!r}')
        _check_by_count("baseline_repetitions_by_count", self.baseline_repetitions_by_count,
                        keys, 1000)
        if self.execution_time == 0:
            for t in self.tests:
                if self.iterations(t) is None:
                    raise ValueError(f"execution_time 0 needs num_iter for test {t!r}")
        return self

    def execution_time_of(self, publishers: int, subscribers: int) -> int:
        """The run length of one count pair (execution_time_by_count, else execution_time)."""
        return _by_count(self.execution_time_by_count, publishers, subscribers,
                         self.execution_time)

    def latency_count_of(self, publishers: int, subscribers: int, default: int) -> int:
        """The ping interval of one count pair (latency_count_by_count, else ``default``)."""
        return _by_count(self.latency_count_by_count, publishers, subscribers, default)

    def repetitions_of(self, publishers: int, subscribers: int) -> int:
        """Repetitions of one count pair (repetitions_by_count, else repetitions)."""
        return _by_count(self.repetitions_by_count, publishers, subscribers, self.repetitions)

    def baseline_repetitions_of(self, publishers: int, subscribers: int) -> int:
        """Repetitions of the baseline at one count pair (baseline_repetitions_by_count,
        else baseline_repetitions, else :meth:`repetitions_of`)."""
        default = self.baseline_repetitions or self.repetitions_of(publishers, subscribers)
        return _by_count(self.baseline_repetitions_by_count, publishers, subscribers, default)

    def count_pairs(self) -> list[tuple[int, int]]:
        if self.participants is not None:
            return [(n, n) for n in self.participants]
        assert self.publishers is not None and self.subscribers is not None
        return list(zip(self.publishers, self.subscribers, strict=True))


class Placement(_Strict):
    # round-robin: processes spread evenly over `hosts` (default: every host of the
    # topology), publishers first then subscribers, as the study did.
    # explicit: pub i runs on publishers[i % len], sub j on subscribers[j % len].
    strategy: Literal["round-robin", "explicit"] = "round-robin"
    hosts: list[str] | None = None
    publishers: list[str] | None = None
    subscribers: list[str] | None = None

    @model_validator(mode="after")
    def _lists(self) -> Placement:
        if self.strategy == "explicit":
            if not self.publishers or not self.subscribers:
                raise ValueError("strategy 'explicit' needs non-empty publishers and subscribers")
            if self.hosts is not None:
                raise ValueError("strategy 'explicit' takes publishers/subscribers, not hosts")
        else:
            if self.publishers is not None or self.subscribers is not None:
                raise ValueError("strategy 'round-robin' takes hosts, not publishers/subscribers")
            if self.hosts is not None and not self.hosts:
                raise ValueError("hosts must list at least one host")
        return self

    def all_hosts(self) -> list[str]:
        return [*(self.hosts or []), *(self.publishers or []), *(self.subscribers or [])]


class Timing(_Strict):
    warmup: float = Field(default=0.0, ge=0, le=3600)  # seconds between convergence and agents
    converge_timeout: float = Field(default=60.0, gt=0, le=3600)
    # Seconds a run may take beyond its execution time (discovery, summaries, exit).
    run_timeout: float = Field(default=120.0, gt=0, le=86400)


class Capture(_Strict):
    points: list[str] = Field(default_factory=list)
    snaplen: int = Field(default=65535, ge=64, le=262144)
    ring_files: int = Field(default=2, ge=1, le=1000)
    ring_mb: int = Field(default=64, ge=1, le=100_000)
    # Capture windows inside the measurement window (captures/windows.py): each window_s
    # long, the first window_settle_s after full discovery, then one every window_every_s
    # (0: one window). window_s = 0: one capture over the whole run (the ring above).
    # Unset, they fit every run (windows.fitted; for_run gives a run's values).
    window_s: float = Field(default=5.0, ge=0, le=86400)
    window_settle_s: float = Field(default=5.0, ge=0, le=3600)
    window_every_s: float = Field(default=0.0, ge=0, le=86400)

    @model_validator(mode="after")
    def _windows_apart(self) -> Capture:
        if self.window_every_s and self.window_every_s < self.window_s:
            raise ValueError(f"window_every_s {self.window_every_s:g} is shorter than window_s "
                             f"{self.window_s:g}; allowed: 0 (one window) or at least window_s")
        return self

    def for_run(self, execution_time: float) -> dict[str, Any]:
        """This table as a run of ``execution_time`` seconds (0: ``num_iter``) uses it:
        window keys the scenario left unset fitted to the run (captures/windows.py
        ``fitted``: a shorter settle, or no window at all), explicit ones as given. The
        run's config.json records these values; runs the defaults fit are unchanged.

        >>> Capture(points=["h1-eth0"]).for_run(4)["window_settle_s"]
        2.0
        """
        from captures.windows import fitted

        d = self.model_dump()
        d["window_s"], d["window_settle_s"] = fitted(
            float(execution_time or 0), self.window_s, self.window_settle_s,
            frozenset(self.model_fields_set))
        return d


class Cluster(_Strict):
    """``[cluster]``: the servers the emulated network spans (topologies/cluster.py).
    Checked further (localhost first, root, files exist) by ClusterConfig.from_section."""

    servers: list[str] = Field(min_length=2, max_length=8)
    identity: str | None = None
    known_hosts: str | None = None
    port: int = Field(default=22, ge=1, le=65535)
    place: dict[str, int] = Field(default_factory=dict)  # node -> server number
    allow_unverified_revision: bool = False  # run on unverified code (cluster.code_problems)

    def config(self, path: Path | str) -> Any:
        from topologies.cluster import ClusterConfig

        return ClusterConfig.from_section(self.model_dump(exclude_none=True), str(path))

    def result_relevant(self) -> dict[str, Any]:
        """What decides where nodes ran: the servers and the explicit placement."""
        return {"servers": list(self.servers), **({"place": self.place} if self.place else {})}


class Fidelity(Thresholds):
    """``[fidelity]``: thresholds beyond which a run is host-bound (experiments/fidelity.py)."""


class Scenario(_Strict):
    campaign: Campaign
    topology: Topology
    agent: Agent = Field(default_factory=Agent)
    matrix: Matrix
    placement: Placement = Field(default_factory=Placement)
    placements: dict[str, Placement] | None = Field(default=None, max_length=MAX_VARIANTS)
    timing: Timing = Field(default_factory=Timing)
    capture: Capture = Field(default_factory=Capture)
    fidelity: Fidelity = Field(default_factory=Fidelity)
    resources: bool = True  # sample CPU and RSS of every agent process
    cluster: Cluster | None = None  # several servers; absent: this machine
    # `mcastlab run --quick`: overrides merged into the tables above (a short variant of
    # the campaign, used by tests); the campaign name gets a "-quick" suffix.
    quick: dict[str, dict[str, Any]] = Field(default_factory=dict)

    def agent_kinds(self) -> list[str]:
        """The implementations of the campaign: ``matrix.agents``, else ``[agent.kind]``."""
        return list(self.matrix.agents) if self.matrix.agents else [self.agent.kind]

    @field_validator("placements")
    @classmethod
    def _placement_names(cls, v: dict[str, Placement] | None) -> dict[str, Placement] | None:
        for name in v or {}:
            check_path_name(name, "placement name")
        return v


def shm_agent(sc: Scenario) -> str | None:
    """The implementation a one-at-a-time design switches ``same_host`` on: the baseline
    agent if it has shared memory, else the first of ``matrix.agents`` that has (the switch
    then changes the implementation too, and the ablation pairs it with that
    implementation's "udp" runs). None when no agent of the campaign has shared memory."""
    return next((k for k in sc.agent_kinds() if k not in SHM_MISSING), None)


