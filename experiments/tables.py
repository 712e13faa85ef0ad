"""Raw agent outputs → the parsed tables of a run (docs/contracts.md §3).

- ``latency.parquet``: publisher 0's one-way latencies in order, from its
  ``-latencyFile`` (one µs value per line), the first ``warmup_samples`` dropped.
- ``throughput.parquet``: one row per subscriber per reported second. ``samples`` and
  ``lost`` are that second's counts (differences of Perftest's cumulative "Total
  Samples" and "Lost Samples"), ``samples_per_s`` and ``mbps`` as printed.
- ``resources.parquet``: psutil samples of every agent process.
- ``summary.json``: every process's summary table as printed by the agent.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from experiments.results import atomic_write_bytes, atomic_write_json

LATENCY_SCHEMA = pa.schema([("run_id", pa.string()), ("sample", pa.int64()),
                            ("latency_us", pa.float64())])
THROUGHPUT_SCHEMA = pa.schema([
    ("run_id", pa.string()), ("subscriber", pa.int32()), ("second", pa.int32()),
    ("samples", pa.int64()), ("samples_per_s", pa.float64()), ("mbps", pa.float64()),
    ("lost", pa.int64()),
])
RESOURCES_SCHEMA = pa.schema([
    ("run_id", pa.string()), ("process", pa.string()), ("host", pa.string()),
    ("t_s", pa.float64()), ("cpu_percent", pa.float64()), ("rss_bytes", pa.int64()),
])


def write_parquet(path: Path, rows: list[dict[str, Any]], schema: pa.Schema) -> None:
    cols = {f.name: [r[f.name] for r in rows] for f in schema}
    table = pa.table(cols, schema=schema)
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink)
    atomic_write_bytes(path, sink.getvalue().to_pybytes())


# ---- Perftest-compatible agents ---------------------------------------------------

_AGENT_LAT_COUNT = re.compile(r"publisher 0: (\d+) latency samples")


def agent_latency_count(stderr_text: str) -> int | None:
    """The latency sample count publisher 0 reports on stderr (native agent), if any."""
    m = _AGENT_LAT_COUNT.search(stderr_text)
    return int(m.group(1)) if m else None


_DISCOVERY = re.compile(r"discovery complete: \d+ \w+ after ([\d.]+) s")


def discovery_seconds(stderr_text: str) -> float | None:
    """Seconds from process start until the agent matched all its peers (native agent)."""
    m = _DISCOVERY.search(stderr_text)
    return float(m.group(1)) if m else None


def perftest_sections(text: str) -> dict[str, list[dict[str, Any]]]:
    """One process's stdout → {section: rows} with Perftest's column names; sections
    ``throughput_intervals``, ``throughput_summary``, ``latency_intervals``,
    ``latency_summary`` (parsed by :mod:`experiments.perftest_output`, any format)."""
    from experiments.perftest_output import parse_perftest_output

    out = parse_perftest_output(text)
    if out.kind is None:
        return {}
    sec: dict[str, list[dict[str, Any]]] = {}
    if out.intervals:
        sec[f"{out.kind}_intervals"] = out.interval_dicts()
    if out.summaries:
        sec[f"{out.kind}_summary"] = [dict(r) for r in out.summaries]
    return sec


def _num(row: dict[str, Any], name: str) -> float:
    v = row.get(name, 0)
    return float(v) if isinstance(v, int | float) else 0.0


def throughput_rows_perftest(run_id: str, sub: int, sections: dict[str, list[dict[str, Any]]]
                             ) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    prev_total = prev_lost = 0
    for sec, row in enumerate(sections.get("throughput_intervals", []), start=1):
        total = int(_num(row, "Total Samples"))
        lost = int(_num(row, "Lost Samples"))
        out.append({
            "run_id": run_id, "subscriber": sub, "second": sec,
            "samples": max(total - prev_total, 0),
            "samples_per_s": _num(row, "Samples/s"), "mbps": _num(row, "Mbps"),
            "lost": max(lost - prev_lost, 0),
        })
        prev_total, prev_lost = total, lost
    return out


# ---- ddsperf (reference agent) ------------------------------------------------------

_DDSPERF_SUB = re.compile(
    r"^\[\d+\]\s+(?P<t>[\d.]+)\s+size (?P<size>\d+) total (?P<total>\d+) lost (?P<lost>\d+) "
    r"delta (?P<delta>\d+) lost (?P<dlost>\d+) rate (?P<rate>[\d.]+) kS/s (?P<mbps>[\d.]+) Mb/s"
)
_DDSPERF_LAT = re.compile(
    r"^\[\d+\]\s+(?P<t>[\d.]+)\s+\S+ size (?P<size>\d+) mean (?P<mean>[\d.]+)us min "
    r"(?P<min>[\d.]+)us 50% (?P<p50>[\d.]+)us 90% (?P<p90>[\d.]+)us 99% (?P<p99>[\d.]+)us "
    r"max (?P<max>[\d.]+)us cnt (?P<cnt>\d+)"
)


def throughput_rows_ddsperf(run_id: str, sub: int, text: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for line in text.splitlines():
        m = _DDSPERF_SUB.match(line)
        if m:
            out.append({
                "run_id": run_id, "subscriber": sub, "second": len(out) + 1,
                "samples": int(m["delta"]), "samples_per_s": float(m["rate"]) * 1000.0,
                "mbps": float(m["mbps"]), "lost": int(m["dlost"]),
            })
    return out


def ddsperf_latency_summary(text: str) -> dict[str, Any]:
    """ddsperf prints round-trip statistics per second and peer (no single samples)."""
    cnt, weighted = 0, 0.0
    for line in text.splitlines():
        m = _DDSPERF_LAT.match(line)
        if m:
            cnt += int(m["cnt"])
            weighted += float(m["mean"]) * int(m["cnt"])
    return {"roundtrips": cnt, "mean_rtt_us": weighted / cnt if cnt else None}


# ---- a whole run --------------------------------------------------------------------

LATENCY_BATCH = 1 << 18  # samples per row group: ~8 MB of Python floats at a time


def write_latency_table(src: Path, dest: Path, run_id: str, warmup: int) -> tuple[int, int]:
    """``latency.parquet`` from publisher 0's latency file, streamed: the file is read line
    by line and written in row groups of LATENCY_BATCH samples, so a long run's samples
    (tens of millions) never sit in one Python list. The first ``warmup`` samples are
    dropped. Returns (samples in the file, samples written)."""
    import os

    from experiments.perftest_output import iter_latency_file
    from experiments.results import atomic_file

    seen = kept = 0
    with atomic_file(dest) as tmp, pq.ParquetWriter(tmp, LATENCY_SCHEMA) as writer:
        batch: list[float] = []

        def flush() -> None:
            first = kept - len(batch)
            writer.write_table(pa.table({
                "run_id": pa.array([run_id] * len(batch), pa.string()),
                "sample": pa.array(range(first, kept), pa.int64()),
                "latency_us": pa.array(batch, pa.float64())}, schema=LATENCY_SCHEMA))
            batch.clear()

        with (src.open() if src.exists() else open(os.devnull)) as lines:
            for value in iter_latency_file(lines):
                seen += 1
                if seen <= warmup:
                    continue
                batch.append(value)
                kept += 1
                if len(batch) >= LATENCY_BATCH:
                    flush()
        if batch or kept == 0:
            flush()
    return seen, kept


def build_tables(run_dir: Path, cfg: dict[str, Any], resource_rows: list[dict[str, Any]]
                 ) -> dict[str, Any]:
    """Parse ``run_dir/agents`` into ``run_dir/tables``; returns the summary dict."""
    run_id = cfg["run_id"]
    agents_dir, tables = run_dir / "agents", run_dir / "tables"
    thr: list[dict[str, Any]] = []
    summary: dict[str, Any] = {"processes": {}}
    for name in cfg["placement"]:
        stdout_p = agents_dir / f"{name}.stdout"
        text = stdout_p.read_text(errors="replace") if stdout_p.exists() else ""
        if cfg["agent"] == "ddsperf":
            if name.startswith("sub"):
                thr += throughput_rows_ddsperf(run_id, int(name[3:]), text)
            summary["processes"][name] = ddsperf_latency_summary(text) if name == "pub0" else {}
            continue
        sections = perftest_sections(text)
        if name.startswith("sub"):
            thr += throughput_rows_perftest(run_id, int(name[3:]), sections)
        summary["processes"][name] = {
            k: v for k, v in sections.items() if k.endswith("summary")
        }
        err_p = agents_dir / f"{name}.stderr"
        err = err_p.read_text(errors="replace") if err_p.exists() else ""
        summary.setdefault("discovery_s", {})[name] = discovery_seconds(err)
        if name == "pub0":
            summary["agent_latency_count"] = agent_latency_count(err)
    warm = int(cfg.get("warmup_samples") or 0)
    in_file, kept = write_latency_table(agents_dir / "pub0.latency.txt",
                                        tables / "latency.parquet", run_id, warm)
    summary["latency_samples"] = kept
    summary["latency_samples_in_file"] = in_file
    summary["warmup_samples_dropped"] = min(warm, in_file)
    write_parquet(tables / "throughput.parquet", thr, THROUGHPUT_SCHEMA)
    write_parquet(tables / "resources.parquet",
                  [{"run_id": run_id, **r} for r in resource_rows], RESOURCES_SCHEMA)
    atomic_write_json(tables / "summary.json", summary)
    return summary
