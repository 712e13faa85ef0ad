"""Command-line errors of the agents (no network needed: they exit before DDS starts).

Both agents parse with the same code (perftest-wrappers/native/options.c); these tests run
against each binary, so the Fast DDS agent's build and its program name are checked too."""

from __future__ import annotations

import os
import subprocess

import pytest

from tests.helpers.agentkinds import AGENTS, AgentKind

AGENT_KINDS = ("native", "fastdds")


def run(agent: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([agent, *args], capture_output=True, text=True, timeout=10)


@pytest.mark.parametrize(
    ("args", "names"),
    [
        (["-pub", "-frobnicate"], "-frobnicate"),
        (["-pub", "-dataLen", "10"], "-dataLen"),
        (["-pub", "-dataLen", "abc"], "-dataLen"),
        (["-pub", "-dataLen"], "-dataLen"),
        (["-pub", "-sub"], "-pub"),
        ([], "-pub"),
        (["-sub", "-pidMultiPubTest", "0"], "-pidMultiPubTest"),
        (["-pub", "-outputFormat", "xml"], "-outputFormat"),
        (["-pub", "-multicastAddr", "10.1.1.1"], "-multicastAddr"),
        (["-pub", "-executionTime", "-3"], "-executionTime"),
        (["-pub", "-latencyTest", "-pidMultiPubTest", "1"], "latency test"),
        (["-pub", "-latencyCount", "5", "-numIter", "3"], "latencyCount"),
        (["-pub", "-multicastAddr", "239.1.1.1,239.1.1.2"], "-multicastAddr"),
        (["-pub", "-multicastAddr", "239.255.255.254"], "-multicastAddr"),
        (["-pub", "-transport", "TCP"], "-transport"),
        (["-pub", "-flatData"], "-flatData"),
        (["-pub", "-latencyTest", "-batchSize", "100"], "-batchSize"),
        (["-pub", "-domain", "500"], "-domain"),
        (["-pub", "stray"], "stray"),
        (["-pub", "-scaleSettings", "-scaleDiscovery"], "-scaleDiscovery"),
    ],
)
def test_bad_arguments_exit_2_with_one_line_naming_the_option(
    agent: str, args: list[str], names: str
) -> None:
    r = run(agent, *args)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert names.lower() in lines[0].lower()
    assert r.stdout == ""


def test_transport_values_follow_the_middleware(agent: str, agent_kind: AgentKind) -> None:
    """-transport UDPv4 everywhere; SHMEM only where the middleware has shared
    memory (Fast DDS), refused with the reason elsewhere (Cyclone DDS 0.10.2). An option
    after it that is wrong shows whether -transport itself was accepted."""
    r = run(agent, "-pub", "-transport", "SHMEM", "-frobnicate")
    assert r.returncode == 2 and r.stdout == ""
    if agent_kind.shm:
        assert "-frobnicate" in r.stderr, r.stderr
        assert "-transport UDPv4|SHMEM (default: both" in run(agent, "-help").stdout
    else:
        assert "'SHMEM' for -transport" in r.stderr and "without a shared-memory" in r.stderr
        assert "allowed: UDPv4" in r.stderr
        assert "-transport UDPv4|SHMEM (UDPv4 only: no shared memory" in run(agent, "-help").stdout
    r = run(agent, "-pub", "-transport", "udpv4", "-frobnicate")
    assert "-frobnicate" in r.stderr, r.stderr


# Perftest 4.3's role groups (ParameterManager.cxx): publisher-only and subscriber-only
# (-numSubscribers and -numPublishers: see the cross-count test below).
PUB_ONLY = [("-pidMultiPubTest", "0"), ("-latencyCount", "10"), ("-latencyTest", None),
            ("-executionTime", "5"), ("-numIter", "100"), ("-batchSize", "0"),
            ("-latencyFile", "x.csv"), ("-pubRate", "10")]
SUB_ONLY = [("-sidMultiSubTest", "0")]


@pytest.mark.parametrize(("role", "other", "opt", "value"),
                         [("-sub", "-pub", o, v) for o, v in PUB_ONLY]
                         + [("-pub", "-sub", o, v) for o, v in SUB_ONLY])
def test_an_option_of_the_other_role_is_perftests_error(
    agent: str, agent_kind: AgentKind, role: str, other: str, opt: str, value: str | None
) -> None:
    r = run(agent, role, opt, *([value] if value else []))
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr == f"{agent_kind.prog}: Cannot use '{opt}' while setting '{role}'.\n"


def test_every_role_conflict_is_reported_in_perftests_table_order(agent: str) -> None:
    r = run(agent, "-sub", "-latencyCount", "5", "-executionTime", "3", "-batchSize", "0")
    assert r.returncode == 2
    assert [line.split(": ", 1)[1] for line in r.stderr.splitlines()] == [
        "Cannot use '-batchSize' while setting '-sub'.",
        "Cannot use '-executionTime' while setting '-sub'.",
        "Cannot use '-latencyCount' while setting '-sub'."]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-pub", "-numPublishers", "2", "-pidMultiPubTest", "2"],
         "-pidMultiPubTest must be below -numPublishers (2)"),
        (["-sub", "-numSubscribers", "3", "-sidMultiSubTest", "5"],
         "-sidMultiSubTest must be below -numSubscribers (3)"),
    ],
)
def test_the_other_sides_count_is_the_one_accepted_exception(
    agent: str, agent_kind: AgentKind, args: list[str], message: str
) -> None:
    """mcastlab's runner gives the native agent both counts (NATIVE_CROSS_ROLE in
    experiments/agent_options.py): accepted and used (here: the id range check), where
    RTI Perftest would refuse them."""
    r = run(agent, *args)
    assert r.returncode == 2 and r.stderr == f"{agent_kind.prog}: {message}\n"


@pytest.mark.parametrize(
    ("args", "resolved"),
    [
        (["-sub", "-LATENCYC", "5"], "-latencyCount"),  # case-insensitive prefix
        (["-sub", "-latency", "5"], "-latencyCount"),  # first in Perftest's table order
        (["-sub", "-numI", "200"], "-numIter"),
        (["-pub", "-sidM", "2"], "-sidMultiSubTest"),
        (["-sub", "-nic", "eth0", "-multicastAddr", "239.1.1.1,239.1.1.2,239.1.1.3",
          "-noPrint", "-pidM", "0"], "-pidMultiPubTest"),  # the others were accepted
    ],
)
def test_option_names_are_perftest_prefixes(agent: str, args: list[str], resolved: str) -> None:
    r = run(agent, *args)
    assert r.returncode == 2
    assert f"Cannot use '{resolved}'" in r.stderr, r.stderr


def test_abbreviations_resolve_as_in_perftest_not_to_extensions(agent: str) -> None:
    # Perftest reads "-m" as -maximumAllocableBufferSize (unsupported here), never as the
    # native -maxParticipantIndex extension.
    r = run(agent, "-pub", "-m", "5")
    assert r.returncode == 2 and "'-maximumAllocableBufferSize' Not supported" in r.stderr


def test_options_are_case_insensitive_and_help_exits_0(agent: str) -> None:
    r = run(agent, "-PUB", "-DATALEN", "10")  # upper-case names are accepted: value checked
    assert r.returncode == 2 and "-datalen" in r.stderr.lower()
    h = run(agent, "-help")
    assert h.returncode == 0 and "-latencyFile" in h.stdout and "-discoveryTimeout" in h.stdout


def test_asan_build_rejects_unknown_option_too(agent_asan: str) -> None:
    r = run(agent_asan, "-pub", "-noSuchOption")
    assert r.returncode == 2 and "-noSuchOption" in r.stderr


def test_fastdds_agent_refuses_write_batching() -> None:
    """Fast DDS 2.x has no DDS-level write batching: -batchSize B > 0 is refused (exit 2, one
    line naming the option) rather than silently ignored; -batchSize 0 is accepted (the
    command line then fails only on the stray argument after it)."""
    exe = str(AGENTS["fastdds"].binary)
    if not os.access(exe, os.X_OK):
        pytest.fail(f"{exe} is missing: run ./setup.sh (it builds perftest-wrappers/fastdds)")
    r = run(exe, "-pub", "-batchSize", "8192")
    assert r.returncode == 2 and r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "-batchSize" in lines[0] and "batching" in lines[0], r.stderr
    r = run(exe, "-pub", "-batchSize", "0", "stray")
    assert r.returncode == 2 and "stray" in r.stderr and "batchSize" not in r.stderr, r.stderr


# Values around the rules of options.c (to_int: strtoll over the whole value; to_dbl:
# strtod over the whole value), and around each option's range.
EDGE_VALUES = ["0", "1", "2", "0.05", "0.1", "1.5", "5x", "abc", "", " 7", "+7", "7 ", "1e3",
               "1e6", "1000001", "0x10", "0x1p-3", "inf", "nan", "120", "200000", "200001",
               "100000000", "100000001", "200000000", "99999999999999999999", "\u0663"]


def _extra_args_with_values() -> list[str]:
    from experiments import agent_options as ao

    return sorted(o.name for o in (*ao.PERFTEST, *ao.EXTENSIONS)
                  if o.native and o.role == "both" and o.refuse is None and o.takes_value)


@pytest.mark.parametrize("opt", _extra_args_with_values())
def test_extra_args_values_are_checked_by_the_agents_own_rules(
        agent: str, agent_kind: AgentKind, opt: str) -> None:
    """Every value [agent] extra_args may give an option: the scenario check accepts it
    exactly when the agent does (before, `-instances 200000000`, `-sendQueueSize 5x`,
    `-discoveryTimeout abc` and `-leaseDuration 0` passed the check and every agent then
    exited 2 after the network was built). An argument after the value that the agent
    refuses shows whether the value itself was taken."""
    from experiments.agent_options import check_extra_args

    differ = []
    for value in EDGE_VALUES:
        r = run(agent, "-pub", opt, value, "-frobnicate")
        assert r.returncode == 2
        agent_takes = "'-frobnicate'" in r.stderr
        check_takes = check_extra_args([opt, value], agent_kind.name) is None
        if agent_takes != check_takes:
            differ.append((value, agent_takes, r.stderr.strip()))
    assert differ == [], differ
