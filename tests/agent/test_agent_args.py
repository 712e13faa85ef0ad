"""Command-line errors of the native agent (no network needed: it exits before DDS starts)."""

from __future__ import annotations

import subprocess

import pytest


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
        (["-pub", "-numPublishers", "2", "-pidMultiPubTest", "2"], "-pidMultiPubTest"),
        (["-sub", "-numSubscribers", "3", "-sidMultiSubTest", "5"], "-sidMultiSubTest"),
        (["-sub", "-pidMultiPubTest", "0"], "-pidMultiPubTest"),
        (["-pub", "-outputFormat", "xml"], "-outputFormat"),
        (["-pub", "-multicastAddr", "10.1.1.1"], "-multicastAddr"),
        (["-pub", "-executionTime", "-3"], "-executionTime"),
        (["-pub", "-latencyTest", "-numPublishers", "2"], "-latencyTest"),
        (["-pub", "-latencyTest", "-batchSize", "100"], "-batchSize"),
        (["-pub", "-domain", "500"], "-domain"),
        (["-pub", "stray"], "stray"),
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


def test_options_are_case_insensitive_and_help_exits_0(agent: str) -> None:
    r = run(agent, "-PUB", "-DATALEN", "10")  # upper-case names are accepted: value checked
    assert r.returncode == 2 and "-datalen" in r.stderr.lower()
    h = run(agent, "-help")
    assert h.returncode == 0 and "-latencyFile" in h.stdout and "-discoveryTimeout" in h.stdout


def test_asan_build_rejects_unknown_option_too(agent_asan: str) -> None:
    r = run(agent_asan, "-pub", "-noSuchOption")
    assert r.returncode == 2 and "-noSuchOption" in r.stderr
