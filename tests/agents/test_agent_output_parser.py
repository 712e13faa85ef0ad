"""The Perftest output parser on RTI Perftest 4.3's output, generated from its printer's
format strings (tests/helpers/perftest43_format.py), in every combination of format,
intervals, -cpu and role; and on outputs of the native agent from before it printed 4.3's
strings (old run directories must stay readable)."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from experiments.perftest_output import (
    CPU,
    LAT_INTERVAL,
    LAT_SUMMARY,
    TP_INTERVAL,
    TP_SUMMARY,
    PerftestParseError,
    parse_latency_file,
    parse_latency_file_blocks,
    parse_perftest_output,
)
from tests.helpers import perftest43_format as p43

FIX = Path(__file__).parent / "fixtures"
COMBOS = list(itertools.product(p43.FORMATS, (True, False), (True, False)))


def load(name: str) -> str:
    return (FIX / name).read_text()


def printed(spec: str, x: float) -> float:
    """``x`` as the printer shows it (``spec`` a C/Python format such as ``%1.2f``)."""
    return float(spec % x)


def test_checked_in_fixtures_are_the_generators_output() -> None:
    gen = p43.all_fixtures()
    assert len(gen) == 2 * len(COMBOS) + 2
    for name, text in gen.items():
        assert load(name) == text, f"{name}: run python tests/helpers/perftest43_format.py"
    on_disk = {p.name for p in FIX.glob("rti*")}
    assert on_disk == set(gen), on_disk ^ set(gen)


@pytest.mark.parametrize(("fmt", "intervals", "cpu"), COMBOS)
def test_rti43_subscriber_every_summary_figure(fmt: str, intervals: bool, cpu: bool) -> None:
    rows, summ = p43.sample_throughput(cpu=cpu)
    out = parse_perftest_output(load(p43.fixture_name("sub", fmt, intervals, cpu)))
    assert (out.role, out.format, out.kind, out.data_length) == ("subscriber", fmt,
                                                                "throughput", 100)
    extra = [CPU] if cpu else []
    assert list(out.summary) == [*TP_SUMMARY, *extra]
    expected = {"Length (Bytes)": 100, "Total Samples": summ.packets,
                "Ave Samples/s": summ.per_s,
                "Ave Mbps": printed("%1.1f", summ.mbps), "Lost Samples": summ.lost,
                "Lost Samples (%)": printed("%1.2f", summ.lost_percent)}
    if cpu:
        expected[CPU] = printed("%1.2f", summ.cpu)
    assert out.summary == expected
    if not intervals:
        assert out.intervals == []
        return
    assert out.interval_columns == [*TP_INTERVAL, *extra]
    assert out.column("Total Samples") == [r.packets for r in rows]
    assert out.column("Samples/s") == [r.per_s for r in rows]
    assert out.column("Mbps") == [printed("%1.1f", r.mbps) for r in rows]
    assert out.column("Lost Samples") == [r.lost for r in rows]
    assert out.column("Lost Samples (%)") == [printed("%1.2f", r.lost_percent) for r in rows]
    if cpu:
        assert out.column(CPU) == [printed("%1.2f", r.cpu) for r in rows]


@pytest.mark.parametrize(("fmt", "intervals", "cpu"), COMBOS)
def test_rti43_publisher0_every_summary_figure(fmt: str, intervals: bool, cpu: bool) -> None:
    rows, summ, _ = p43.sample_latency(cpu=cpu)
    out = parse_perftest_output(load(p43.fixture_name("pub0", fmt, intervals, cpu)))
    assert (out.role, out.format, out.kind, out.data_length) == ("publisher", fmt, "latency",
                                                                100)
    extra = [CPU] if cpu else []
    assert list(out.summary) == [*LAT_SUMMARY, *extra]
    ave_spec = "%1.2f" if fmt == "json" else "%1.0f"
    std_spec = "%1.2f" if fmt == "json" else "%1.1f"
    expected = {"Length (Bytes)": 100, "Ave (us)": printed(ave_spec, summ.ave),
                "Std (us)": printed(std_spec, summ.std), "Min (us)": summ.min,
                "Max (us)": summ.max, "50% (us)": summ.p50, "90% (us)": summ.p90,
                "99% (us)": summ.p99, "99.99% (us)": summ.p9999, "99.9999% (us)": summ.p999999}
    if cpu:
        expected[CPU] = printed("%1.2f", summ.cpu)
    assert out.summary == expected
    if not intervals:
        assert out.intervals == []
        return
    assert out.interval_columns == [*LAT_INTERVAL, *extra]
    assert out.column("Latency (us)") == [r.latency for r in rows]
    assert out.column("Max (us)") == [r.max for r in rows]
    assert out.column("Std (us)") == [printed(std_spec, r.std) for r in rows]


def test_rti43_other_publishers_print_nothing_to_read() -> None:
    out = parse_perftest_output(load("rti43_pub1_json.txt"))
    assert out.role == "unknown" and out.summary == {} and out.intervals == []
    for text in ("", "RTI Perftest 4.3.0\n"):
        assert parse_perftest_output(text).format == "empty"


@pytest.mark.parametrize(("fmt", "intervals", "cpu"), COMBOS)
def test_rerender_reproduces_every_fixture(fmt: str, intervals: bool, cpu: bool) -> None:
    """The parsed figures, printed again by the generator, give the text back byte for
    byte: what the native agent's layout test relies on."""
    for role in ("sub", "pub0"):
        text = load(p43.fixture_name(role, fmt, intervals, cpu))
        assert p43.rerender(parse_perftest_output(text), fmt, intervals, cpu) == text


def test_rerender_notices_a_changed_field_width() -> None:
    text = load("rti43_sub_csv.txt")
    wider = text.replace("           100,", "            100,", 1)
    assert p43.rerender(parse_perftest_output(wider), "csv", True, False) != wider


def test_zero_avg_samples_is_printed_empty_by_perftest() -> None:
    # C's %14.0llu prints nothing for 0: a subscriber that received nothing.
    text = p43.subscriber_output("csv", False, False, 100, [],
                                 p43.TpSummary(100, 0, 0, 0.0, 0, 0.0))
    assert ",              ," in text
    out = parse_perftest_output(text)
    assert out.summary["Ave Samples/s"] == 0 and out.summary["Total Samples"] == 0


def test_banners_and_progress_lines_around_the_tables_are_ignored() -> None:
    text = ("RTI Perftest 4.3.0 (RTI Connext DDS 7.1.0)\n\nWaiting for data ...\n"
            + load("rti43_sub_csv_cpu.txt") + "Finishing test...\nTest ended.\n")
    out = parse_perftest_output(text)
    assert out.summary["Total Samples"] == p43.sample_throughput()[1].packets
    assert len(out.intervals) == 3


def test_latency_file_43_blocks_and_old_layout() -> None:
    values = p43.sample_latency()[2]
    text = load("rti43_latency_file.txt")
    assert parse_latency_file_blocks(text) == [[float(v) for v in values], [52.0, 50.0, 51.0]]
    assert parse_latency_file(text) == [*map(float, values), 52.0, 50.0, 51.0]
    assert parse_latency_file("12.5\n13.0\n\n") == [12.5, 13.0]  # the agent before 4.3's layout
    with pytest.raises(PerftestParseError, match="line 3"):
        parse_latency_file("Sample Number, Value\n0, 1\n1, x\n")


# ---- the native agent before it printed 4.3's strings (old run directories) -------------

def test_native_pre43_subscriber_csv_with_cpu() -> None:
    out = parse_perftest_output(load("native_sub_csv.txt"))
    assert out.role == "subscriber" and out.format == "csv" and out.data_length == 200
    assert out.interval_columns == [*TP_INTERVAL, CPU]
    assert list(out.summary) == [*TP_SUMMARY, CPU]
    totals = out.column("Total Samples")
    assert len(totals) >= 1 and totals == sorted(totals)  # cumulative
    assert out.summary["Total Samples"] >= totals[-1]
    assert out.summary["Lost Samples"] == 0


@pytest.mark.parametrize("fmt", ["csv", "json", "legacy"])
def test_native_pre43_three_formats_give_the_same_tables(fmt: str) -> None:
    sub = parse_perftest_output(load(f"native_sub_{fmt}.txt"))
    pub = parse_perftest_output(load(f"native_pub0_{fmt}.txt"))
    assert sub.format == fmt and pub.format == fmt
    assert sub.role == "subscriber" and pub.role == "publisher"
    assert sub.interval_columns[: len(TP_INTERVAL)] == TP_INTERVAL
    assert [c for c in sub.summary if c != CPU] == TP_SUMMARY
    assert [c for c in pub.interval_columns if c != CPU] == LAT_INTERVAL
    assert [c for c in pub.summary if c != CPU] == LAT_SUMMARY
    assert sub.data_length == 200 and pub.data_length == 200
    lat = pub.column("Latency (us)")
    assert len(lat) >= 10
    assert pub.summary["Min (us)"] <= pub.summary["50% (us)"] <= pub.summary["Max (us)"]
    assert min(lat) >= pub.summary["Min (us)"] and max(lat) <= pub.summary["Max (us)"]


def test_native_pre43_no_print_intervals_has_only_the_summary() -> None:
    sub = parse_perftest_output(load("native_sub_csv-noint.txt"))
    pub = parse_perftest_output(load("native_pub0_csv-noint.txt"))
    assert sub.intervals == [] and list(sub.summary) == TP_SUMMARY
    assert pub.intervals == [] and list(pub.summary) == LAT_SUMMARY


def test_malformed_header_is_an_error_naming_it() -> None:
    with pytest.raises(PerftestParseError, match="Frobs"):
        parse_perftest_output("Length (Bytes), Frobs\n1, 2\n")


def test_json_unknown_key_is_an_error() -> None:
    with pytest.raises(PerftestParseError, match="bogus"):
        parse_perftest_output('{"perftest":[{"length":100,"summary":{"bogus": 1}}]}')
