"""Capture windows (captures/windows.py): the plan, the schedule, the cut, the record and
what the wire tables and the report make of them. Pure logic and crafted captures, no root.

The timeline of a run, as :func:`windows.schedule` sees it (seconds, monotonic)::

    spawn   full discovery   opened (runner saw it)   window          first publisher ends
    |       100.3            101.4                    102.3 .. 107.3  118.0 (- 1 s margin)
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
import pytest
from scapy.layers.inet import IP
from scapy.layers.l2 import Ether
from scapy.packet import Raw

from analysis.analyse import analyse
from analysis.load import load_campaign
from analysis.synthetic import write_campaign
from analysis.verdicts import sentence, verdict_table, window_note, wire_ratio
from captures import coverage, wire
from captures import windows as w
from experiments.capture_windows import anchors
from tests.helpers import craft as c


def write_pcap(path: Path, stamps: list[float], ns: bool = False) -> Path:
    """A classic pcap with one 60-byte frame per timestamp."""
    magic, div = (0xA1B23C4D, 10**9) if ns else (0xA1B2C3D4, 10**6)
    out = struct.pack("<IHHiIII", magic, 2, 4, 0, 0, 65535, 1)
    for ts in stamps:
        sec = int(ts)
        out += struct.pack("<IIII", sec, round((ts - sec) * div), 60, 60) + bytes(60)
    path.write_bytes(out)
    return path


def read_stamps(path: Path) -> list[float]:
    data = path.read_bytes()
    magic = struct.unpack_from("<I", data)[0]
    div = 1e9 if magic == 0xA1B23C4D else 1e6
    out, pos = [], 24
    while pos < len(data):
        sec, frac, incl, _ = struct.unpack_from("<IIII", data, pos)
        out.append(sec + frac / div)
        pos += 16 + incl
    return out


# ---- plan and schedule ------------------------------------------------------------------
@pytest.mark.parametrize(("execution_time", "window_s", "settle_s", "every_s", "length",
                          "count"), [
    (20, 5, 2, 0, 5.0, 1),  # make run's 1x1..25x25: 5 s
    (30, 5, 2, 0, 5.0, 1),
    (5, 5, 2, 0, 2.0, 1),  # a 5 s run holds 2 s (5 - settle 2 - margin 1)
    (21600, 5, 2, 600, 5.0, 36),  # the study's six hours: one window every 10 minutes
    (600, 5, 2, 60, 5.0, 10),
])
def test_plan_comes_from_the_scenario(execution_time: int, window_s: float, settle_s: float,
                                      every_s: float, length: float, count: int) -> None:
    p = w.plan(execution_time, window_s, settle_s, every_s)
    assert p is not None and (p.length_s, p.count) == (length, count)


def test_plan_refuses_what_cannot_hold_a_window() -> None:
    assert w.plan(20, 0, 2, 0) is None  # window_s = 0: one capture over the whole run
    with pytest.raises(w.WindowError, match="need an execution time"):
        w.plan(0, 5, 2, 0)
    with pytest.raises(w.WindowError, match=r"execution_time 3 s leaves 0\.0 s"):
        w.plan(3, 5, 2, 0)


@pytest.mark.parametrize(("execution_time", "window_s", "settle_s"), [
    (60, 5.0, 5.0),  # the defaults fit: unchanged (existing runs keep their config)
    (7, 5.0, 5.0),  # 5 s settle + 1 s window + 1 s margin: still the defaults
    (6, 5.0, 4.0),  # the settle gives way as far as a 1 s window needs
    (4, 5.0, 2.0),
    (2, 5.0, 0.0),  # no settle left: a 1 s window right after full discovery
    (1, 0.0, 5.0),  # no window fits even without settle: the whole run
    (0, 0.0, 5.0),  # num_iter: no known end, the whole run
])
def test_unset_window_keys_fit_every_run(execution_time: int, window_s: float,
                                         settle_s: float) -> None:
    assert w.fitted(execution_time, 5.0, 5.0) == (window_s, settle_s)
    got_window, got_settle = w.fitted(execution_time, 5.0, 5.0)
    p = w.plan(execution_time, got_window, got_settle, 0)  # never refused
    assert (p is None) == (got_window == 0)
    if p is not None:
        assert p.length_s >= w.MIN_WINDOW_S
        assert got_settle + p.length_s + w.END_MARGIN_S <= execution_time


def test_explicit_window_keys_are_kept_and_refused_when_they_do_not_fit() -> None:
    # an explicit settle, even at its default value, stays as given: plan refuses it
    assert w.fitted(4, 5.0, 5.0, {"window_settle_s"}) == (5.0, 5.0)
    with pytest.raises(w.WindowError, match=r"execution_time 4 s leaves 0\.0 s"):
        w.plan(4, 5.0, 5.0, 0)
    # an explicit window: the unset settle still gives way, but a run with no room for
    # any window is refused rather than captured whole
    assert w.fitted(4, 3.0, 5.0, {"window_s"}) == (3.0, 2.0)
    assert w.fitted(1, 3.0, 5.0, {"window_s"}) == (3.0, 0.0)
    assert w.fitted(0, 5.0, 5.0, {"window_every_s"}) == (5.0, 0.0)
    assert w.fitted(4, 0.0, 5.0, {"window_s"}) == (0.0, 5.0)  # window_s = 0 as asked


SHORT = """
[campaign]
name = "short"
[topology]
name = "lan"
params = {{ hosts = 2 }}
[matrix]
participants = [1]
modes = ["unicast", "multicast"]
{matrix}
[capture]
points = ["s1-eth2"]
{capture}
"""


def _check(tmp_path: Path, matrix: str, capture: str = "") -> list[dict]:
    """The runs of a scenario that passed the check (ScenarioError otherwise)."""
    import topologies
    from experiments import matrix as matrix_mod
    from experiments import scenario as scenario_mod

    f = tmp_path / "short.toml"
    f.write_text(SHORT.format(matrix=matrix, capture=capture))
    sc, specs = scenario_mod.validate(f, check_machine=False)
    return matrix_mod.expand(sc, {v: topologies.host_names(s) for v, s in specs.items()})


def test_a_scenario_without_window_keys_fits_its_short_runs(tmp_path: Path) -> None:
    """A 4 s run with capture on and no window key is not refused: both modes' runs get
    2 s of settle and a 1 s window, recorded in their config (plan_of reads it)."""
    from experiments.capture_windows import plan_of

    runs = _check(tmp_path, "execution_time = 4")
    assert [(r["capture"]["window_s"], r["capture"]["window_settle_s"]) for r in runs] == [
        (5.0, 2.0), (5.0, 2.0)]
    assert {plan_of(r) for r in runs} == {w.Plan(1.0, 2.0, 0.0, 1)}
    # per count: a long count keeps the defaults, a short one gets what fits
    runs = _check(tmp_path, "execution_time = 20\nexecution_time_by_count = { \"1\" = 3 }")
    assert {r["capture"]["window_settle_s"] for r in runs} == {1.0}
    runs = _check(tmp_path, "execution_time = 20")
    assert {r["capture"]["window_settle_s"] for r in runs} == {5.0}
    # num_iter runs (no known end): one capture over the whole run
    runs = _check(tmp_path, "execution_time = 0\nnum_iter = 1000")
    assert {r["capture"]["window_s"] for r in runs} == {0.0}
    assert {plan_of(r) for r in runs} == {None}


@pytest.mark.parametrize(("matrix", "capture", "words"), [
    ("execution_time = 4", "window_settle_s = 5", r"execution_time 4 s leaves 0\.0 s"),
    ("execution_time = 4", "window_settle_s = 3.5", r"leaves 0\.0 s .* settle_s 3\.5 s"),
    ("execution_time = 0\nnum_iter = 1000", "window_s = 5", "need an execution time"),
    ("execution_time = 1", "window_s = 5", r"execution_time 1 s leaves 0\.0 s"),
])
def test_explicit_window_keys_that_do_not_fit_are_refused(tmp_path: Path, matrix: str,
                                                          capture: str, words: str) -> None:
    from experiments.scenario import ScenarioError

    with pytest.raises(ScenarioError, match=words) as exc:
        _check(tmp_path, matrix, capture)
    assert "capture.window_s" in str(exc.value) and "window_s = 0" in str(exc.value)


def test_schedule_starts_after_discovery_and_ends_before_the_first_publisher() -> None:
    p = w.plan(20, 5, 2, 0)
    assert p is not None
    a = w.Anchors(opened=101.4, all_discovered=100.3, first_stop=118.0)
    assert w.schedule(p, a) == [(pytest.approx(102.3), pytest.approx(107.3))]
    # the runner saw discovery late (after settle): the window never opens before it did
    late = w.Anchors(opened=103.0, all_discovered=100.3, first_stop=118.0)
    assert w.schedule(p, late)[0][0] == 103.0
    # the first publisher ends soon: the window is cut 1 s before, or dropped below 1 s
    short = w.Anchors(opened=101.4, all_discovered=100.3, first_stop=106.0)
    assert w.schedule(p, short) == [(pytest.approx(102.3), pytest.approx(105.0))]
    assert w.schedule(p, w.Anchors(101.4, 100.3, 104.0)) == []


def test_systematic_sampling_keeps_the_phase_and_drops_what_does_not_fit() -> None:
    p = w.plan(100, 5, 2, 30)  # 97 s of room: windows at +0, +30, +60, +90
    assert p is not None and p.count == 4
    a = w.Anchors(opened=10.5, all_discovered=10.0, first_stop=110.0)
    assert [round(s, 3) for s, _ in w.schedule(p, a)] == [12.0, 42.0, 72.0, 102.0]
    # discovery took 30 s longer: the same phases after discovery, one window fewer
    b = w.Anchors(opened=40.5, all_discovered=40.0, first_stop=110.0)
    assert [round(s, 3) for s, _ in w.schedule(p, b)] == [42.0, 72.0, 102.0]


def test_anchors_from_the_agents_clocks() -> None:
    """Full discovery: the latest agent; the first stop: the earliest publisher's
    discovery + execution time (its -executionTime clock starts there)."""
    starts = {"sub0": 50.0, "sub1": 50.1, "pub0": 50.2, "pub1": 50.3}
    after = {"sub0": 4.0, "sub1": 3.0, "pub0": 2.0, "pub1": 5.5}
    a = anchors(starts, after, 30, opened=56.5)
    assert a.all_discovered == pytest.approx(55.8) and a.first_stop == pytest.approx(82.2)
    # agents that report no discovery (ddsperf): their starts
    b = anchors(starts, dict.fromkeys(starts), 30, opened=51.0)
    assert b.all_discovered == pytest.approx(50.3) and b.first_stop == pytest.approx(80.2)



@pytest.mark.parametrize("seen_late", [False, True])
def test_a_window_that_never_opened_says_why(tmp_path: Path, seen_late: bool) -> None:
    """The first agent ended before the runner saw full discovery (measured at 75x75: 1.2 s
    from the last agent's discovery to the first publisher's end): no tcpdump starts and
    the record names the cause and the measurement window's length, not a missing line."""
    cap = w.WindowedCapture(None, {"h1-eth0": ("h1", "h1-eth0")}, tmp_path,
                            128, w.plan(30, 5, 5, 0))
    cap.close_window()
    if seen_late:
        cap.open_window(anchors({"pub0": 10.0, "sub0": 10.0}, {"pub0": 2.0, "sub0": 30.8},
                                30, opened=41.0))
    cap.stop()
    rec = cap.record()
    assert rec["windows"] == [] and rec["text"] == "no capture window"
    (problem,) = rec["problems"]
    if seen_late:
        assert "ended before the runner saw every agent's discovery" in problem, problem
        assert "1.2 s from full discovery" in problem, problem
    else:
        assert "not every agent reported discovery complete" in problem, problem

# ---- the cut ---------------------------------------------------------------------------
@pytest.mark.parametrize("ns", [False, True])
def test_trim_keeps_exactly_the_window(tmp_path: Path, ns: bool) -> None:
    stamps = [99.0, 99.999999, 100.0, 100.5, 104.999, 105.0, 105.3, 102.0]  # one late record
    f = write_pcap(tmp_path / "h1-eth0.w1.pcap", stamps, ns=ns)
    assert w.trim(f, 100.0, 105.0) == (4, 4, 105.3)
    assert read_stamps(f) == pytest.approx([100.0, 100.5, 104.999, 102.0])
    assert not list(tmp_path.glob("*.tmp"))
    # nothing left: a valid, empty capture, whose latest record (104.999) shows that
    # tcpdump stopped before this window's end
    assert w.trim(f, 200.0, 205.0) == (0, 4, pytest.approx(104.999))
    assert f.stat().st_size == 24


def test_trim_refuses_pcapng(tmp_path: Path) -> None:
    f = c.write_pcap(tmp_path / "x.pcapng", [c.udp_frame(c.rtps_header())], ng=True)
    with pytest.raises(ValueError, match="not a classic pcap"):
        w.trim(f, 0, 1e12)


def test_window_and_control_files_of_a_point(tmp_path: Path) -> None:
    for name in ("h1-eth0.w1.pcap", "h1-eth0.w2.pcap", "h1-eth0.control.pcap",
                 "s1-eth2.pcap0", "h1-eth0.w1.pcap.tmp"):
        write_pcap(tmp_path / name, [1.0])
    data = coverage.discover_pcaps(tmp_path)
    assert {p: [f.name for f in fs] for p, fs in data.items()} == {
        "h1-eth0": ["h1-eth0.w1.pcap", "h1-eth0.w2.pcap"], "s1-eth2": ["s1-eth2.pcap0"]}
    ctl = coverage.discover_pcaps(tmp_path, control=True)
    assert {p: [f.name for f in fs] for p, fs in ctl.items()} == {
        "h1-eth0": ["h1-eth0.control.pcap"]}


# ---- comparisons -------------------------------------------------------------------------
def test_differences_name_length_phase_and_missing_windows() -> None:
    five = w.WindowSummary(5.0, 5.0, 1, 2.0)
    assert w.differences({"unicast": [five, five], "multicast": [five]}) == []
    near = w.WindowSummary(4.6, 4.6, 1, 2.3)  # within 10% and 0.5 s
    assert w.differences({"unicast": [five], "multicast": [near]}) == []
    late = w.WindowSummary(5.0, 5.0, 1, 3.1)
    assert w.differences({"unicast": [five], "multicast": [late]}) == [
        "phases differ: unicast from 2.0 s after full discovery, multicast from 3.1 s after "
        "full discovery"]
    assert w.differences({"unicast": [five], "multicast": [None]}) == [
        "no capture window in multicast"]
    out = w.WindowSummary(5.0, 5.0, 1, 2.0, inside=False)
    assert w.differences({"unicast": [five], "multicast": [out]}) == [
        "a window of multicast is not inside its measurement window"]


def test_describe_names_the_windows() -> None:
    assert w.describe(5.0, 1, 2.0) == ("5.0 s inside the measurement window, from 2.0 s after "
                                       "full discovery")
    assert w.describe(5.0, 36, 2.0, 600.0) == (
        "36 windows of 5.0 s (180 s) inside the measurement window, every 600 s from 2.0 s "
        "after full discovery")


# ---- the wire tables over a window ---------------------------------------------------------
def _window_record(start: float, end: float, offset: float = 2.0) -> dict:
    return {"plan": {"length_s": end - start, "settle_s": 2.0, "every_s": 0.0, "count": 1},
            "s": round(end - start, 3), "text": w.describe(end - start, 1, offset),
            "windows": [{"index": 1, "start": start, "end": end, "s": round(end - start, 3),
                         "offset_s": offset, "inside": True, "packets": 3, "dropped": 0}]}


def test_wire_rates_per_second_of_window_and_memberships_from_the_control_capture(
        tmp_path: Path) -> None:
    """h1 (10.0.0.1) joined 239.255.0.1 before the agents started (its IGMP report is only
    in the whole-run control capture); in the 2 s window it receives 3 multicast DATA
    from 10.0.0.2 and sends 4 ACKNACKs. Delivered, not flooded; 2 ACKNACKs per s."""
    pcaps = tmp_path / "pcaps"
    pcaps.mkdir()
    frames = []
    for i in range(3):
        f = c.udp_frame(c.rtps_header() + c.data(i + 1, b"p" * 46), src="10.0.0.2", ipid=i + 1)
        f.time = 1000.2 + 0.5 * i
        frames.append(f)
    for i in range(4):
        f = c.udp_frame(c.rtps_header(c.PREFIX_B) + c.info_dst(c.PREFIX_A)
                        + c.acknack(1, 1, [], i + 1), dst="10.0.0.2", ipid=10 + i)
        f.time = 1000.1 + 0.4 * i
        frames.append(f)
    c.write_pcap(pcaps / "h1-eth0.w1.pcap", sorted(frames, key=lambda x: float(x.time)))
    # an IGMPv3 report of one MODE_IS_EXCLUDE record: 10.0.0.1 joins 239.255.0.1
    v3 = bytes([0x22, 0, 0, 0, 0, 0, 0, 1]) + bytes([2, 0, 0, 0, 239, 255, 0, 1])
    join = (Ether(src="02:00:00:00:00:01", dst="01:00:5e:00:00:16")
            / IP(src="10.0.0.1", dst="224.0.0.22", ttl=1, proto=2) / Raw(v3))
    join.time = 990.0
    c.write_pcap(pcaps / "h1-eth0.control.pcap", [join])
    (pcaps / "points.json").write_text(json.dumps({"h1-eth0": {"ips": ["10.0.0.1"]}}))
    (pcaps / w.WINDOWS_FILE).write_text(json.dumps(_window_record(1000.0, 1002.0)))
    s = wire.analyse_run(tmp_path)
    assert s["duration_s"] == 2.0 and s["windows"]["s"] == 2.0
    assert s["windows"]["text"] == "2.0 s inside the measurement window, from 2.0 s after full "\
        "discovery"
    assert "coverage" not in s
    assert s["acknack_per_reader_per_s"] == pytest.approx(4 / 2.0)
    assert s["flooded_frames"] == 0 and s["igmp"] == {"query": 0, "report": 0, "leave": 0}
    # without the whole-run control capture, h1 would look like a non-member: flooded
    (pcaps / "h1-eth0.control.pcap").unlink()
    assert wire.analyse_run(tmp_path)["flooded_frames"] == 3


# ---- the report -------------------------------------------------------------------------
def _set_windows(root: Path, lengths: dict[str, float]) -> None:
    """Give every run of the synthetic campaign a capture window of its mode's length."""
    for run in root.iterdir():
        f = run / "wire" / "summary.json"
        if not f.is_file():
            continue
        mode = json.loads((run / "config.json").read_text())["mode"]
        s = json.loads(f.read_text())
        s["windows"] = _window_record(1000.0, 1000.0 + lengths[mode])
        s["duration_s"] = lengths[mode]
        f.write_text(json.dumps(s))


def test_report_names_the_window_and_gives_no_ratio_when_windows_differ(tmp_path: Path) -> None:
    root = write_campaign(tmp_path / "c", counts=(3,), seconds=5, pings_per_s=20)
    _set_windows(root, {"unicast": 5.0, "multicast": 5.0})
    same = analyse(load_campaign(root), n_boot=49).pairs[0]
    assert window_note(same) == ("5.0 s inside the measurement window, from 2.0 s after full "
                                 "discovery, both modes")
    assert wire_ratio(same, "wire_meta_share") is not None
    _set_windows(root, {"unicast": 5.0, "multicast": 3.0})
    analysis = analyse(load_campaign(root), n_boot=49)
    pair = analysis.pairs[0]
    assert window_note(pair).startswith("capture windows differ (lengths differ: unicast 5.0 s, "
                                        "multicast 3.0 s)")
    assert wire_ratio(pair, "wire_meta_share") is None
    assert wire_ratio(pair, "wire_host_fanout") is None or np.isfinite(
        wire_ratio(pair, "wire_host_fanout") or 0.0)  # kernel counters stay comparable
    text = sentence(pair)
    assert "capture windows of the two modes differ" in text and "× higher" not in text
    cell = verdict_table(analysis).iloc[0]["wire evidence"]
    assert "no multicast/unicast ratio" in cell
    from analysis.report import write_report

    md = write_report(analysis, tmp_path / "report").report.read_text()
    assert "- 3×3: capture windows differ (lengths differ" in md
    assert "Capture figures are per second of these capture windows" in md
