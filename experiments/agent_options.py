"""RTI Perftest 4.3's option table and role rules, the single source for the agents' command lines.

Written from ``srcCppCommon/ParameterManager.cxx`` of ``rticommunity/rtiperftest`` release
4.3 (read, not copied): every option's ParameterManager key, its group (publisher-only,
subscriber-only or both roles), whether it takes a value, its type and range, and whether
Connext Professional supports it. Three users:

- ``experiments/agents.py`` builds each process's command line and gives role-specific
  options only to their role (:func:`role_of`);
- the scenario check refuses ``[agent] extra_args`` that cannot go to every process
  (:func:`check_extra_args`), or whose value the agent would refuse: real Perftest's rules
  for ``rti``; for the native and Fast DDS agents the rules of their shared parser,
  perftest-wrappers/native/options.c (``Opt.nat``: whole-value ``strtoll``/``strtod`` and
  its ranges, :func:`native_value_error`), so a value that would make every agent exit 2
  after the network is built is refused before;
- tests run Perftest's own parse and role rules over every command line the runner can
  build (:func:`perftest_errors`).

Perftest's rules, as its parser applies them (``ParameterManager::parse``,
``check_incompatible_parameters``, ``perftest_cpp::validate_input``):

- an argument names the first option, in ParameterManager *key* order, of which it is a
  case-insensitive prefix (``-batch`` is ``-batchSize``; ``-b`` is too, key ``batchSize``
  sorting before ``bestEffort``);
- a value may not start with ``-`` (the option is then "missing" its value);
- an option of the publisher group given with ``-sub`` (or of the subscriber group with
  ``-pub``) is a hard error, ``Cannot use '-numPublishers' while setting '-pub'.``;
- ``-latencyTest`` only on publisher 0; ``-numIter`` must not be below ``-latencyCount``
  (default 10000, 1 with ``-latencyTest``).

Example::

    >>> check_extra_args(["-bestEffort"]) is None
    True
    >>> check_extra_args(["-latencyFile", "/etc/passwd"]).split(";")[0]
    'option -latencyFile is a publisher-only option, set by the runner (inside the run directory)'
    >>> role_of("-numpublishers"), role_of("-dataLen")
    ('sub', 'both')
    >>> perftest_errors(["-pub", "-numPublishers", "3"])
    ["Cannot use '-numPublishers' while setting '-pub'."]
    >>> peer_descriptor("10.0.0.2", 38)
    '37@10.0.0.2'
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Role = Literal["pub", "sub", "both"]
NativeRule = tuple[Literal["int", "num"], float, float]
# flag: no value; int: one integer; str: one string; strs: a string, repeatable (-peer);
# pair: N:method (-pubRate); ints: start:end (-cft); optint: an optional integer (-unbounded)
Kind = Literal["flag", "int", "str", "strs", "pair", "ints", "optint"]

INT_MAX = 2**31 - 1
LONG_MAX = LLONG_MAX = 2**63 - 1
ULLONG_MAX = 2**64 - 1
OVERHEAD_BYTES = 28  # perftest_cpp::OVERHEAD_BYTES: the minimum -dataLen
MAX_PERFTEST_SAMPLE_SIZE = 2147482620  # srcIdl/perftest.idl
MAX_BOUNDED_SEQ_SIZE = 65470
MAX_CFT_VALUE = 65535
NATIVE_MAX_DATALEN = 16 * 1024 * 1024  # perftest-wrappers/native/options.h PT_MAX_DATALEN

RUNNER = "set by the runner"


@dataclass(frozen=True)
class Opt:
    """One Perftest option (or an mcastlab extension of the native agent)."""

    name: str  # as Perftest prints it: -dataLen
    key: str  # ParameterManager key ("" for extensions): the order options are matched in
    role: Role
    kind: Kind
    lo: int | None = None
    hi: int | None = None
    choices: tuple[str, ...] = ()
    pro: bool = True  # Connext Professional supports it (else Perftest refuses it there)
    native: bool = False  # the native agent (perftest-wrappers/native/options.c) accepts it
    # Why [agent] extra_args may not carry it (None: allowed when the agent accepts it).
    refuse: str | None = None
    # The native agent's own rule for the value (options.c: to_int, to_dbl): (kind, lo, hi),
    # kind "int" (strtoll, the whole value) or "num" (strtod, the whole value); None where
    # it takes the value as text or parses it itself.
    nat: NativeRule | None = None
    # The Cyclone DDS agent only: the Fast DDS agent parses it (shared options.c) and refuses
    # it at start.
    cyclone_only: bool = False

    @property
    def takes_value(self) -> bool:
        return self.kind != "flag"


def _o(name: str, role: Role, kind: Kind, lo: int | None = None, hi: int | None = None, *,
       key: str = "", choices: tuple[str, ...] = (), pro: bool = True, native: bool = False,
       refuse: str | None = None, nat: NativeRule | None = None) -> Opt:
    return Opt(name, key or name[1:], role, kind, lo, hi, choices, pro, native, refuse, nat)


_PUB_RUNNER = f"a publisher-only option, {RUNNER}"
_SUB_RUNNER = f"a subscriber-only option, {RUNNER}"

# ParameterManager.cxx 4.3, in its order; the SECURE group (only in secure builds), the
# raw-transport group and Micro/TSS/CERT-only options are left out.
PERFTEST: tuple[Opt, ...] = (
    # ---- GENERAL: both roles
    _o("-bestEffort", "both", "flag", native=True),
    _o("-dataLen", "both", "int", OVERHEAD_BYTES, MAX_PERFTEST_SAMPLE_SIZE, native=True,
       refuse=f"{RUNNER} (matrix.data_len)", nat=("int", OVERHEAD_BYTES, NATIVE_MAX_DATALEN)),
    _o("-verbosity", "both", "int", 0, 3),
    _o("-dynamicData", "both", "flag"),
    _o("-durability", "both", "int", 0, 3),
    _o("-domain", "both", "int", 0, 250, native=True, refuse=f"{RUNNER} (agent.domain)",
       nat=("int", 0, 232)),
    _o("-instances", "both", "int", 1, LONG_MAX, native=True, nat=("int", 1, 100_000_000)),
    _o("-instanceHashBuckets", "both", "int", 1, 1000000),
    _o("-keyed", "both", "flag", native=True),
    _o("-noDirectCommunication", "both", "flag"),
    _o("-noPositiveAcks", "both", "flag"),
    _o("-keepDurationUsec", "both", "int", 1, 365 * 24 * 3600 * 10**6),
    _o("-noPrintIntervals", "both", "flag", native=True),
    _o("-qosFile", "both", "str"),
    _o("-qosLibrary", "both", "str"),
    _o("-noXmlQos", "both", "flag"),
    _o("-useReadThread", "both", "flag"),
    _o("-waitsetDelayUsec", "both", "int", 0, 10000000),
    _o("-waitsetEventCount", "both", "int", 1, LONG_MAX),
    _o("-asynchronous", "both", "flag"),
    _o("-messageSizeMax", "both", "int", 0, MAX_PERFTEST_SAMPLE_SIZE),
    _o("-flowController", "both", "str", choices=("default", "1Gbps", "10Gbps")),
    _o("-cpu", "both", "flag", native=True),
    _o("-unbounded", "both", "optint", OVERHEAD_BYTES, MAX_BOUNDED_SEQ_SIZE),
    _o("-threadPriorities", "both", "str"),
    _o("-threadCPUAffinity", "both", "str"),
    _o("-outputFormat", "both", "str", choices=("legacy", "json", "csv"), native=True,
       refuse=f"{RUNNER} (csv, parsed into the tables)"),
    _o("-noOutputHeaders", "both", "flag",
       refuse="not for campaigns (the output parser reads the headers)"),
    _o("-flatData", "both", "flag", key="flatdata"),
    _o("-zeroCopy", "both", "flag", key="zerocopy"),
    _o("-checkConsistency", "both", "flag", key="checkconsistency"),
    _o("-networkCapture", "both", "flag"),
    _o("-doNotDropNetworkCapture", "both", "flag"),
    _o("-outputFile", "both", "str",
       refuse=f"{RUNNER} (the output is read from each agent's stdout)"),
    _o("-crc", "both", "flag"),
    _o("-crcKind", "both", "str"),
    _o("-preallocateFragmentedSamples", "both", "flag"),
    _o("-sendQueueSize", "both", "int", 1, INT_MAX, native=True, nat=("int", 1, 100_000_000)),
    _o("-receiveQueueSize", "both", "int", 1, INT_MAX),
    _o("-receiveBufferSize", "both", "int", 1, INT_MAX, pro=False, native=True,
       nat=("int", 1024, 1 << 30)),
    _o("-sendBufferSize", "both", "int", 1, INT_MAX, pro=False),
    _o("-showResourceLimits", "both", "flag"),
    _o("-cacheStats", "both", "flag"),
    _o("-compressionId", "both", "str", choices=("ZLIB", "LZ4", "BZIP2", "MASK_NONE")),
    _o("-compressionLevel", "both", "int", 0, 10),
    _o("-compressionThreshold", "both", "int", 0, LONG_MAX),
    _o("-enableInstanceStateRecovery", "both", "flag"),
    _o("-enableMonitoring2", "both", "flag"),
    _o("-collectorPeer", "both", "strs"),
    _o("-fastQueue", "both", "flag"),
    # ---- PUB: publisher only
    _o("-batchSize", "pub", "int", 0, MAX_PERFTEST_SAMPLE_SIZE - 1, native=True,
       nat=("int", 0, 64 * 1024 * 1024)),
    _o("-enableAutoThrottle", "pub", "flag"),
    _o("-enableTurboMode", "pub", "flag"),
    _o("-pub", "pub", "flag", native=True, refuse=RUNNER),
    _o("-latencyCount", "pub", "int", 1, ULLONG_MAX, native=True,
       refuse=f"{_PUB_RUNNER} (matrix.latency_count)", nat=("int", 1, LLONG_MAX)),
    _o("-executionTime", "pub", "int", 1, ULLONG_MAX, native=True,
       refuse=f"{_PUB_RUNNER} (matrix.execution_time)", nat=("num", 0.001, 1e9)),
    _o("-initialBurstSize", "pub", "int", 0, LONG_MAX),
    _o("-latencyTest", "pub", "flag", native=True, refuse=f"{_PUB_RUNNER} (matrix.tests)"),
    _o("-numIter", "pub", "int", 1, ULLONG_MAX, native=True,
       refuse=f"{_PUB_RUNNER} (matrix.num_iter)", nat=("int", 1, LLONG_MAX)),
    _o("-numSubscribers", "pub", "int", 1, INT_MAX, native=True, refuse=_PUB_RUNNER,
       nat=("int", 1, 100_000)),
    _o("-pidMultiPubTest", "pub", "int", 0, INT_MAX, native=True, refuse=_PUB_RUNNER,
       nat=("int", 0, 100_000)),
    _o("-pubRate", "pub", "pair", 1, 10000000, choices=("sleep", "spin"), native=True,
       refuse=f"{_PUB_RUNNER} (matrix.pub_rate)"),
    _o("-latencyFile", "pub", "str", native=True,
       refuse=f"{_PUB_RUNNER} (inside the run directory)"),
    _o("-pubRatebps", "pub", "pair", 1, LONG_MAX, choices=("sleep", "spin")),
    _o("-sleep", "pub", "int", 1, ULLONG_MAX),
    _o("-spin", "pub", "int", 1, ULLONG_MAX),
    _o("-writerStats", "pub", "flag"),
    _o("-lowResolutionClock", "pub", "flag"),
    _o("-writeInstance", "pub", "int", 0, LONG_MAX),
    _o("-showSerializationTime", "pub", "flag", key="serializationTime"),
    _o("-loadDataFromFile", "pub", "str"),
    _o("-maximumAllocableBufferSize", "pub", "int", 1, ULLONG_MAX),
    # ---- SUB: subscriber only
    _o("-sub", "sub", "flag", native=True, refuse=RUNNER),
    _o("-sidMultiSubTest", "sub", "int", 0, INT_MAX, native=True, refuse=_SUB_RUNNER,
       nat=("int", 0, 100_000)),
    _o("-numPublishers", "sub", "int", 1, INT_MAX, native=True, refuse=_SUB_RUNNER,
       nat=("int", 1, 100_000)),
    _o("-cft", "sub", "ints", 0, MAX_CFT_VALUE - 1),
    # ---- TRANSPORT: both roles
    _o("-nic", "both", "str", native=True, refuse=f"{RUNNER} (each host's address)"),
    _o("-allowInterfaces", "both", "str", native=True,
       refuse=f"{RUNNER} (each host's address)"),
    _o("-peer", "both", "strs", native=True, refuse=f"{RUNNER} (matrix.discovery)"),
    _o("-transport", "both", "str", native=True,
       choices=("UDPv4", "SHMEM", "UDPv6", "TCP", "TLS", "DTLS", "WAN", "UDPv4_WAN"),
       refuse=f"{RUNNER} (matrix.same_host: 'udp' gives -transport UDPv4, 'shm' none, "
              "Perftest's default UDPv4|SHMEM)"),
    _o("-multicast", "both", "flag", native=True, refuse=f"{RUNNER} (matrix.modes)"),
    _o("-multicastAddr", "both", "str", native=True,
       refuse=f"{RUNNER} (Perftest's default groups)"),
    _o("-transportVerbosity", "both", "str"),
    _o("-transportServerBindPort", "both", "str"),
    _o("-transportWan", "both", "flag"),
    _o("-transportPublicAddress", "both", "str"),
    _o("-transportHostPort", "both", "str"),
    _o("-transportWanServerAddress", "both", "str"),
    _o("-transportWanServerPort", "both", "str"),
    _o("-transportWanId", "both", "str"),
    _o("-transportSecureWan", "both", "flag"),
    _o("-transportCertAuthority", "both", "str"),
    _o("-transportCertFile", "both", "str"),
    _o("-transportPrivateKey", "both", "str"),
)

# mcastlab extensions of the native agent (not Perftest's: real Perftest refuses them).
EXTENSIONS: tuple[Opt, ...] = (
    Opt("-discoveryTimeout", "", "both", "str", native=True, nat=("num", 0.1, 1e6)),
    Opt("-finishTimeout", "", "both", "str", native=True, nat=("num", 0.1, 1e6)),
    Opt("-leaseDuration", "", "both", "str", native=True, nat=("num", 1, 1e6)),
    Opt("-spdpInterval", "", "both", "str", native=True, nat=("num", 0.1, 1e6)),
    Opt("-noPrintConfig", "", "both", "flag", native=True),
    Opt("-totalParticipants", "", "both", "int", 2, 200_000, native=True,
        nat=("int", 2, 200_000)),
    Opt("-scaleSettings", "", "both", "flag", native=True),
    Opt("-scaleDiscovery", "", "both", "flag", native=True, cyclone_only=True),
    Opt("-multicastResendOnFirstNack", "", "both", "flag", native=True, cyclone_only=True),
    Opt("-maxParticipantIndex", "", "both", "int", 0, 120, native=True,
        refuse=f"{RUNNER} (from the placement)", nat=("int", 0, 120)),
)

# What the native agent still needs outside Perftest's roles: its publishers check
# -pidMultiPubTest < -numPublishers and its subscribers -sidMultiSubTest < -numSubscribers,
# and both tell a large test (DDS teardown skipped at exit, -scaleSettings) by
# numPublishers + numSubscribers (options.c, ddsconfig.c). The Fast DDS
# agent shares options.c. The runner gives these two to those agents only; real Perftest
# would refuse them.
NATIVE_CROSS_ROLE: dict[Role, frozenset[str]] = {
    "pub": frozenset({"-numPublishers"}),
    "sub": frozenset({"-numSubscribers"}),
    "both": frozenset(),
}

_BY_NAME: dict[str, Opt] = {o.name.lower(): o for o in (*PERFTEST, *EXTENSIONS)}
# Perftest keeps its parameters in a std::map: matched in byte order of their keys.
_MATCH_ORDER: tuple[Opt, ...] = tuple(sorted(PERFTEST, key=lambda o: o.key))


def option(name: str) -> Opt | None:
    """The option called ``name`` (case-insensitive, full name), or None."""
    return _BY_NAME.get(name.lower())


def resolve(arg: str) -> Opt | None:
    """The Perftest option ``arg`` selects: the first, in key order, it is a case-insensitive
    prefix of (``IS_OPTION`` in ParameterManager.h). ``resolve("-batch").name == "-batchSize"``."""
    low = arg.lower()
    for o in _MATCH_ORDER:
        if o.name.lower().startswith(low):
            return o
    return None


def shortest_prefix(name: str) -> str:
    """The shortest argument that Perftest reads as option ``name`` (its longer prefixes do too).

    >>> shortest_prefix("-transport"), shortest_prefix("-batchSize")
    ('-tr', '-b')
    """
    for n in range(2, len(name) + 1):
        got = resolve(name[:n])
        if got is not None and got.name == name:
            return name[:n]
    raise ValueError(f"{name} is never selected by Perftest's matching")


def role_of(name: str) -> Role:
    """``pub``, ``sub`` or ``both`` for an option name (case-insensitive)."""
    o = option(name)
    if o is None:
        raise KeyError(name)
    return o.role


def peer_descriptor(address: str, participants: int) -> str:
    """Connext's ``-peer`` for a host running ``participants`` participants.

    Without ``N@`` Connext contacts participant ids 0-4 at an address; ``N@addr`` makes it
    0..N (Connext manual, "Peer Descriptor Format"), so a host with more than 5 needs it.
    """
    if participants <= 5:
        return address
    return f"{participants - 1}@{address}"


# ---- Perftest's parser, run over a command line ---------------------------------------

_INT_RE = re.compile(r"\s*([+-]?\d+)")


def _int(text: str) -> int | None:
    m = _INT_RE.match(text)  # sscanf("%llu"/"%ld"/"%d"): a leading integer
    return int(m.group(1)) if m else None


def _value_errors(o: Opt, value: str, *, native: bool = False) -> list[str]:
    """Perftest's messages for a bad value of ``o`` (ParameterBase::validate_*).

    ``native``: the native agent also takes ``-pubRate N`` (spin), Perftest 4.3 does not."""
    errs: list[str] = []
    if o.kind in ("int", "optint", "ints", "pair"):
        parts = value.split(":") if o.kind in ("ints", "pair") else [value]
        parts = [p for p in parts if p]
        if o.kind == "pair" and native and len(parts) == 1:
            parts.append("spin")
        if o.kind == "pair" and len(parts) != 2:
            return [f"Missing argument after '{o.name}'"]
        nums = parts[:1] if o.kind == "pair" else parts
        for p in nums:
            n = _int(p)
            if n is None:
                errs.append(f"Cannot parse '{o.name}' '{value}', invalid input.")
            elif o.lo is not None and o.hi is not None and not o.lo <= n <= o.hi:
                errs.append(f"In the argument '{o.name}', the value should be in the range "
                            f"[{o.lo},{o.hi}]")
        if o.kind == "pair" and parts[1] not in o.choices:
            errs.append(f"In the argument '{o.name}', incorrect value: {parts[1]}")
    elif o.choices and value not in o.choices:
        errs.append(f"In the argument '{o.name}', incorrect value: {value}")
    return errs


# strtoll(v, &end, 10) / strtod(v, &end) with *end == '\0': C's white space, a sign, ASCII
# digits (strtod: also a decimal point, an exponent, or a hexadecimal number; inf and nan
# are outside every range below, so they need not be matched).
_C_INT = re.compile(r"[ \t\n\v\f\r]*[+-]?[0-9]+", re.ASCII)
_C_DEC = re.compile(r"[ \t\n\v\f\r]*[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?",
                    re.ASCII)
_C_HEX = re.compile(r"[ \t\n\v\f\r]*([+-]?0[xX]([0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)"
                    r"([pP][+-]?[0-9]+)?)", re.ASCII)


def native_value_error(o: Opt, value: str) -> str | None:
    """The native agent's complaint about ``value`` for option ``o`` (the rule of its
    options.c, which the Fast DDS agent shares), or None when it takes it.

    >>> native_value_error(option("-sendQueueSize"), "5x")
    "invalid value '5x' for -sendQueueSize: must be an integer from 1 to 100000000"
    >>> native_value_error(option("-leaseDuration"), "0") is not None
    True
    """
    if o.nat is None:
        return None
    kind, lo, hi = o.nat
    x: float | None = None
    if kind == "int" and _C_INT.fullmatch(value):
        n = int(value.strip(" \t\n\v\f\r"))
        x = n if -LLONG_MAX - 1 <= n <= LLONG_MAX else None  # else ERANGE
    elif kind == "num" and _C_DEC.fullmatch(value):
        x = float(value)
    elif kind == "num" and (m := _C_HEX.fullmatch(value)):
        x = float.fromhex(m.group(1))
    if x is None or not lo <= x <= hi:  # inf (ERANGE) and nan fail too
        return f"invalid value '{value}' for {o.name}: must be {native_allowed(o)}"
    return None


def native_allowed(o: Opt) -> str:
    """The values the native agent takes for ``o``, as its message says them."""
    assert o.nat is not None
    kind, lo, hi = o.nat
    if kind == "int":
        return f"an integer from {int(lo)} to {int(hi)}"
    return f"a number from {lo:g} to {hi:g}"


def perftest_errors(args: list[str], *, native: bool = False) -> list[str]:
    """Perftest 4.3's complaints about a command line (``args`` without argv[0]); [] if none.

    ``native``: check it as the native agent's line instead: mcastlab's extensions are
    accepted, names match exactly (case-insensitive), and the options of
    :data:`NATIVE_CROSS_ROLE` may go to the other role.
    """
    errs: list[str] = []
    given: dict[str, list[str]] = {}
    i = 0
    while i < len(args):
        a = args[i]
        o = option(a) if native else resolve(a)
        if o is None or (not native and not o.pro) or (native and not o.native):
            errs.append(f"Cannot parse '{a}', invalid input.")
            i += 1
            continue
        value = ""
        if o.takes_value:
            missing = i + 1 >= len(args) or args[i + 1].startswith("-")
            if missing and o.kind != "optint":
                return [*errs, f"Missing argument after '{o.name}'"]
            if not missing:
                i += 1
                value = args[i]
                errs += _value_errors(o, value, native=native)
                if native and (why := native_value_error(o, value)):
                    errs.append(why)
        given.setdefault(o.name, []).append(value)
        i += 1
    pub, sub = "-pub" in given, "-sub" in given
    for name in given:
        o = _BY_NAME[name.lower()]
        if o.role == "pub" and sub and not (native and name in NATIVE_CROSS_ROLE["sub"]):
            errs.append(f"Cannot use '{name}' while setting '-sub'.")
        elif o.role == "sub" and pub and not (native and name in NATIVE_CROSS_ROLE["pub"]):
            errs.append(f"Cannot use '{name}' while setting '-pub'.")
    if errs:
        return errs

    def last_int(name: str, default: int) -> int:
        n = _int(given[name][-1]) if name in given else None
        return default if n is None else n

    latency_test = "-latencyTest" in given
    if latency_test and last_int("-pidMultiPubTest", 0) != 0:
        errs.append("Only the publisher with ID = 0 can run the latency test")
    latency_count = last_int("-latencyCount", 1 if latency_test else 10000)
    num_iter = last_int("-numIter", 10**7 if latency_test else 10**8)
    if pub and num_iter < latency_count:
        errs.append(f"numIter ({num_iter}) must be greater than latencyCount ({latency_count}).")
    if pub and latency_test and last_int("-batchSize", 0) > 0:
        errs.append("Batching cannot be used in a Latency test.")
    if len(given.get("-peer", [])) >= 1024:
        errs.append("The maximum of 'initial_peers' is 1024")
    return errs


# ---- [agent] extra_args ----------------------------------------------------------------

def _accepts(o: Opt, kind: str) -> bool:
    if kind == "rti":
        return o.pro and o.key != ""
    return o.native and not (o.cyclone_only and kind.startswith("fastdds"))


def check_extra_args(args: list[str], kind: str = "native") -> str | None:
    """Why ``args`` cannot be appended to every process's command line for agent ``kind``
    (``native``, ``native-asan``, ``fastdds``, ``fastdds-asan`` or ``rti``), or None if they
    can. The Fast DDS agent parses its command line with the native agent's code
    (perftest-wrappers/native/options.c), so it accepts exactly the native agent's options.

    Allowed: options of both roles that the agent accepts and the runner does not set.
    """
    allowed = ", ".join(sorted((o.name for o in (*PERFTEST, *EXTENSIONS)
                                if o.role == "both" and o.refuse is None and _accepts(o, kind)),
                               key=str.lower))
    i = 0
    while i < len(args):
        a = args[i]
        o = option(a)
        if o is None:
            return (f"unknown option {a!r} (options are case-insensitive Perftest names); "
                    f"allowed in extra_args: {allowed}")
        if o.refuse is not None:
            return f"option {o.name} is {o.refuse}; allowed in extra_args: {allowed}"
        if o.role != "both":
            what = "publisher" if o.role == "pub" else "subscriber"
            other = "subscribers" if o.role == "pub" else "publishers"
            return (f"option {o.name} is a {what}-only option (extra_args reach {other} too); "
                    f"allowed in extra_args: {allowed}")
        if not _accepts(o, kind):
            who = ("real RTI Perftest" if kind == "rti" else "the Fast DDS agent"
                   if kind.startswith("fastdds") else "the native agent")
            return f"option {o.name} is not accepted by {who}; allowed in extra_args: {allowed}"
        if o.takes_value:
            if i + 1 >= len(args):
                return f"option {o.name} needs a value"
            value = args[i + 1]
            if any(c in value for c in "<>&\"'\n") or value.startswith("-"):
                return f"option {o.name}: bad value {value!r}"
            if kind != "rti" and native_value_error(o, value):
                return (f"option {o.name}: bad value {value!r}; allowed: "
                        f"{native_allowed(o)} (the agent's own rule)")
            if o.key and (bad := _value_errors(o, value, native=kind != "rti")):
                return f"option {o.name}: bad value {value!r} ({bad[0]})"
            i += 1
        i += 1
    return None
