"""The Perftest output parser on recorded native-agent outputs and on fixtures written
from RTI Perftest's documented printf formats (PerftestPrinter.cxx)."""

from __future__ import annotations

from pathlib import Path

import pytest

from experiments.perftest_output import (
    PerftestParseError,
    parse_latency_file,
    parse_perftest_output,
)

FIX = Path(__file__).parent / "fixtures"

TP_INTERVAL = ["Length (Bytes)", "Total Samples", "Samples/s", "Ave Samples/s", "Mbps",
               "Ave Mbps", "Lost Samples", "Lost Samples (%)"]
TP_SUMMARY = ["Length (Bytes)", "Total Samples", "Ave Samples/s", "Ave Mbps", "Lost Samples",
              "Lost Samples (%)"]
LAT_INTERVAL = ["Length (Bytes)", "Latency (us)", "Ave (us)", "Std (us)", "Min (us)", "Max (us)"]
LAT_SUMMARY = ["Length (Bytes)", "Ave (us)", "Std (us)", "Min (us)", "Max (us)", "50% (us)",
               "90% (us)", "99% (us)", "99.99% (us)", "99.9999% (us)"]


def load(name: str) -> str:
    return (FIX / name).read_text()


def test_native_subscriber_csv_with_cpu() -> None:
    out = parse_perftest_output(load("native_sub_csv.txt"))
    assert out.role == "subscriber" and out.format == "csv" and out.data_length == 200
    assert out.interval_columns == [*TP_INTERVAL, "CPU (%)"]
    assert list(out.summary) == [*TP_SUMMARY, "CPU (%)"]
    assert len(out.intervals) >= 1
    totals = out.column("Total Samples")
    assert totals == sorted(totals)  # cumulative
    assert out.summary["Total Samples"] >= totals[-1]
    assert out.summary["Lost Samples"] == 0


@pytest.mark.parametrize("fmt", ["csv", "json", "legacy"])
def test_three_formats_give_the_same_tables(fmt: str) -> None:
    sub = parse_perftest_output(load(f"native_sub_{fmt}.txt"))
    pub = parse_perftest_output(load(f"native_pub0_{fmt}.txt"))
    assert sub.format == fmt and pub.format == fmt
    assert sub.role == "subscriber" and pub.role == "publisher"
    assert sub.interval_columns[: len(TP_INTERVAL)] == TP_INTERVAL
    assert [c for c in sub.summary if c != "CPU (%)"] == TP_SUMMARY
    assert [c for c in pub.interval_columns if c != "CPU (%)"] == LAT_INTERVAL
    assert [c for c in pub.summary if c != "CPU (%)"] == LAT_SUMMARY
    assert sub.data_length == 200 and pub.data_length == 200
    lat = pub.column("Latency (us)")
    assert len(lat) >= 10
    assert pub.summary["Min (us)"] <= pub.summary["50% (us)"] <= pub.summary["Max (us)"]
    assert min(lat) >= pub.summary["Min (us)"] and max(lat) <= pub.summary["Max (us)"]


def test_no_print_intervals_has_only_the_summary() -> None:
    sub = parse_perftest_output(load("native_sub_csv-noint.txt"))
    pub = parse_perftest_output(load("native_pub0_csv-noint.txt"))
    assert sub.intervals == [] and list(sub.summary) == TP_SUMMARY
    assert pub.intervals == [] and list(pub.summary) == LAT_SUMMARY


def test_real_rti_perftest_csv_with_banners_avg_and_micro_sign() -> None:
    sub = parse_perftest_output(load("rti_sub_csv.txt"))
    assert sub.role == "subscriber"
    assert sub.interval_columns[3] == "Avg Samples/s"  # names kept exactly as printed
    assert sub.column("Samples/s") == [812345, 812345, 812345]
    assert sub.summary["Total Samples"] == 2437035 and sub.summary["CPU (%)"] == 31.2
    pub = parse_perftest_output(load("rti_pub0_csv.txt"))
    assert pub.role == "publisher"
    assert pub.interval_columns[1] == "Latency (μs)"
    assert pub.column("Latency (μs)") == [40, 41, 42, 43]
    assert pub.summary["99.9999% (μs)"] == 45


def test_empty_output_of_a_publisher_other_than_0() -> None:
    out = parse_perftest_output("")
    assert out.role == "unknown" and out.format == "empty" and out.summary == {}


def test_malformed_header_is_an_error_naming_it() -> None:
    with pytest.raises(PerftestParseError, match="Frobs"):
        parse_perftest_output("Length (Bytes), Frobs\n1, 2\n")


def test_json_unknown_key_is_an_error() -> None:
    with pytest.raises(PerftestParseError, match="bogus"):
        parse_perftest_output('{"perftest":[{"length":100,"summary":{"bogus": 1}}]}')


def test_latency_file() -> None:
    assert parse_latency_file("12.5\n13.0\n\n") == [12.5, 13.0]
    with pytest.raises(PerftestParseError, match="line 2"):
        parse_latency_file("1\nx\n")
