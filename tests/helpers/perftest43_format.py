"""RTI Perftest 4.3's stdout, generated from its printer's format strings.

Written from rtiperftest release 4.3, ``srcCppCommon/PerftestPrinter.cxx`` (the format
strings of the CSV, JSON and legacy printers) and ``srcCpp/perftest_cpp.cxx`` (which
printer call happens when, and the latency file). Perftest is a C++ program using
``fprintf``; the strings below are the same C formats with the length modifiers (``l``,
``ll``) dropped, which Python's ``%`` operator ignores anyway. One C quirk is kept:
``%14.0llu`` (the throughput summary's "Avg Samples/s") prints an empty field for 0.

A :class:`Printer` holds the printer's state (JSON separators, "summary header printed
once without intervals"); :func:`subscriber_output` and :func:`publisher_output` call it in
the order ``perftest_cpp.cxx`` does for one data length::

    >>> print(subscriber_output("csv", intervals=False, cpu=False, data_len=100,
    ...       rows=[], summary=TpSummary(100, 1000, 500, 0.4, 0, 0.0)), end="")
    Sample Size (Bytes), Total Samples, Avg Samples/s,    Avg Mbps, Lost Samples, Lost Samples (%)
                    100,          1000,           500,         0.4,            0,             0.00
"""

# printf-style on purpose: the strings are C formats, kept comparable with the printer.
# ruff: noqa: UP031
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from experiments.perftest_output import PerftestOutput

US = "μs"
FORMATS = ("csv", "json", "legacy")


@dataclass
class TpInterval:
    """One subscriber interval row: cumulative samples, this second's samples/s and
    Mbps, their running means, cumulative losses."""

    packets: int
    per_s: int
    per_s_ave: float
    mbps: float
    mbps_ave: float
    lost: int
    lost_percent: float
    cpu: float = 0.0


@dataclass
class TpSummary:
    length: int
    packets: int
    per_s: int
    mbps: float
    lost: int
    lost_percent: float
    cpu: float = 0.0


@dataclass
class LatInterval:
    latency: int
    ave: float
    std: float
    min: int
    max: int
    cpu: float = 0.0


@dataclass
class LatSummary:
    length: int
    ave: float
    std: float
    min: int
    max: int
    p50: int
    p90: int
    p99: int
    p9999: int
    p999999: int
    cpu: float = 0.0


def _u0(width: int, v: int) -> str:
    """C's ``%<width>.0llu``: precision 0 prints no digit for 0."""
    return " " * width if v == 0 else "%*d" % (width, v)


@dataclass
class Printer:
    """Perftest 4.3's printer for one format; ``text`` collects what it printed."""

    fmt: str
    intervals: bool = True
    headers: bool = True
    cpu: bool = False
    data_len: int = 100
    text: str = ""
    _json_initialized: bool = field(default=False, repr=False)
    _json_first_interval: bool = field(default=False, repr=False)
    _summary_headers: bool = field(default=True, repr=False)

    def _w(self, s: str) -> None:
        self.text += s

    # -- JSON brackets ---------------------------------------------------------------
    def initial_output(self) -> None:
        if self.fmt == "json":
            self._w('{"perftest":\n\t[\n\t\t{\n')

    def final_output(self) -> None:
        if self.fmt == "json":
            self._w("\n\t]\n}\n")

    # -- headers -----------------------------------------------------------------------
    def _cpu_title(self) -> None:
        if self.cpu:
            self._w(", CPU (%)")
        self._w("\n")

    def _json_header(self) -> None:
        if self._json_initialized:
            self._w(",\n\t\t{\n")
        else:
            self._json_initialized = True
        self._w('\t\t\t"length":%d,\n' % self.data_len)
        if self.intervals:
            self._w('\t\t\t"intervals":[\n')
            self._json_first_interval = True

    def latency_header(self) -> None:
        if self.fmt == "csv":
            if self.headers and self.intervals:
                self._w("\nIntervals One-Way Latency for %d Bytes:\n" % self.data_len)
                self._w(f"Length (Bytes), Latency ({US}), Ave ({US}), Std ({US}), Min ({US}), "
                        f"Max ({US})")
                self._cpu_title()
        elif self.fmt == "json":
            self._json_header()
        elif self.headers and self.intervals:
            self._w("\n\n********** New data length is %d\n" % self.data_len)

    def throughput_header(self) -> None:
        if self.fmt == "csv":
            if self.headers and self.intervals:
                self._w("\nInterval Throughput for %d Bytes:\n" % self.data_len)
                self._w("Length (Bytes), Total Samples,  Samples/s, Avg Samples/s,     Mbps,"
                        "  Avg Mbps, Lost Samples, Lost Samples (%)")
                self._cpu_title()
        elif self.fmt == "json":
            self._json_header()
        elif self.headers and self.intervals:
            self._w("\n\n********** New data length is %d\n" % self.data_len)

    # -- rows --------------------------------------------------------------------------
    def _cpu_csv(self, cpu: float) -> None:
        if self.cpu:
            self._w(",%8.2f" % cpu)
        self._w("\n")

    def _cpu_json(self, indent: str, cpu: float) -> None:
        if self.cpu:
            self._w(',\n%s"CPU": %1.2f' % (indent, cpu))

    def _cpu_legacy(self, cpu: float) -> None:
        if self.cpu:
            self._w(" CPU %1.2f (%%)" % cpu)
        self._w("\n")

    def _json_separator(self) -> None:
        if self._json_first_interval:
            self._json_first_interval = False
        else:
            self._w(",")

    def latency_interval(self, r: LatInterval) -> None:
        if self.fmt == "csv":
            self._w("%14d,%13d,%9.0f,%9.1f,%9d,%9d"
                    % (self.data_len, r.latency, r.ave, r.std, r.min, r.max))
            self._cpu_csv(r.cpu)
        elif self.fmt == "json":
            self._json_separator()
            self._w('\n\t\t\t\t{\n\t\t\t\t\t"latency": %d,\n\t\t\t\t\t"latency_ave": %1.2f,\n'
                    '\t\t\t\t\t"latency_std": %1.2f,\n\t\t\t\t\t"latency_min": %d,\n'
                    '\t\t\t\t\t"latency_max": %d' % (r.latency, r.ave, r.std, r.min, r.max))
            self._cpu_json("\t\t\t\t\t", r.cpu)
            self._w("\n\t\t\t\t}")
        else:
            self._w(f"One-Way Latency: %6d {US} Ave %6.0f {US} Std %6.1f {US} Min %6d {US}"
                    f" Max %6d {US}" % (r.latency, r.ave, r.std, r.min, r.max))
            self._cpu_legacy(r.cpu)

    def latency_summary(self, s: LatSummary) -> None:
        if self.fmt == "csv":
            if self._summary_headers and self.headers:
                if not self.intervals:
                    self._summary_headers = False
                if self.intervals:
                    self._w("\nOne-way Latency Summary:\n")
                self._w(f"Sample Size (Bytes), Ave ({US}), Std ({US}), Min ({US}), Max ({US}), "
                        f"50% ({US}), 90% ({US}), 99% ({US}), 99.99% ({US}), 99.9999% ({US})")
                self._cpu_title()
            self._w("%19d,%9.0f,%9.1f,%9d,%9d,%9d,%9d,%9d,%12d,%14d"
                    % (s.length, s.ave, s.std, s.min, s.max, s.p50, s.p90, s.p99, s.p9999,
                       s.p999999))
            self._cpu_csv(s.cpu)
        elif self.fmt == "json":
            if self.intervals:
                self._w("\n\t\t\t],\n")
            self._w('\t\t\t"summary":{\n\t\t\t\t"latency_ave": %1.2f,\n'
                    '\t\t\t\t"latency_std": %1.2f,\n\t\t\t\t"latency_min": %d,\n'
                    '\t\t\t\t"latency_max": %d,\n\t\t\t\t"latency_50": %d,\n'
                    '\t\t\t\t"latency_90": %d,\n\t\t\t\t"latency_99": %d,\n'
                    '\t\t\t\t"latency_99.99": %d,\n\t\t\t\t"latency_99.9999": %d'
                    % (s.ave, s.std, s.min, s.max, s.p50, s.p90, s.p99, s.p9999, s.p999999))
            self._cpu_json("\t\t\t\t", s.cpu)
            self._w("\n\t\t\t}\n\t\t}")
        else:
            self._w(f"Length: %5d Latency: Ave %6.0f {US} Std %6.1f {US} Min %6d {US} Max %6d {US}"
                    f" 50%% %6d {US} 90%% %6d {US} 99%% %6d {US} 99.99%% %6d {US}"
                    f" 99.9999%% %6d {US}"
                    % (s.length, s.ave, s.std, s.min, s.max, s.p50, s.p90, s.p99, s.p9999,
                       s.p999999))
            self._cpu_legacy(s.cpu)

    def throughput_interval(self, r: TpInterval) -> None:
        if self.fmt == "csv":
            self._w("%14d,%14d,%11d,%14.0f,%9.1f,%10.1f, %12d, %16.2f"
                    % (self.data_len, r.packets, r.per_s, r.per_s_ave, r.mbps, r.mbps_ave,
                       r.lost, r.lost_percent))
            self._cpu_csv(r.cpu)
        elif self.fmt == "json":
            self._json_separator()
            self._w('\n\t\t\t\t{\n\t\t\t\t\t"length": %d,\n\t\t\t\t\t"packets": %d,\n'
                    '\t\t\t\t\t"packets/s": %d,\n\t\t\t\t\t"packets/s_ave": %1.2f,\n'
                    '\t\t\t\t\t"mbps": %1.1f,\n\t\t\t\t\t"mbps_ave": %1.1f,\n'
                    '\t\t\t\t\t"lost": %d,\n\t\t\t\t\t"lost_percent": %1.2f'
                    % (self.data_len, r.packets, r.per_s, r.per_s_ave, r.mbps, r.mbps_ave,
                       r.lost, r.lost_percent))
            self._cpu_json("\t\t\t\t\t", r.cpu)
            self._w("\n\t\t\t\t}")
        else:
            self._w("Packets: %8d  Packets/s: %7d  Packets/s(ave): %7.0f  Mbps: %7.1f  "
                    "Mbps(ave): %7.1f  Lost: %5d (%1.2f%%)"
                    % (r.packets, r.per_s, r.per_s_ave, r.mbps, r.mbps_ave, r.lost,
                       r.lost_percent))
            self._cpu_legacy(r.cpu)

    def throughput_summary(self, s: TpSummary) -> None:
        if self.fmt == "csv":
            if self._summary_headers and self.headers:
                if not self.intervals:
                    self._summary_headers = False
                if self.intervals:
                    self._w("\nThroughput Summary:\n")
                self._w("Sample Size (Bytes), Total Samples, Avg Samples/s,    Avg Mbps, "
                        "Lost Samples, Lost Samples (%)")
                self._cpu_title()
            self._w("%19d,%14d,%s,%12.1f, %12d, %16.2f"
                    % (s.length, s.packets, _u0(14, s.per_s), s.mbps, s.lost, s.lost_percent))
            self._cpu_csv(s.cpu)
        elif self.fmt == "json":
            if self.intervals:
                self._w("\t\t\t],\n")
            self._w('\t\t\t"summary":{\n\t\t\t\t"packets": %d,\n\t\t\t\t"packets/sAve": %d,\n'
                    '\t\t\t\t"mbpsAve": %1.1f,\n\t\t\t\t"lost": %d,\n'
                    '\t\t\t\t"lostPercent": %1.2f'
                    % (s.packets, s.per_s, s.mbps, s.lost, s.lost_percent))
            self._cpu_json("\t\t\t\t", s.cpu)
            self._w("\n\t\t\t}\n\t\t}")
        else:
            self._w("Length: %5d  Packets: %8d  Packets/s(ave): %7d  Mbps(ave): %7.1f  "
                    "Lost: %5d (%1.2f%%)"
                    % (s.length, s.packets, s.per_s, s.mbps, s.lost, s.lost_percent))
            self._cpu_legacy(s.cpu)


def subscriber_output(fmt: str, intervals: bool, cpu: bool, data_len: int,
                      rows: list[TpInterval], summary: TpSummary, headers: bool = True) -> str:
    """A subscriber's stdout for one data length, in perftest_cpp.cxx's order: brackets at
    "Waiting for data", the header at the first sample, one row per second (only with
    intervals on), the summary at the last FINISHED, the closing brackets."""
    p = Printer(fmt, intervals=intervals, headers=headers, cpu=cpu, data_len=data_len)
    p.initial_output()
    p.throughput_header()
    if intervals:
        for r in rows:
            p.throughput_interval(r)
    p.throughput_summary(summary)
    p.final_output()
    return p.text


def publisher_output(fmt: str, intervals: bool, cpu: bool, data_len: int,
                     rows: list[LatInterval], summary: LatSummary | None,
                     headers: bool = True) -> str:
    """Publisher 0's stdout (``summary``), or another publisher's (``summary=None``: only
    the JSON brackets): the header at the first pong, one row per later pong."""
    p = Printer(fmt, intervals=intervals, headers=headers, cpu=cpu, data_len=data_len)
    p.initial_output()
    if summary is not None:
        p.latency_header()
        if intervals:
            for r in rows:
                p.latency_interval(r)
        p.latency_summary(summary)
    p.final_output()
    return p.text


def latency_file(blocks: list[list[int]]) -> str:
    """The 4.1+ ``-latencyFile``: per data length (appended), a header, ``i, v`` rows in
    arrival order and a blank line."""
    out = ""
    for values in blocks:
        out += "Sample Number, Value\n"
        out += "".join("%d, %d\n" % (i, v) for i, v in enumerate(values))
        out += "\n"
    return out


# ---- sample data for the fixtures -------------------------------------------------------

def sample_throughput(data_len: int = 100, cpu: bool = False
                      ) -> tuple[list[TpInterval], TpSummary]:
    """Three seconds of a subscriber with a few losses, the figures as perftest_cpp.cxx
    computes them (running means, Mbps from bytes, summary over the whole span)."""
    per_s = [812345, 790001, 805432]
    lost = [0, 3012, 5210]
    rows: list[TpInterval] = []
    total, ave = 0, 0.0
    for i, n in enumerate(per_s):
        total += n
        ave += (n - ave) / (i + 1)
        pct = lost[i] * 100.0 / (total + lost[i])
        rows.append(TpInterval(total, n, ave, n * data_len * 8 / 1e6, ave * data_len * 8 / 1e6,
                               lost[i], pct, 31.5 + i if cpu else 0.0))
    time_us = 3_004_117
    packets = total + 1200  # the swallowed first partial second
    summary = TpSummary(data_len, packets, packets * 1_000_000 // time_us,
                        packets * data_len * 1e6 / time_us * 8 / 1e6, lost[-1],
                        lost[-1] * 100.0 / (packets + lost[-1]),
                        sum(r.cpu for r in rows) / len(rows) if cpu else 0.0)
    return rows, summary


def sample_latency(data_len: int = 100, cpu: bool = False
                   ) -> tuple[list[LatInterval], LatSummary, list[int]]:
    """Pongs after the discarded first one: interval rows, the summary and the values in
    arrival order (the latency file)."""
    values = [41, 40, 43, 45, 42, 40, 44, 41]
    rows: list[LatInterval] = []
    s = sq = 0
    for i, v in enumerate(values):
        n = i + 1
        s += v
        sq += v * v
        ave = s / n
        std = max(sq / n - ave * ave, 0.0) ** 0.5
        rows.append(LatInterval(v, ave, std, min(values[:n]), max(values[:n]),
                                10.25 + i if cpu else 0.0))
    srt = sorted(values)
    n = len(srt)
    summary = LatSummary(data_len, rows[-1].ave, rows[-1].std, srt[0], srt[-1],
                         srt[n * 50 // 100], srt[n * 90 // 100], srt[n * 99 // 100],
                         srt[int(n * (9999.0 / 10000))], srt[int(n * (999999.0 / 1000000))],
                         sum(r.cpu for r in rows) / n if cpu else 0.0)
    return rows, summary, values


def rerender(out: PerftestOutput, fmt: str, intervals: bool, cpu: bool) -> str:
    """The generator's text for the figures ``out`` parsed (one process's stdout, with
    the given options): equal to the parsed text only when its layout is 4.3's to the
    byte, which is how the native agent's output is checked."""
    from experiments.perftest_output import CPU
    length = out.data_length or 0
    if out.role == "subscriber":
        rows = [TpInterval(int(r["Total Samples"]), int(r["Samples/s"]), r["Ave Samples/s"],
                               r["Mbps"], r["Ave Mbps"], int(r["Lost Samples"]),
                               r["Lost Samples (%)"], r.get(CPU, 0.0))
                for r in out.interval_dicts()]
        s = out.summary
        summ = TpSummary(length, int(s["Total Samples"]), int(s["Ave Samples/s"]),
                             s["Ave Mbps"], int(s["Lost Samples"]), s["Lost Samples (%)"],
                             s.get(CPU, 0.0))
        return subscriber_output(fmt, intervals, cpu, length, rows, summ)
    if out.role == "publisher":
        lrows = [LatInterval(int(r["Latency (us)"]), r["Ave (us)"], r["Std (us)"],
                                 int(r["Min (us)"]), int(r["Max (us)"]), r.get(CPU, 0.0))
                 for r in out.interval_dicts()]
        s = out.summary
        lsum = LatSummary(length, s["Ave (us)"], s["Std (us)"], int(s["Min (us)"]),
                              int(s["Max (us)"]), int(s["50% (us)"]), int(s["90% (us)"]),
                              int(s["99% (us)"]), int(s["99.99% (us)"]),
                              int(s["99.9999% (us)"]), s.get(CPU, 0.0))
        return publisher_output(fmt, intervals, cpu, length, lrows, lsum)
    return publisher_output(fmt, intervals, cpu, 100, [], None)


def fixture_name(role: str, fmt: str, intervals: bool, cpu: bool) -> str:
    return f"rti43_{role}_{fmt}{'' if intervals else '_noint'}{'_cpu' if cpu else ''}.txt"


def all_fixtures() -> dict[str, str]:
    """Every combination: {subscriber, publisher 0} x csv/json/legacy x intervals on/off x
    -cpu on/off, another publisher's JSON, and the latency file."""
    out: dict[str, str] = {}
    for fmt in FORMATS:
        for intervals in (True, False):
            for cpu in (True, False):
                rows, summ = sample_throughput(cpu=cpu)
                out[fixture_name("sub", fmt, intervals, cpu)] = subscriber_output(
                    fmt, intervals, cpu, 100, rows, summ)
                lrows, lsum, _ = sample_latency(cpu=cpu)
                out[fixture_name("pub0", fmt, intervals, cpu)] = publisher_output(
                    fmt, intervals, cpu, 100, lrows, lsum)
    # Other publishers print only the JSON brackets (nothing in csv and legacy).
    out[fixture_name("pub1", "json", True, False)] = publisher_output("json", True, False, 100,
                                                                      [], None)
    out["rti43_latency_file.txt"] = latency_file([sample_latency()[2], [52, 50, 51]])
    return out


if __name__ == "__main__":
    # Regenerate the checked-in fixtures: python tests/helpers/perftest43_format.py
    from pathlib import Path

    fix = Path(__file__).resolve().parents[1] / "agents" / "fixtures"
    for name, text in all_fixtures().items():
        (fix / name).write_text(text)
    print(f"wrote {len(all_fixtures())} fixtures to {fix}")
