"""Parse the stdout of an RTI Perftest-compatible agent into typed tables.

Every agent (native Cyclone agent, real RTI Perftest, any future one) prints Perftest's
tables; this module is the one place that reads them. It reads Perftest 4.x's output
(release 4.3's ``PerftestPrinter.cxx``: ``Sample Size (Bytes)``, ``Avg``, ``μs``, JSON
``"CPU"``, legacy ``One-Way Latency:``) and the earlier strings (3.x and the native agent
before it printed 4.3's: ``Length (Bytes)``, ``Ave``, ``us``), in the csv, json and legacy
formats, with or without interval rows (``-noPrintIntervals``) and ``-cpu``.

Downstream code sees one set of column names whatever the format, version and agent
(:data:`TP_INTERVAL`, :data:`TP_SUMMARY`, :data:`LAT_INTERVAL`, :data:`LAT_SUMMARY`, plus
``CPU (%)`` with ``-cpu``): the ASCII names ``Length (Bytes)``, ``Ave ...`` and ``(us)``.

>>> out = parse_perftest_output('''
... Interval Throughput for 100 Bytes:
... Length (Bytes), Total Samples,  Samples/s, Avg Samples/s,     Mbps,  Avg Mbps, \
Lost Samples, Lost Samples (%)
...            100,        130422,     126464,        126464,    101.2,     101.2, 0, 0.00
...
... Throughput Summary:
... Sample Size (Bytes), Total Samples, Avg Samples/s,    Avg Mbps, Lost Samples, \
Lost Samples (%)
...                 100,        323520,        107867,        86.3,   0,    0.00
... ''')
>>> out.role, out.interval_columns[3], out.intervals[0][2], out.summary["Total Samples"]
('subscriber', 'Ave Samples/s', 126464, 323520)

Not read: ``-noOutputHeaders`` csv (rows without a header cannot be told apart) and
``-showSerializationTime`` columns of the legacy format.

Reference: rticommunity/rtiperftest ``srcCppCommon/PerftestPrinter.cxx`` and ``srcDoc/``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Literal

Number = int | float
Role = Literal["subscriber", "publisher", "unknown"]


class PerftestParseError(ValueError):
    """The text is not Perftest output in any known format."""


@dataclass
class PerftestOutput:
    """One process's tables.

    ``role`` is ``subscriber`` for throughput tables, ``publisher`` for latency tables
    (publisher 0), ``unknown`` when nothing was printed (other publishers).
    ``intervals`` are rows of numbers in the order of ``interval_columns``; ``summary``
    maps each summary column to its value (the last summary when several data lengths
    were run; all of them are in ``summaries``).
    """

    role: Role
    format: Literal["csv", "json", "legacy", "empty"]
    kind: Literal["throughput", "latency"] | None = None
    data_length: int | None = None
    interval_columns: list[str] = field(default_factory=list)
    intervals: list[list[Number]] = field(default_factory=list)
    summary: dict[str, Number] = field(default_factory=dict)
    summaries: list[dict[str, Number]] = field(default_factory=list)

    def column(self, name: str) -> list[Number]:
        """The values of one interval column, e.g. ``out.column("Samples/s")``."""
        try:
            i = self.interval_columns.index(name)
        except ValueError:
            raise KeyError(
                f"no interval column {name!r}; columns: {self.interval_columns}") from None
        return [row[i] for row in self.intervals]

    def interval_dicts(self) -> list[dict[str, Number]]:
        return [dict(zip(self.interval_columns, row, strict=False)) for row in self.intervals]


# ---- numbers -------------------------------------------------------------------------

_NUM = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$")


def _num(s: str) -> Number:
    s = s.strip()
    if not _NUM.match(s):
        raise ValueError(s)
    if re.fullmatch(r"[-+]?\d+", s):
        return int(s)
    return float(s)


def _numeric_row(line: str, width: int, blank_zero: int | None = None) -> list[Number] | None:
    """The numbers of a CSV row of ``width`` fields, or None. ``blank_zero``: the index of
    a field printed with C's ``%14.0llu`` (Perftest 4.x's summary "Avg Samples/s"), which
    prints nothing at all for 0."""
    parts = line.split(",")
    if len(parts) != width:
        return None
    if blank_zero is not None and parts[blank_zero].strip() == "" and parts[0].strip():
        parts[blank_zero] = "0"
    try:
        return [_num(p) for p in parts]
    except ValueError:
        return None


# ---- column names ----------------------------------------------------------------------

TP_INTERVAL = ["Length (Bytes)", "Total Samples", "Samples/s", "Ave Samples/s", "Mbps",
               "Ave Mbps", "Lost Samples", "Lost Samples (%)"]
TP_SUMMARY = ["Length (Bytes)", "Total Samples", "Ave Samples/s", "Ave Mbps", "Lost Samples",
              "Lost Samples (%)"]
LAT_INTERVAL = ["Length (Bytes)", "Latency (us)", "Ave (us)", "Std (us)", "Min (us)",
                "Max (us)"]
LAT_SUMMARY = ["Length (Bytes)", "Ave (us)", "Std (us)", "Min (us)", "Max (us)", "50% (us)",
               "90% (us)", "99% (us)", "99.99% (us)", "99.9999% (us)"]
CPU = "CPU (%)"


def canonical_column(name: str) -> str:
    """A printed column name → the one downstream code uses (4.x's ``Sample Size
    (Bytes)``, ``Avg`` and ``μs`` → ``Length (Bytes)``, ``Ave`` and ``us``).

    >>> canonical_column("Avg Samples/s"), canonical_column("99.99% (μs)")
    ('Ave Samples/s', '99.99% (us)')
    """
    name = name.strip()
    if name == "Sample Size (Bytes)":
        return "Length (Bytes)"
    if name.startswith("Avg "):
        name = "Ave " + name[4:]
    return name.replace("(μs)", "(us)")


# ---- CSV -----------------------------------------------------------------------------

_HEADER = re.compile(r"^\s*(Length|Sample Size) \(Bytes\),")


def _classify(columns: list[str]) -> tuple[str, bool]:
    """(kind, is_summary) of a CSV header (canonical names)."""
    if any(c.startswith("Latency (") for c in columns):
        return "latency", False
    if any(c.startswith("50% (") for c in columns):
        return "latency", True
    if "Samples/s" in columns:
        return "throughput", False
    if "Ave Samples/s" in columns:
        return "throughput", True
    raise PerftestParseError(f"unknown Perftest table header: {', '.join(columns)}")


def _parse_csv(lines: list[str]) -> PerftestOutput:
    out = PerftestOutput(role="unknown", format="csv")
    i = 0
    while i < len(lines):
        line = lines[i].strip()
        if not _HEADER.match(line):
            i += 1
            continue
        columns = [canonical_column(c) for c in line.split(",")]
        kind, is_summary = _classify(columns)
        blank = columns.index("Ave Samples/s") if is_summary and kind == "throughput" else None
        if out.kind is None:
            out.kind = kind  # type: ignore[assignment]
        i += 1
        rows: list[list[Number]] = []
        while i < len(lines):
            row = _numeric_row(lines[i], len(columns), blank)
            if row is None:
                if lines[i].strip() == "" and not rows:
                    i += 1
                    continue
                break
            rows.append(row)
            i += 1
        if is_summary:
            for row in rows:
                out.summaries.append(dict(zip(columns, row, strict=True)))
        else:
            out.interval_columns = columns
            out.intervals.extend(rows)
    return out


# ---- JSON ----------------------------------------------------------------------------

_JSON_TP_INTERVAL = {
    "length": "Length (Bytes)", "packets": "Total Samples", "packets/s": "Samples/s",
    "packets/s_ave": "Ave Samples/s", "mbps": "Mbps", "mbps_ave": "Ave Mbps",
    "lost": "Lost Samples", "lost_percent": "Lost Samples (%)", "CPU": CPU, "cpu": CPU,
}
_JSON_TP_SUMMARY = {
    "packets": "Total Samples", "packets/sAve": "Ave Samples/s", "mbpsAve": "Ave Mbps",
    "lost": "Lost Samples", "lostPercent": "Lost Samples (%)", "CPU": CPU, "cpu": CPU,
}
_JSON_LAT_INTERVAL = {
    "latency": "Latency (us)", "latency_ave": "Ave (us)", "latency_std": "Std (us)",
    "latency_min": "Min (us)", "latency_max": "Max (us)", "CPU": CPU, "cpu": CPU,
}
_JSON_LAT_SUMMARY = {
    "latency_ave": "Ave (us)", "latency_std": "Std (us)", "latency_min": "Min (us)",
    "latency_max": "Max (us)", "latency_50": "50% (us)", "latency_90": "90% (us)",
    "latency_99": "99% (us)", "latency_99.99": "99.99% (us)", "latency_99.9999": "99.9999% (us)",
    "serialize": "Serialization (us)", "deserialize": "Deserialization (us)",
    "total_s": "Total (us)", "CPU": CPU, "cpu": CPU,
}


def _map(d: dict[str, object], names: dict[str, str]) -> dict[str, Number]:
    out: dict[str, Number] = {}
    for k, v in d.items():
        if k not in names:
            raise PerftestParseError(f"unknown Perftest JSON key {k!r}")
        if not isinstance(v, int | float):
            raise PerftestParseError(f"Perftest JSON key {k!r} is not a number: {v!r}")
        out[names[k]] = v
    return out


def _parse_json(text: str) -> PerftestOutput:
    out = PerftestOutput(role="unknown", format="json")
    start = text.index('{"perftest"')
    if '"length"' not in text[start:]:
        # A publisher other than 0 prints only Perftest's brackets, which are not valid
        # JSON ('{"perftest": [ { ] }'): nothing to read.
        return out
    try:
        doc = json.loads(text[start:])
    except json.JSONDecodeError:
        try:
            doc = json.JSONDecoder().raw_decode(text[start:])[0]
        except json.JSONDecodeError as e:
            raise PerftestParseError(f"malformed Perftest JSON: {e}") from None
    for block in doc.get("perftest", []):
        length = block.get("length")
        summary = block.get("summary", {})
        intervals = block.get("intervals", [])
        is_latency = any(k.startswith("latency") for k in summary) or any(
            "latency" in iv for iv in intervals)
        out.kind = "latency" if is_latency else "throughput"
        iv_names = _JSON_LAT_INTERVAL if is_latency else _JSON_TP_INTERVAL
        for iv in intervals:
            row = _map(iv, iv_names)
            if is_latency:
                row = {"Length (Bytes)": length, **row}
            if not out.interval_columns:
                out.interval_columns = list(row)
            out.intervals.append([row.get(c, 0) for c in out.interval_columns])
        if summary:
            s = _map(summary, _JSON_LAT_SUMMARY if is_latency else _JSON_TP_SUMMARY)
            out.summaries.append({"Length (Bytes)": length, **s})
    return out


# ---- legacy --------------------------------------------------------------------------

_F = r"([-+]?\d+(?:\.\d+)?)"
_CPU = rf"(?:\s+CPU {_F} \(%\))?"
_LEG_TP_IV = re.compile(
    rf"^Packets:\s*{_F}\s+Packets/s:\s*{_F}\s+Packets/s\(ave\):\s*{_F}\s+Mbps:\s*{_F}\s+"
    rf"Mbps\(ave\):\s*{_F}\s+Lost:\s*{_F}\s+\({_F}%\){_CPU}\s*$")
_LEG_TP_SUM = re.compile(
    rf"^Length:\s*{_F}\s+Packets:\s*{_F}\s+Packets/s\(ave\):\s*{_F}\s+Mbps\(ave\):\s*{_F}\s+"
    rf"Lost:\s*{_F}\s+\({_F}%\){_CPU}\s*$")
_U = r"\s*(?:us|ns|μs)"
_LEG_LAT_IV = re.compile(
    rf"^One[- ][Ww]ay Latency:\s*{_F}{_U}\s+Ave\s+{_F}{_U}\s+Std\s+{_F}{_U}\s+Min\s+{_F}{_U}\s+"
    rf"Max\s+{_F}{_U}{_CPU}\s*$")
_LEG_LAT_SUM = re.compile(
    rf"^Length:\s*{_F}\s+Latency: Ave\s+{_F}{_U}\s+Std\s+{_F}{_U}\s+Min\s+{_F}{_U}\s+Max\s+{_F}{_U}"
    rf"\s+50%\s+{_F}{_U}\s+90%\s+{_F}{_U}\s+99%\s+{_F}{_U}\s+99\.99%\s+{_F}{_U}\s+"
    rf"99\.9999%\s+{_F}{_U}{_CPU}\s*$")
_LEG_LEN = re.compile(r"^\*+ New data length is (\d+)")

_TP_IV_COLS = TP_INTERVAL
_TP_SUM_COLS = TP_SUMMARY
_LAT_IV_COLS = LAT_INTERVAL
_LAT_SUM_COLS = LAT_SUMMARY


def _groups(m: re.Match[str], cols: list[str]) -> tuple[list[str], list[Number]]:
    vals = [_num(g) for g in m.groups() if g is not None]
    names = cols + ([CPU] if len(vals) > len(cols) else [])
    return names, vals


def _parse_legacy(lines: list[str]) -> PerftestOutput:
    out = PerftestOutput(role="unknown", format="legacy")
    length: int | None = None
    for raw in lines:
        line = raw.strip()
        if m := _LEG_LEN.match(line):
            length = int(m.group(1))
        elif m := _LEG_TP_IV.match(line):
            names, vals = _groups(m, _TP_IV_COLS[1:])
            out.kind = "throughput"
            out.interval_columns = ["Length (Bytes)", *names]
            out.intervals.append([length or 0, *vals])
        elif m := _LEG_LAT_IV.match(line):
            names, vals = _groups(m, _LAT_IV_COLS[1:])
            out.kind = "latency"
            out.interval_columns = ["Length (Bytes)", *names]
            out.intervals.append([length or 0, *vals])
        elif m := _LEG_TP_SUM.match(line):
            names, vals = _groups(m, _TP_SUM_COLS)
            out.kind = "throughput"
            out.summaries.append(dict(zip(names, vals, strict=True)))
        elif m := _LEG_LAT_SUM.match(line):
            names, vals = _groups(m, _LAT_SUM_COLS)
            out.kind = "latency"
            out.summaries.append(dict(zip(names, vals, strict=True)))
    return out


# ---- entry point ---------------------------------------------------------------------

def detect_format(text: str) -> Literal["csv", "json", "legacy", "empty"]:
    if '{"perftest"' in text:
        return "json"
    if re.search(r"^\s*(Length|Sample Size) \(Bytes\),", text, re.M):
        return "csv"
    if re.search(r"^\s*(Packets:|One[- ][Ww]ay Latency:|Length:\s*\d+\s+(Packets|Latency):)",
                 text, re.M):
        return "legacy"
    return "empty"


def parse_perftest_output(text: str) -> PerftestOutput:
    """Parse one process's stdout (any of Perftest's csv, json and legacy formats).

    Lines that are not part of a table (banners, progress, as real Perftest prints on
    stdout) are ignored. Raises :class:`PerftestParseError` on a malformed table.
    """
    fmt = detect_format(text)
    lines = text.splitlines()
    if fmt == "json":
        out = _parse_json(text)
    elif fmt == "csv":
        out = _parse_csv(lines)
    elif fmt == "legacy":
        out = _parse_legacy(lines)
    else:
        return PerftestOutput(role="unknown", format="empty")
    if out.summaries:
        out.summary = out.summaries[-1]
    if out.kind is not None:
        out.role = "subscriber" if out.kind == "throughput" else "publisher"
    lengths = [r[0] for r in out.intervals if out.interval_columns[:1] == ["Length (Bytes)"]]
    if "Length (Bytes)" in out.summary:
        out.data_length = int(out.summary["Length (Bytes)"])
    elif lengths:
        out.data_length = int(lengths[-1])
    return out


def parse_latency_file(text: str) -> list[float]:
    """A ``-latencyFile``: one-way latencies in µs, in arrival order.

    Reads Perftest 4.1+'s layout (per data length, appended: a ``Sample Number, Value``
    header, ``i, v`` rows, a blank line) and the older one value per line; the blocks of
    several data lengths are concatenated (see :func:`parse_latency_file_blocks`).

    >>> parse_latency_file("Sample Number, Value\\n0, 41\\n1, 40\\n\\n")
    [41.0, 40.0]
    """
    return [v for block in parse_latency_file_blocks(text) for v in block]


def parse_latency_file_blocks(text: str) -> list[list[float]]:
    """The blocks of a ``-latencyFile`` (one per header or per run of old-style lines)."""
    blocks: list[list[float]] = []
    cur: list[float] | None = None
    for n, raw in enumerate(text.splitlines(), 1):
        line = _latency_line(n, raw)
        if line is None:
            cur = None
        elif line == "header":
            cur = []
            blocks.append(cur)
        else:
            if cur is None:
                cur = []
                blocks.append(cur)
            cur.append(line)
    return blocks


def iter_latency_file(lines: Iterable[str]) -> Iterator[float]:
    """The samples of a ``-latencyFile`` (as :func:`parse_latency_file`), read line by line:
    given an open file, a long run's file need not fit in memory.

    >>> list(iter_latency_file(["Sample Number, Value", "0, 41", "", "7.5"]))
    [41.0, 7.5]
    """
    for n, raw in enumerate(lines, 1):
        line = _latency_line(n, raw)
        if isinstance(line, float):
            yield line


def _latency_line(n: int, raw: str) -> float | Literal["header"] | None:
    """Line ``n`` of a latency file: a sample's value, a block's header, or None (blank)."""
    line = raw.strip()
    if not line:
        return None
    if line.replace(" ", "").lower() == "samplenumber,value":
        return "header"
    parts = [p.strip() for p in line.split(",")]
    try:
        if len(parts) == 2:
            int(parts[0])
            return float(parts[1])
        if len(parts) == 1:
            return float(parts[0])
    except ValueError:
        pass
    raise PerftestParseError(f"latency file line {n}: not a latency sample: {line!r}")
