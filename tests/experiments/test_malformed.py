"""Malformed scenario files each give one clear message naming the file, the
key and the allowed values, exit status 2, and build nothing."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import topologies

GOOD = """\
[campaign]
name = "bad"
[topology]
name = "lan"
params = { hosts = 4 }
[agent]
kind = "ddsperf"
[matrix]
participants = [1]
modes = ["unicast"]
execution_time = 5
"""


NATIVE = GOOD.replace('kind = "ddsperf"', 'kind = "native"')
ROUTED = GOOD.replace('name = "lan"', 'name = "routed"').replace(
    "params = { hosts = 4 }", 'params = { routers = 2, hosts = 1, mrouting = "smcroute" }')


def _edit(old: str, new: str) -> str:
    assert old in GOOD
    return GOOD.replace(old, new)


# (id, scenario text, key the message must name, words it must contain)
CASES = [
    ("unknown-table", GOOD + "[matrixx]\nx = 1\n", "matrixx",
     ["unknown key", "allowed:", "matrix", "placement"]),
    ("unknown-key", _edit("participants = [1]", "participant = [1]"), "matrix.participant",
     ["unknown key", "allowed:", "participants", "publishers"]),
    ("wrong-type", _edit("execution_time = 5", 'execution_time = "five"'),
     "matrix.execution_time", ["wrong type", "integer"]),
    ("zero-subscribers", _edit("participants = [1]", "publishers = [1]\nsubscribers = [0]"),
     "matrix.subscribers", ["got 0", "allowed: counts of 1..1000"]),
    ("bad-mode", _edit('modes = ["unicast"]', 'modes = ["broadcast"]'), "matrix.modes.0",
     ["'broadcast'", "allowed:", "'unicast'", "'multicast'"]),
    ("unknown-agent", _edit('kind = "ddsperf"', 'kind = "opensplice"'), "agent.kind",
     ["'opensplice'", "allowed:", "'native'", "'ddsperf'"]),
    ("agent-not-installed", _edit('kind = "ddsperf"', 'kind = "rti"'), "agent.kind",
     ["not installed", "agents: native, native-asan, fastdds, fastdds-asan, rti, ddsperf"]),
    # The implementations axis is checked like the other axes.
    ("agents-unknown", _edit("execution_time = 5",
                             'execution_time = 5\nagents = ["ddsperf", "opensplice"]'),
     "matrix.agents.1", ["'opensplice'", "allowed:", "'native'", "'fastdds'"]),
    ("agents-twice", _edit("execution_time = 5", 'execution_time = 5\nagents = ["ddsperf", '
                           '"ddsperf"]'),
     "matrix.agents", ["ddsperf listed twice", "allowed: each of native, native-asan"]),
    ("agent-kind-not-in-axis", _edit("execution_time = 5",
                                     'execution_time = 5\nagents = ["native", "fastdds"]'),
     "matrix.agents", ["agent.kind 'ddsperf' is not in", "allowed: leave agent.kind out"]),
    ("unknown-fanout", _edit("execution_time = 5", 'execution_time = 5\nfanout = ["off"]'),
     "matrix.fanout.0", ["'off'", "allowed:", "'kernel'", "'joined-only'"]),
    ("fanout-twice", _edit("execution_time = 5",
                           'execution_time = 5\nfanout = ["kernel", "kernel"]'),
     "matrix.fanout", ["kernel listed twice", "allowed: each of kernel, joined-only"]),
    ("host-not-in-topology", GOOD + '[placement]\nhosts = ["h1", "h9"]\n', "placement",
     ["'h9'", "allowed: h1, h2, h3, h4"]),
    ("too-many-per-host", _edit("participants = [1]", "participants = [300]"), "matrix",
     ["150 participants", "at most 120 per host"]),
    ("bad-topology-param",
     _edit("params = { hosts = 4 }", 'params = { hosts = 4, snooping = "maybe" }'),
     "topology.params", ["snooping", "allowed: on/off"]),
    ("unknown-topology", _edit('name = "lan"', 'name = "mesh"'), "topology.name",
     ["'mesh'", "allowed: lan, routed"]),
    ("unknown-capture-point", GOOD + '[capture]\npoints = ["s1-eth9"]\n', "capture.points",
     ["'s1-eth9'", "allowed: h1-eth0", "s1-eth4"]),
    ("toml-syntax", GOOD + "[matrix\n", "(syntax)", ["not valid TOML"]),
    ("duration-for-absent-count",
     _edit("execution_time = 5", 'execution_time = 5\nexecution_time_by_count = { "7" = 60 }'),
     "matrix", ["execution_time_by_count", "'7'", "allowed: 1, 1x1"]),
    ("repetitions-for-absent-count",
     _edit("execution_time = 5", 'execution_time = 5\nrepetitions_by_count = { "7" = 3 }'),
     "matrix", ["repetitions_by_count", "'7'", "allowed: 1, 1x1"]),
    ("repetitions-by-count-zero",
     _edit("execution_time = 5", 'execution_time = 5\nrepetitions_by_count = { "1" = 0 }'),
     "matrix", ["repetitions_by_count.1", "got 0", "allowed: 1..1000"]),
    ("baseline-repetitions-factorial",
     _edit("execution_time = 5", "execution_time = 5\nbaseline_repetitions = 6"),
     "matrix", ["baseline_repetitions", 'only with design = "one-at-a-time"',
                "got design = 'factorial'"]),
    ("baseline-repetitions-for-absent-count",
     _edit("execution_time = 5", 'execution_time = 5\ndesign = "one-at-a-time"\n'
           'baseline_repetitions_by_count = { "7" = 6 }'),
     "matrix", ["baseline_repetitions_by_count", "'7'", "allowed: 1, 1x1"]),
    # "1" and "1x1" name one count: one of the two values was silently ignored.
    ("by-count-key-twice",
     _edit("execution_time = 5", 'execution_time = 5\nrepetitions_by_count = { "1" = 4, '
           '"1x1" = 7 }'),
     "matrix", ["repetitions_by_count", "'1' and '1x1' both name the count 1x1 (4 and 7)",
                "allowed: one key per count, '1' or '1x1'"]),
    # The baseline (native over shared memory, which it lacks) is not run: its repetitions
    # were silently ignored.
    ("baseline-repetitions-baseline-not-run",
     _edit('[agent]\nkind = "ddsperf"\n', "").replace(
         "execution_time = 5", 'execution_time = 5\ndesign = "one-at-a-time"\n'
         'agents = ["native", "fastdds"]\nsame_host = ["shm", "udp"]\n'
         "baseline_repetitions = 6"),
     "matrix.baseline_repetitions", ["the baseline (agent 'native' with same_host 'shm') is "
                                     "not run", "would be ignored",
                                     "allowed: 'udp' first in matrix.same_host"]),
    # Names that become paths, inf/nan, finite bounds, extra_args.
    ("placement-name-path", GOOD + '[placements."../../etc"]\nhosts = ["h1"]\n',
     "placements", ["'../../etc'", "letters, digits, - and _"]),
    ("placement-name-slash", GOOD + '[placements."a/b"]\nhosts = ["h1"]\n',
     "placements", ["'a/b'", "letters, digits, - and _"]),
    ("inf-timeout", GOOD + "[timing]\nrun_timeout = inf\n", "timing.run_timeout",
     ["got inf", "allowed: a finite number"]),
    ("nan-warmup", GOOD + "[timing]\nwarmup = nan\n", "timing.warmup",
     ["got nan", "allowed: a finite number"]),
    ("nan-fidelity", GOOD + "[fidelity]\nmax_socket_drop_share = nan\n",
     "fidelity.max_socket_drop_share", ["allowed: a finite number"]),
    ("huge-execution-time", _edit("execution_time = 5", "execution_time = 100000000000"),
     "matrix.execution_time", ["got 100000000000", "allowed: a number less than or equal to "
                               "604800"]),
    ("data-len-above-agent", NATIVE.replace("execution_time = 5",
                                            "execution_time = 5\ndata_len = [134217000]"),
     "matrix.data_len", ["got 134217000", "allowed: 28..16777216"]),
    ("extra-args-unknown", NATIVE.replace('kind = "native"',
                                          'kind = "native"\nextra_args = ["-frobnicate"]'),
     "agent.extra_args", ["unknown option '-frobnicate'", "allowed in extra_args:"]),
    ("extra-args-wrong-role", NATIVE.replace('kind = "native"',
                                             'kind = "native"\nextra_args = ["-batchSize", "0"]'),
     "agent.extra_args", ["-batchSize is a publisher-only option", "allowed in extra_args:"]),
    ("extra-args-latency-file", NATIVE.replace(
        'kind = "native"', 'kind = "native"\nextra_args = ["-latencyFile", "/etc/x"]'),
     "agent.extra_args", ["-latencyFile", "inside the run directory", "allowed in extra_args:"]),
    # Inputs that passed the check and failed once the network was built, or never ran.
    *[(f"{key}-nan", _edit("params = { hosts = 4 }", f"params = {{ hosts = 4, {key} = nan }}"),
       "topology.params", [f"'{key}' = nan is not allowed", f"allowed: a number in [{low}"])
      for key, low in (("cpu", "0.01"), ("bw", "0.1"), ("loss", "0"))],
    ("delay-unicode-digits", _edit("params = { hosts = 4 }",
                                   'params = { hosts = 4, delay = "\u0661\u0660ms" }'),
     "topology.params", ["'delay'", "allowed: a duration such as 5ms", "ASCII digits"]),
    ("hosts-unicode-digits", _edit("params = { hosts = 4 }", 'params = { hosts = "\u0664" }'),
     "topology.params", ["'hosts'", "allowed: a number in [1, 250] (an integer, ASCII"]),
    ("hosts-inf", _edit("params = { hosts = 4 }", "params = { hosts = inf }"),
     "topology.params", ["'hosts' = inf is not allowed", "allowed: a number in [1, 250]"]),
    ("smc-groups-newline", ROUTED.replace("mrouting = \"smcroute\"",
                                          'mrouting = "smcroute", smc_groups = '
                                          '"239.0.0.0/8\\nphyint r1-eth0 enable"'),
     "topology.params", ["'smc_groups'", "allowed: IPv4 multicast groups GROUP or GROUP/LEN"]),
    *[(f"extra-args-{opt[1:]}", NATIVE.replace(
        'kind = "native"', f'kind = "native"\nextra_args = ["{opt}", "{value}"]'),
       "agent.extra_args", [f"option {opt}: bad value '{value}'", f"allowed: {allowed}"])
      for opt, value, allowed in (
          ("-instances", "200000000", "an integer from 1 to 100000000"),
          ("-sendQueueSize", "5x", "an integer from 1 to 100000000"),
          ("-discoveryTimeout", "abc", "a number from 0.1 to 1e+06"),
          ("-leaseDuration", "0", "a number from 1 to 1e+06"))],
    ("cluster-server-twice", GOOD + '[cluster]\nservers = ["localhost", "10.0.0.2", '
     '"root@10.0.0.2"]\n', "cluster", ["server 10.0.0.2 is listed twice",
                                        "allowed: each server once"]),
    ("cluster-host-name", GOOD + '[cluster]\nservers = ["localhost", "srv2.lab"]\n',
     "cluster", ["servers[1] = 'srv2.lab'", "allowed:", "an IPv4 address (not a host name"]),
    ("variant-name-300", _edit("params = { hosts = 4 }",
                               "params = { hosts = 4 }\n[topology.variants." + "v" * 300
                               + "]\nsnooping = false"),
     "topology.variants", ["variant name 'vvvv", "at most 48 characters"]),
    ("placement-name-300", GOOD + "[placements." + "p" * 300 + ']\nhosts = ["h1"]\n',
     "placements", ["placement name 'pppp", "at most 48 characters"]),
    # Run ids: two cells named alike, an axis value twice.
    ("run-id-collision", _edit("params = { hosts = 4 }",
                               "params = { hosts = 4 }\n[topology.variants.a]\n"
                               "[topology.variants.a-b]")
     + '[placements.b-c]\nhosts = ["h1"]\n[placements.c]\nhosts = ["h2"]\n',
     "topology.variants", ["two runs would get the run id 'lan-rel-100B-a-b-c-1x1-unicast-r1'",
                           "topology variant 'a', placement 'b-c'",
                           "topology variant 'a-b', placement 'c'", "allowed:"]),
    ("participants-twice", _edit("participants = [1]", "participants = [1, 1]"),
     "matrix.participants", ["1 listed twice", "allowed: each value at most once"]),
    ("pair-twice", _edit("participants = [1]", "publishers = [1, 1]\nsubscribers = [2, 2]"),
     "matrix", ["the pair 1x2 is listed twice", "allowed: each pair at most once"]),
    # Bounds (experiments/bounds.py): runs, latency samples.
    ("too-many-runs", _edit("execution_time = 5", "execution_time = 5\ndata_len = ["
                            + ", ".join(str(n) for n in range(28, 128)) + "]\nrepetitions = 101"),
     "matrix", ["the matrix has 10100 runs", "allowed: at most 10000 runs"]),
    ("too-many-variants", _edit("params = { hosts = 4 }", "params = { hosts = 4 }\n"
                                + "".join(f"[topology.variants.v{i}]\n" for i in range(101))),
     "topology.variants", ["too many values", "at most 100 items"]),
    ("latency-samples", NATIVE.replace("execution_time = 5",
                                       "execution_time = 21600\nlatency_count = [1]"),
     "matrix.latency_count", ["could keep 21600000000 latency samples", "latency_count 1",
                              "allowed: at most 50000000 per run"]),
]


@pytest.fixture
def no_build(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Fails loudly if anything tries to build a network."""
    calls: list[object] = []

    def refuse(*args: object, **kwargs: object) -> None:
        calls.append(args)
        raise AssertionError("a network was built for an invalid scenario")

    monkeypatch.setattr(topologies, "build", refuse)
    return calls


@pytest.mark.parametrize("check", [[], ["--check"]], ids=["run", "check"])
@pytest.mark.parametrize(("text", "key", "words"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_malformed_scenario(tmp_path: Path, text: str, key: str, words: list[str],
                            check: list[str], no_build: list[object],
                            monkeypatch: pytest.MonkeyPatch,
                            capsys: pytest.CaptureFixture[str]) -> None:
    """Refused by `mcastlab run` and by `mcastlab run --check` alike."""
    from mcastlab.cli import main

    monkeypatch.delenv("NDDSHOME", raising=False)
    scenario = tmp_path / "bad.toml"
    scenario.write_text(text)
    results = tmp_path / "results"
    status = main(["run", str(scenario), "--results", str(results), "--no-progress", *check])
    out, err = capsys.readouterr()
    assert status == 2
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"mcastlab run: {scenario}: {key}: "), lines[0]
    for w in words:
        assert w in lines[0], f"{w!r} missing from: {lines[0]}"
    assert not results.exists()
    assert no_build == []


def test_huge_matrix_is_refused_with_its_count_before_expanding(tmp_path: Path) -> None:
    """A scenario of 2 KB whose matrix has 2 x 10^11 runs: refused with the count, in a
    process allowed 2 GiB of address space (expanding it, as before, would need terabytes;
    prints the time it took)."""
    import resource
    import time

    axis = ", ".join(str(n) for n in range(28, 128))
    text = _edit("execution_time = 5", f"execution_time = 5\ndata_len = [{axis}]\n"
                 f"latency_count = [{axis}]\npub_rate = [{axis}]\nrepetitions = 1000")
    counts = ", ".join(str(n) for n in range(1, 101))
    text = text.replace("participants = [1]", f"participants = [{counts}]")
    text = text.replace('modes = ["unicast"]', 'modes = ["unicast", "multicast"]')
    scenario = tmp_path / "huge.toml"
    scenario.write_text(text)

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

    t0 = time.monotonic()
    p = subprocess.run([sys.executable, "-m", "mcastlab.cli", "run", str(scenario), "--check"],
                       capture_output=True, text=True, timeout=120, check=False,
                       preexec_fn=limit)
    took = time.monotonic() - t0
    print(f"{len(text)} bytes, refused in {took:.2f} s (whole process, interpreter start "
          "included)")
    assert p.returncode == 2, p.stderr[-500:]
    assert p.stderr.count("\n") == 1, p.stderr
    assert (f"{scenario}: matrix: the matrix has 200000000000 runs" in p.stderr
            and "allowed: at most 10000 runs" in p.stderr), p.stderr


@pytest.mark.parametrize("param", ["hosts=inf", "hosts=1e400", "hosts=\u0664", "cpu=nan",
                                   "delay=\u0661\u0660ms"])
def test_probe_refuses_what_run_refuses(param: str, no_build: list[object],
                                        capsys: pytest.CaptureFixture[str]) -> None:
    """`mcastlab probe --param` goes through the same parameter table: exit 2, one line
    naming the parameter and its allowed values, nothing built."""
    from mcastlab.cli import main

    status = main(["probe", "lan", "--param", param, "--sender", "h1", "--members", "all"])
    err = capsys.readouterr().err
    assert status == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    key = param.split("=")[0]
    assert lines[0].startswith(f"mcastlab probe: topology lan: parameter '{key}' = "), lines[0]
    assert "is not allowed; allowed: " in lines[0]
    assert no_build == []


def test_cli_exit_status_and_one_line(tmp_path: Path) -> None:
    """The same through the installed command: exit status 2 and one line on stderr."""
    scenario = tmp_path / "bad.toml"
    scenario.write_text(textwrap.dedent(CASES[1][1]))
    p = subprocess.run([sys.executable, "-m", "mcastlab.cli", "run", str(scenario), "--results",
                        str(tmp_path / "r")], capture_output=True, text=True, timeout=60,
                       check=False)
    assert p.returncode == 2
    assert p.stderr.count("\n") == 1 and "matrix.participant" in p.stderr
    assert p.stdout == ""
    assert not (tmp_path / "r").exists()
