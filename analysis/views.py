"""Which question a campaign's matrix asks, and the views that answer it.

The report no longer assumes a comparison of the modes: each axis of the matrix that
varies becomes a comparison or an x axis.

- ``mode``: the verdicts about the modes (analysis/analyse.py, unchanged);
- ``agent`` (implementation), ``placement_variant`` (same host / two hosts ...) and
  ``reliable``: a verdict per matrix point about their levels, with the statistics of the
  modes' verdicts — runs as the unit, Welch t on the log run values, TOST within the margin,
  Holm over the table (one family per axis and statistic) — the first level in run order
  the reference;
- ``data_len``: the x axis of curves (RTT or one-way latency: mean, median, p99, jitter as
  the standard deviation; samples/s and Mbit/s; CPU and RSS per role), one curve per level
  of the compared axes, means over runs with t intervals over runs.

A run of the RTT test (``test = "latency"``, Perftest's ``-latencyTest``) stores half of
each round trip, as Perftest prints it; its views show the round trip (2 × that value).
A run of the stress test (``test = "throughput"``) has per-second throughput summed over
its subscribers, and one-way latencies from publisher 0's pings.

Roles (the CPU and memory per role): ``publisher`` (every ``pub*`` process), ``subscriber 0``
and ``other subscribers`` (their mean). The agents cycle their pings through the
subscribers, as Perftest does (``latency_ping = num_pings % numSubscribers``), so every
subscriber echoes its share of them: subscriber 0 is shown apart as the echoing
subscriber of a 1-subscriber test would be, not as the only one that echoes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from scipy import stats as sps

from analysis import modes, stats
from analysis.load import Campaign, aggregate_throughput
from analysis.testbed import Reason, bound_cell, no_verdict

if TYPE_CHECKING:
    from analysis.analyse import Analysis, Pair

# Axes compared level against level (runs column, what the report calls it, plural)
COMPARED = {
    "agent": ("implementation", "implementations"),
    "placement_variant": ("placement", "placements"),
    "reliable": ("reliability", "reliability levels"),
}
# Every column that names a matrix point; a cell of one axis fixes all the others.
POINT_COLUMNS = ("test", "data_len", "publishers", "subscribers", "agent", "mode",
                 "placement_variant", "reliable", "topology_variant", "fanout", "same_host",
                 "heartbeat_timing", "multicast_resend", "receive_buffer", "latency_count",
                 "pub_rate", "discovery")
# Per test: (key, label, unit, run statistic, lower is better) of every verdict's metric
RTT_METRICS = (
    ("rtt_median", "RTT median", "µs", "median", True),
    ("rtt_p99", "RTT p99", "µs", "p99", True),
    ("jitter", "jitter (RTT std)", "µs", "std", True),
)
STRESS_METRICS = (("samples_per_s", "samples/s", "samples/s", "median", False),)
ONE_WAY_METRICS = (("latency_median", "one-way latency median", "µs", "median", True),)
# A stress run's pings (one per latency_count samples) make a one-way latency statistic
# only with this many samples per run; fewer and the latency views leave that size out.
MIN_PINGS = 20
UDP_DATAGRAM = 65_507  # largest UDP payload over IPv4: larger samples are fragmented
ROLES = ("publisher", "subscriber 0", "other subscribers")


def role_of(process: str) -> str:
    if process.startswith("pub"):
        return "publisher"
    return "subscriber 0" if process == "sub0" else "other subscribers"


def size_label(n: float) -> str:
    """'32 B', '1 KB', '16 KB', '128 KB' (powers of 1024 where whole, else bytes)."""
    n = int(n)
    for unit, f in (("MB", 2**20), ("KB", 2**10)):
        if n >= f and n % f == 0:
            return f"{n // f} {unit}"
    return f"{n:,} B"


def level_text(axis: str, value: object) -> str:
    if axis == "reliable":
        return "reliable" if bool(value) else "best effort"
    if axis == "data_len":
        return size_label(float(value))  # type: ignore[arg-type]
    if axis == "heartbeat_timing":
        return f"{value} heartbeats"
    if axis == "multicast_resend":
        return f"group repair from the {'first' if value == 'first-nack' else 'second'} NACK"
    if axis == "receive_buffer":
        return f"{value} receive buffer"
    return str(value)


@dataclass
class Design:
    """The axes a campaign varies (levels in run order) and what follows from them."""

    levels: dict[str, list] = field(default_factory=dict)

    @classmethod
    def of(cls, runs: pd.DataFrame) -> Design:
        out = {}
        for col in POINT_COLUMNS:
            if col in runs:
                vals = list(dict.fromkeys(v for v in runs[col] if v is not None
                                          and not (isinstance(v, float) and math.isnan(v))))
                out[col] = vals
        return cls(out)

    def varies(self, axis: str) -> bool:
        return len(self.levels.get(axis, [])) > 1

    @property
    def compared(self) -> list[str]:
        """Axes compared level against level (besides the modes)."""
        return [a for a in COMPARED if self.varies(a)]

    @property
    def curve_axes(self) -> list[str]:
        """Axes whose levels get their own curve in the views against message size."""
        return [a for a in ("agent", "mode", "placement_variant", "reliable") if self.varies(a)]

    @property
    def by_size(self) -> bool:
        return self.varies("data_len")

    @property
    def modes_compared(self) -> bool:
        return set(self.levels.get("mode", [])) >= {"unicast", "multicast"}

    def fixed(self) -> list[str]:
        """What every run shares, in words ('1×1 participants', 'unicast', ...)."""
        out = []
        pubs, subs = self.levels.get("publishers", []), self.levels.get("subscribers", [])
        if len(pubs) == 1 and len(subs) == 1:
            out.append(f"{pubs[0]}×{subs[0]} publishers × subscribers")
        prefix = {"agent": "implementation ", "placement_variant": "placement "}
        for axis in ("mode", "agent", "placement_variant", "reliable"):
            vals = self.levels.get(axis, [])
            if len(vals) == 1 and vals[0] != "":
                out.append(prefix.get(axis, "") + level_text(axis, vals[0]))
        sizes = self.levels.get("data_len", [])
        if len(sizes) == 1:
            out.append(f"{size_label(sizes[0])} samples")
        return out


def tests_text(design: Design) -> str:
    names = {"latency": "the RTT test (round trips, one at a time)",
             "throughput": "the stress test (samples back to back, with pings)"}
    return " and ".join(names.get(t, t) for t in design.levels.get("test", []))


def question(design: Design) -> list[str]:
    """The report's opening: which question the matrix asks and which axes it compares."""
    compared = []
    if design.modes_compared:
        compared.append("the modes (unicast, multicast)")
    for axis in design.compared:
        words = COMPARED[axis][1]
        compared.append(f"the {words} ("
                        + ", ".join(level_text(axis, v) for v in design.levels[axis]) + ")")
    if design.by_size:
        sizes = sorted(design.levels["data_len"])
        metrics = []
        tests = design.levels.get("test", [])
        if "latency" in tests:
            metrics.append("round-trip latency and jitter")
        if "throughput" in tests:
            metrics.append("samples/s and Mbit/s")
        x = (f"with message size ({size_label(sizes[0])} to {size_label(sizes[-1])}, "
             f"{len(sizes)} sizes)")
        what = f"How do {', and '.join(metrics) + (',' if len(metrics) > 1 else '')} change {x}"
    elif design.varies("subscribers") or design.varies("publishers"):
        what = "How do latency and throughput change with the number of participants"
    else:
        what = "How do latency and throughput compare"
    listed = (", ".join(compared[:-1]) + " and " + compared[-1]) if len(compared) > 1 else (
        compared[0] if compared else "")
    text = what + (f", and how do {listed} compare at each point?" if compared else "?")
    lines = ["## What this report answers\n", text]
    axes = []
    if design.modes_compared:
        axes.append("mode")
    axes += [COMPARED[a][0] for a in design.compared]
    tail = (f" Compared: {', '.join(axes)}." if axes else " Nothing is compared level "
            "against level: one configuration per point.")
    if design.by_size:
        tail += " x axis: message size (Perftest's -dataLen, its 28-byte header included)."
    elif design.varies("subscribers"):
        tail += " x axis: participant count."
    fixed = design.fixed()
    if fixed:
        tail += " Fixed: " + ", ".join(fixed) + "."
    tail += f" Tests: {tests_text(design)}."
    if not design.modes_compared:
        tail += " One mode only: no verdicts about the modes."
    lines[-1] += tail + "\n"
    return lines


# ---- one row per run ------------------------------------------------------------------

def run_table(campaign: Campaign) -> pd.DataFrame:
    """One row per run: its matrix point, fidelity, latency statistics (the round trip for
    the RTT test, µs), throughput (median per-second samples/s and Mbit/s summed over
    subscribers) and CPU share (% of one core, mean over samples) and peak RSS (MiB) per
    role."""
    runs = campaign.runs
    agg = aggregate_throughput(campaign)
    thr = {r: g for r, g in agg.groupby("run_id", observed=True, sort=False)}
    res = campaign.resources
    rows = []
    for rec in runs.to_dict("records"):
        rid = rec["run_id"]
        row = {c: rec.get(c) for c in ("run_id", *POINT_COLUMNS, "repetition", "fidelity_bound")}
        lat = campaign.latency_of(rid)
        rtt = rec.get("test") == "latency"
        x = lat * 2.0 if rtt else lat
        row["latency_kind"] = "RTT" if rtt else "one-way"
        row["latency_n"] = int(x.size)
        for name, fn in (("mean", np.mean), ("median", np.median),
                         ("p99", lambda v: np.quantile(v, 0.99)),
                         ("std", lambda v: np.std(v, ddof=1))):
            row[f"latency_{name}"] = float(fn(x)) if x.size >= 2 else math.nan
        g = thr.get(rid)
        seconds = 0 if g is None else len(g)
        row["seconds"] = seconds
        for col in ("samples_per_s", "mbps"):
            row[col] = float(g[col].median()) if seconds else math.nan
        row.update(_roles(res[res["run_id"] == rid]) if len(res) else {})
        rows.append(row)
    return pd.DataFrame(rows)


def _roles(res: pd.DataFrame) -> dict[str, float]:
    """CPU and peak RSS per role. Each process's first sample is left out: the sampler
    takes it as the agents are started (before some have even run their program, psutil's
    CPU share covering only the moments since), so a run shorter than the sampler's
    interval (0.5 s) has no value."""
    out: dict[str, float] = {}
    res = res.sort_values("t_s")
    res = res[res.groupby("process").cumcount() > 0]
    if res.empty:
        return out
    per_proc = res.groupby("process").agg(cpu=("cpu_percent", "mean"), rss=("rss_bytes", "max"))
    per_proc["role"] = [role_of(p) for p in per_proc.index]
    for role, g in per_proc.groupby("role"):
        out[f"cpu {role}"] = float(g["cpu"].mean())
        out[f"rss {role}"] = float(g["rss"].mean()) / 2**20
    return out


# ---- curves: means over runs with t intervals ------------------------------------------

def mean_interval(values: list[float], alpha: float = stats.ALPHA, log: bool = False
                  ) -> tuple[float, float, float]:
    """Mean of the runs' values with a t interval over runs (NaN bounds with one run);
    ``log``: the geometric mean and the interval on the log scale, as the verdicts compare
    runs (positive, and a ratio reads as a ratio)."""
    x = np.asarray([v for v in values if np.isfinite(v) and (v > 0 or not log)], dtype=float)
    if x.size == 0:
        return math.nan, math.nan, math.nan
    y = np.log(x) if log else x
    m = float(y.mean())
    half = (float(sps.t.ppf(1 - alpha / 2, y.size - 1) * y.std(ddof=1) / math.sqrt(y.size))
            if y.size >= 2 else math.nan)
    if log:
        return math.exp(m), math.exp(m - half), math.exp(m + half)
    return m, m - half, m + half


def curve_label(design: Design, rec: dict) -> str:
    """'native, same-host' — the levels of the compared axes that name one curve."""
    parts = [level_text(a, rec[a]) for a in design.curve_axes]
    return ", ".join(parts) or "all runs"


def curves(table: pd.DataFrame, design: Design, columns: list[str],
           alpha: float = stats.ALPHA) -> pd.DataFrame:
    """Per test, curve (levels of the compared axes), participants and size: each column's
    mean over runs with its t interval over runs (geometric, on the log scale, except CPU
    and RSS), and the runs behind it."""
    keys = ["test", *design.curve_axes, "publishers", "subscribers", "data_len"]
    rows = []
    for key, g in table.groupby(keys, sort=False, dropna=False):
        rec = dict(zip(keys, key, strict=True))
        row = {"test": rec["test"], "curve": curve_label(design, rec),
               "participants": f"{rec['publishers']}×{rec['subscribers']}",
               "data_len": rec["data_len"], "runs": len(g),
               "host-bound runs": int((g["fidelity_bound"] == "host").sum())}
        for col in columns:
            if col not in g:
                continue
            vals = g[col].tolist()
            if col.startswith("latency_") and rec["test"] != "latency":
                vals = [v if n >= MIN_PINGS else math.nan
                        for v, n in zip(vals, g["latency_n"], strict=True)]
            row[col], row[f"{col}_lo"], row[f"{col}_hi"] = mean_interval(
                vals, alpha, log=not col.startswith(("cpu ", "rss ")))
        rows.append(row)
    return pd.DataFrame(rows)


# ---- verdicts about implementations, placements, reliability ---------------------------

@dataclass
class AxisCell:
    """The verdicts of one matrix point about two levels of one axis (reference first)."""

    axis: str
    point: dict  # the other axes' values
    shown: list[str]  # the axes that vary in the campaign (named in where())
    levels: tuple[str, str]
    fidelity: str
    runs: tuple[int, int]
    verdicts: dict[str, modes.ModeVerdict]  # metric key -> verdict

    def where(self) -> str:
        """'RTT test, 1 KB, native' — the point in words: the axes the campaign varies."""
        p = self.point
        parts = []
        if "test" in self.shown:
            parts.append("RTT test" if p.get("test") == "latency" else "stress test")
        if "data_len" in self.shown:
            parts.append(size_label(p["data_len"]))
        if "publishers" in self.shown or "subscribers" in self.shown:
            parts.append(f"{p.get('publishers')}×{p.get('subscribers')}")
        for a in ("agent", "mode", "placement_variant", "reliable", "topology_variant",
                  "fanout", "same_host", "heartbeat_timing", "multicast_resend", "receive_buffer"):
            if a != self.axis and a in self.shown and p.get(a) not in ("", None):
                parts.append(level_text(a, p[a]))
        return ", ".join(parts) or "every run"


def metrics_for(test: str) -> tuple:
    """The verdicts' metrics of a test: the RTT test's round trips, the stress test's
    throughput (its pings' one-way latency is drawn, not judged: a few per run)."""
    return RTT_METRICS if test == "latency" else STRESS_METRICS


def _values(g: pd.DataFrame, campaign: Campaign, key: str, statistic: str) -> list[float]:
    """Each run's value of one metric (runs as the unit)."""
    if key == "samples_per_s":
        return [v for v in g["samples_per_s"] if np.isfinite(v)]
    out = []
    for rid in g["run_id"]:
        x = campaign.latency_of(rid)
        if x.size >= 2:
            out += modes.run_statistic(stats.Sample.from_runs([x]), statistic)
    return out


def axis_cells(campaign: Campaign, table: pd.DataFrame, design: Design, axis: str,
               alpha: float = stats.ALPHA, margin: float = modes.EQUIVALENCE_MARGIN
               ) -> list[AxisCell]:
    """Every matrix point where ``axis`` has two levels: the reference (its first level)
    against each other level, per metric, Holm over the cells of this axis (one family
    per metric)."""
    others = [c for c in POINT_COLUMNS if c != axis and c in table]
    levels = design.levels[axis]
    noun, plural = COMPARED[axis]
    cells = []
    for key, g in table.groupby(others, sort=False, dropna=False):
        point = dict(zip(others, key, strict=True))
        present = [lv for lv in levels if (g[axis] == lv).any()]
        if len(present) < 2:
            continue
        ref = present[0]
        for other in present[1:]:
            sub = g[g[axis].isin([ref, other])]
            names = (level_text(axis, ref), level_text(axis, other))
            bounds = sub["fidelity_bound"].tolist()
            withheld = bound_cell(bounds)
            fid = (withheld if withheld
                   else "fidelity unknown (runs made without the monitor)"
                   if "unknown" in bounds else "network-bound")
            verdicts = {}
            for mkey, _, _, statistic, _ in metrics_for(point["test"]):
                vals = {n: _values(sub[sub[axis] == lv], campaign, mkey, statistic)
                        for n, lv in zip(names, (ref, other), strict=True)}
                if not all(vals.values()):
                    continue
                v = modes.judge_values(vals, metric=mkey, statistic=statistic, alpha=alpha,
                                       margin=margin, compared=f"the {plural}", per=noun)
                if withheld:
                    reasons = [Reason(f"{r}: {w}", w.cause) for r, b, w in zip(
                        sub["run_id"], bounds, _reasons(campaign, sub), strict=True)
                        if no_verdict(b)]
                    modes.mark_testbed_bound(v, reasons)
                verdicts[mkey] = v
            runs = (int((sub[axis] == ref).sum()), int((sub[axis] == other).sum()))
            shown = [a for a in POINT_COLUMNS if design.varies(a)]
            cells.append(AxisCell(axis, point, shown, names, fid, runs, verdicts))
    lower = {m[0]: m[4] for m in (*RTT_METRICS, *STRESS_METRICS, *ONE_WAY_METRICS)}
    for mkey in lower:
        modes.decide([c.verdicts[mkey] for c in cells if mkey in c.verdicts], lower)
    return cells


def _reasons(campaign: Campaign, sub: pd.DataFrame) -> list[Reason]:
    runs = campaign.runs.set_index("run_id")
    return [Reason(str(runs["fidelity_reasons"].get(r, "")),
                   str(runs["fidelity_cause"].get(r, "")))
            for r in sub["run_id"]]


def short_verdict(v: modes.ModeVerdict | None) -> str:
    """'fastdds better (+40% [+20, +60])', 'undecided (+3%)', 'testbed-bound'."""
    from analysis.verdicts import short_verdict as short

    return "n/a" if v is None else short(v)


def axis_table(cells: list[AxisCell]) -> pd.DataFrame:
    """One row per matrix point: the point, fidelity, runs per level, a verdict per metric
    (the other level's change against the reference, 95% t interval over runs)."""
    labels = {m[0]: m[1] for m in (*RTT_METRICS, *STRESS_METRICS, *ONE_WAY_METRICS)}
    rows = []
    for c in cells:
        row = {"test": c.point.get("test"), "point": c.where(),
               "compared": f"{c.levels[1]} vs {c.levels[0]}",
               "fidelity": c.fidelity, "runs": f"{c.runs[0]}/{c.runs[1]}"}
        for mkey, v in c.verdicts.items():
            row[labels[mkey]] = short_verdict(v)
        rows.append(row)
    return pd.DataFrame(rows)


def axis_details(cells: list[AxisCell]) -> pd.DataFrame:
    """The tests behind :func:`axis_table`: per cell and metric, the Welch test, TOST and
    Holm-adjusted p-values (as tables/mode_verdicts for the modes)."""
    rows = []
    for c in cells:
        for mkey, v in c.verdicts.items():
            rows.append({"axis": COMPARED[c.axis][0], "point": c.where(),
                         "reference": c.levels[0], "other": c.levels[1], "metric": mkey,
                         "statistic": v.statistic, "verdict": v.outcome,
                         "runs_reference": c.runs[0], "runs_other": c.runs[1],
                         "change_pct": v.change[0], "change_lo": v.change[1],
                         "change_hi": v.change[2], "df": v.df,
                         "p_difference": v.p_difference,
                         "p_difference_holm": v.p_difference_adj,
                         "p_equivalence": v.p_equivalence,
                         "p_equivalence_holm": v.p_equivalence_adj, "margin": v.margin,
                         "family": v.family, "reason": v.reason})
    return pd.DataFrame(rows)


def axis_reading(cells: list[AxisCell]) -> list[str]:
    """One line per metric: at which points each level is better, equal or undecided."""
    labels = {m[0]: m[1] for m in (*RTT_METRICS, *STRESS_METRICS, *ONE_WAY_METRICS)}
    out = []
    for mkey, label in labels.items():
        by: dict[str, list[str]] = {}
        for c in cells:
            v = c.verdicts.get(mkey)
            if v is not None:
                by.setdefault(v.outcome, []).append(c.where())
        if by:
            out.append(f"{label}: " + "; ".join(f"*{k}* at {' · '.join(w)}"
                                                for k, w in by.items()) + ".")
    return out


def pair_point(analysis: Analysis, pair: Pair) -> dict:
    """The matrix point of a unicast/multicast pair (its first run's axes)."""
    runs = analysis.campaign.runs
    rid = next(r for ids in pair.runs.values() for r in ids)
    rec = runs.loc[runs["run_id"] == rid].iloc[0]
    return {c: rec[c] for c in POINT_COLUMNS if c in rec}


def _order(point: dict) -> tuple:
    """Points in the order of their test, then size, then the other axes."""
    return (str(point.get("test")), point.get("data_len") or 0, point.get("publishers") or 0,
            point.get("subscribers") or 0, str(point.get("agent")),
            str(point.get("placement_variant")))


def mode_table(analysis: Analysis, table: pd.DataFrame) -> pd.DataFrame:
    """The verdicts about the modes (analysis/analyse.py, Holm over the campaign) at every
    point where both modes ran, one row per point: only the metrics its test measures (the
    RTT test has no throughput; a stress run's pings count when each run has MIN_PINGS)."""
    from analysis.verdicts import fidelity_cell

    n_pings = table.set_index("run_id")["latency_n"]
    design = Design.of(analysis.campaign.runs)
    shown = [a for a in POINT_COLUMNS if design.varies(a)]
    rows = []
    for pair in sorted(analysis.pairs, key=lambda p: _order(pair_point(analysis, p))):
        if not pair.complete:
            continue
        point = pair_point(analysis, pair)
        cell = AxisCell("mode", point, shown, ("unicast", "multicast"), fidelity_cell(pair),
                        (pair.repetitions["unicast"], pair.repetitions["multicast"]), {})
        row = {"test": point.get("test"), "point": cell.where(), "fidelity": cell.fidelity,
               "runs per mode": f"{cell.runs[0]}/{cell.runs[1]}"}
        rtt = point.get("test") == "latency"
        ids = [r for rs in pair.runs.values() for r in rs]
        name = "RTT" if rtt else "one-way latency"
        if rtt or all(n_pings.get(r, 0) >= MIN_PINGS for r in ids):
            row[f"{name} median"] = short_verdict(pair.verdicts.get("latency"))
            row[f"{name} p99"] = (short_verdict(pair.tails["latency"]) if "latency" in pair.tails
                                  else f"fewer than {modes.MIN_SAMPLES_FOR_TAIL} per run")
        else:  # a stress run's pings: one per latency_count samples
            row[f"{name} median"] = row[f"{name} p99"] = f"fewer than {MIN_PINGS} pings per run"
        if not rtt:
            row["samples/s"] = short_verdict(pair.verdicts.get("throughput"))
        rows.append(row)
    return pd.DataFrame(rows)


LATENCY_COLUMNS = ["latency_mean", "latency_median", "latency_p99", "latency_std"]
RESOURCE_COLUMNS = [f"{k} {r}" for r in ROLES for k in ("cpu", "rss")]


def view_tables(analysis: Analysis) -> dict[str, pd.DataFrame]:
    """The tables of the views the matrix asks for (empty dict when it asks none beyond
    the modes): ``runs_summary`` and ``curves`` against message size; per compared axis
    ``<axis>_verdicts`` and ``<axis>_verdict_tests``; ``mode_verdicts_by_size``."""
    design = Design.of(analysis.campaign.runs)
    if not (design.by_size or design.compared):
        return {}
    table = run_table(analysis.campaign)
    out: dict[str, pd.DataFrame] = {}
    if design.by_size:
        out["runs_summary"] = table
        cols = [*LATENCY_COLUMNS, "samples_per_s", "mbps",
                *[c for c in RESOURCE_COLUMNS if c in table]]
        out["curves"] = curves(table, design, cols, analysis.alpha)
        if design.modes_compared:
            out["mode_verdicts_by_size"] = mode_table(analysis, table)
    for axis in design.compared:
        cells = axis_cells(analysis.campaign, table, design, axis, analysis.alpha,
                           analysis.margin)
        if cells:
            name = AXIS_TABLE[axis]
            out[f"{name}_verdicts"] = axis_table(cells)
            out[f"{name}_verdict_tests"] = axis_details(cells)
            out[f"{name}_reading"] = pd.DataFrame({"line": axis_reading(cells)})
    return out


AXIS_TABLE = {"agent": "implementation", "placement_variant": "placement",
              "reliable": "reliability"}
