"""The agents print RTI Perftest 4.3's output byte for byte (both
agents).

    ns h0: publishers 0 and 1 ---+--- Linux bridge --- ns h1: subscriber 0

Each combination of -outputFormat, -noPrintIntervals and -cpu runs a short 2 -> 1 test;
every process's stdout is parsed, printed again by the generator written from Perftest
4.3's format strings (tests/helpers/perftest43_format.py), and must come back identical:
titles, column headers, field widths, separators, JSON layout, units. Publisher 1 prints
only what Perftest's other publishers print (JSON brackets, nothing otherwise).
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from experiments.perftest_output import parse_latency_file_blocks, parse_perftest_output
from tests.helpers import perftest43_format as p43
from tests.helpers.agentkinds import AgentKind
from tests.helpers.agentrun import describe, pub_and_sub, run_agents
from tests.helpers.netlab import NetLab

AGENT_KINDS = ("native", "fastdds")
COMBOS = list(itertools.product(p43.FORMATS, (True, False), (True, False)))


@pytest.mark.parametrize(("fmt", "intervals", "cpu"), COMBOS)
def test_output_is_perftest43_layout(lab2: NetLab, agent: str, tmp_path: Path, fmt: str,
                                             intervals: bool, cpu: bool) -> None:
    latfile = tmp_path / "lat.csv"
    args = ["-dataLen", "100", "-latencyCount", "200", "-outputFormat", fmt,
            *([] if intervals else ["-noPrintIntervals"]), *(["-cpu"] if cpu else [])]
    res = run_agents(lab2, agent, 2, 1, args, timeout=30,
                     pub_args=["-executionTime", "3", "-latencyFile", str(latfile)])
    diag = describe(res)
    assert all(r.rc == 0 for r in res), diag
    by_name = {r.name: r for r in res}
    sub = parse_perftest_output(by_name["sub0"].stdout)
    pub0 = parse_perftest_output(by_name["pub0"].stdout)
    assert sub.role == "subscriber" and pub0.role == "publisher", diag
    assert sub.summary["Total Samples"] > 0 and pub0.summary["50% (us)"] > 0
    if intervals:
        # 3 s of data, the first partial second swallowed as Perftest does
        assert 1 <= len(sub.intervals) <= 4, by_name["sub0"].stdout
        assert len(pub0.intervals) >= 5
    else:
        assert sub.intervals == [] and pub0.intervals == []
    if cpu:
        assert 0 <= sub.summary["CPU (%)"] <= 100
    for r, parsed in ((by_name["sub0"], sub), (by_name["pub0"], pub0)):
        expected = p43.rerender(parsed, fmt, intervals, cpu)
        assert r.stdout == expected, f"{r.name}:\n{r.stdout}\n--- 4.3 layout ---\n{expected}"
    other = by_name["pub1"].stdout
    assert other == p43.publisher_output(fmt, intervals, cpu, 100, [], None), other
    # the 4.1+ latency file: one block, the values of the interval rows in arrival order
    text = latfile.read_text()
    assert text.startswith("Sample Number, Value\n0, ") and text.endswith("\n\n")
    blocks = parse_latency_file_blocks(text)
    assert len(blocks) == 1
    if intervals:
        assert blocks[0] == [float(v) for v in pub0.column("Latency (us)")]


def test_no_output_headers_and_output_file(lab2: NetLab, agent: str, agent_kind: AgentKind,
                                          tmp_path: Path) -> None:
    """-noOutputHeaders -outputFile F: publisher 0's rows alone, appended to F, in 4.3's
    layout, and nothing on its stdout; the subscriber (no -outputFile) prints its rows
    without any title or header on stdout. -nic given as an interface name (eth0) instead
    of an address."""
    outs = {"pub0": tmp_path / "pub0.csv"}
    outs["pub0"].write_text("earlier run\n")  # appended to, as Perftest's printer does
    res = run_agents(lab2, agent, 1, 1, ["-noOutputHeaders", "-nic", "eth0"], timeout=30,
                     pub_args=["-executionTime", "2", "-latencyCount", "100",
                               "-outputFile", str(outs["pub0"])])
    assert all(r.rc == 0 for r in res), describe(res)
    pub, sub = pub_and_sub(res)
    assert pub.stdout == ""
    assert sub.stdout and all("Bytes" not in line for line in sub.stdout.splitlines())
    evidence = {r.name: agent_kind.nic_eth0.format(ip=lab2.ip(r.host)) for r in res}
    assert all(evidence[r.name] in r.stderr for r in res), (evidence, describe(res))
    lines = outs["pub0"].read_text().splitlines()
    assert lines[0] == "earlier run" and len(lines) > 3
    rows, summary = lines[1:-1], lines[-1]
    for row in rows:  # "%14d,%13lu,%9.0lf,%9.1lf,%9lu,%9lu"
        fields = row.split(",")
        assert [len(f) for f in fields] == [14, 13, 9, 9, 9, 9], row
    fields = summary.split(",")  # "%19d,%9.0lf,%9.1lf,%9lu,%9lu,%9lu,%9lu,%9lu,%12lu,%14lu"
    assert [len(f) for f in fields] == [19, 9, 9, 9, 9, 9, 9, 9, 12, 14], summary
    assert int(fields[0]) == 100
