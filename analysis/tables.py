"""Tables as dataframes, and writers for CSV, Markdown and LaTeX (no extra dependencies)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from analysis import stats
from analysis.analyse import METRICS, MODES, Analysis
from analysis.load import Campaign, aggregate_throughput
from analysis.verdicts import WIRE_EVIDENCE, fmt_pct, implementation_table, verdict_table


def _ci(est: tuple[float, float, float]) -> tuple[float, float, float]:
    return tuple(float(v) for v in est)


def statistics_table(analysis: Analysis) -> pd.DataFrame:
    """Per configuration and metric: mean and quantiles with bootstrap intervals."""
    rows = []
    for pair in analysis.pairs:
        for metric, (_, unit, _) in METRICS.items():
            for mode in MODES:
                curve = pair.curve(metric, mode)
                if curve is None:
                    continue
                s = curve[0]
                row = {
                    "group": pair.group, "participants": pair.label, "mode": mode,
                    "metric": metric, "unit": unit, "runs": len(pair.runs[mode]), "n": s.n,
                    "n_eff": round(s.n_eff), "resampling": s.unit, "units": s.units,
                    "block_len": s.block_len, "dkw_eps": s.dkw_eps,
                }
                for name in stats.STATS:
                    est, lo, hi = _ci(s.estimates[name])
                    row[name], row[f"{name}_lo"], row[f"{name}_hi"] = est, lo, hi
                rows.append(row)
    return pd.DataFrame(rows)


def mode_verdicts_table(analysis: Analysis) -> pd.DataFrame:
    """Per participant count and metric: the verdict about the modes (runs as the unit)."""
    rows = []
    for pair in analysis.pairs:
        for metric, v in [*pair.verdicts.items(), *pair.tails.items()]:
            rows.append({
                "group": pair.group, "participants": pair.label, "metric": metric,
                "statistic": v.statistic, "verdict": v.outcome, "runs_unicast": v.runs["unicast"],
                "runs_multicast": v.runs["multicast"],
                "change_pct": v.change[0], "change_lo": v.change[1], "change_hi": v.change[2],
                "df": v.df, "p_difference": v.p_difference,
                "p_difference_holm": v.p_difference_adj, "p_equivalence": v.p_equivalence,
                "p_equivalence_holm": v.p_equivalence_adj, "margin": v.margin,
                "family": v.family, "reason": v.reason,
            })
    return pd.DataFrame(rows)


def _crossover_text(c) -> str:
    """'x in [lo, hi] below<|>above F_u a–b F_m c–d' (no x where the estimate is noisy)."""
    where = (f"{c.x:.6g} in [{c.lo:.6g}, {c.hi:.6g}]" if c.located else
             f"in [{c.lo:.6g}, {c.hi:.6g}] (estimate changes sign {c.sign_changes}×)")
    return (f"{where} {c.below}<|>{c.above} "
            f"F_u {c.ends['unicast'][0]:.3f}–{c.ends['unicast'][1]:.3f} "
            f"F_m {c.ends['multicast'][0]:.3f}–{c.ends['multicast'][1]:.3f}")


def comparisons_table(analysis: Analysis) -> pd.DataFrame:
    """Per participant count and metric: the test, crossovers and effect sizes."""
    rows = []
    for pair in analysis.pairs:
        for metric, comp in pair.comparisons.items():
            cross = "; ".join(_crossover_text(c) for c in comp.crossovers)
            rows.append({
                "group": pair.group, "participants": pair.label, "metric": metric,
                "verdict": comp.verdict, "p_value": comp.p_value,
                "p_permutation": comp.p_permutation, "p_bootstrap": comp.p_bootstrap,
                "sup_dF": comp.sup_d, "critical": comp.critical,
                "c_permutation": comp.critical_permutation,
                "c_bootstrap": comp.critical_bootstrap, "alpha": comp.alpha, "ks_D": comp.ks_d,
                "ks_p_if_iid": comp.ks_p_iid, "crossovers": cross,
                "mean_change_pct": comp.effects["mean"][0],
                "mean_change_lo": comp.effects["mean"][1],
                "mean_change_hi": comp.effects["mean"][2],
                "median_change_pct": comp.effects["median"][0],
                "median_change_lo": comp.effects["median"][1],
                "median_change_hi": comp.effects["median"][2],
                "P_unicast_lower": comp.prob_a_lower,
                "area_unicast_better": comp.area.get("unicast", 0.0),
                "area_multicast_better": comp.area.get("multicast", 0.0),
            })
    return pd.DataFrame(rows)


def wire_table(analysis: Analysis) -> pd.DataFrame:
    rows = []
    for pair in analysis.pairs:
        for mode, values in pair.wire.items():
            row = {"group": pair.group, "participants": pair.label, "mode": mode,
                   "publishers": pair.publishers, "subscribers": pair.subscribers}
            row.update({k.removeprefix("wire_"): v for k, v in values.items()})
            rows.append(row)
    return pd.DataFrame(rows)


def summary_table(analysis: Analysis) -> pd.DataFrame:
    """Compact, human-readable: one row per participant count and metric, both modes."""
    from analysis.verdicts import fmt_value

    rows = []
    for pair in analysis.pairs:
        for metric, (_, unit, _) in METRICS.items():
            row = {"group": pair.group, "participants": pair.label, "metric": f"{metric} ({unit})"}
            for mode in MODES:
                curve = pair.curve(metric, mode)
                for name in ("mean", "median", "p99"):
                    if curve is None:
                        row[f"{mode} {name}"] = "n/a"
                        continue
                    est, lo, hi = curve[0].estimates[name]
                    row[f"{mode} {name}"] = (
                        f"{fmt_value(est, unit)} [{_short(lo, unit)}, {_short(hi, unit)}]"
                    )
            comp = pair.comparisons.get(metric)
            row["median change"] = fmt_pct(comp.effects["median"]) if comp else "n/a"
            rows.append(row)
    return pd.DataFrame(rows)


def _short(value: float, unit: str) -> str:
    from analysis.verdicts import fmt_value

    return fmt_value(value, unit).split(" ")[0] if unit == "samples/s" else fmt_value(value, unit)


# ---- the study's statistics beside the verdicts ----------------------------------------
# The study this testbed re-examines (multicast against unicast DDS with RTI Perftest, 1 to
# 75 publishers and subscribers) reported means: publisher 0's mean latency and the mean
# second of throughput summed over the subscribers, in Mbit/s as Perftest counts it. Each
# sample counts its -dataLen bytes, which include Perftest's 28-byte overhead (the
# subscriber adds message.size + OVERHEAD_BYTES, message.size being -dataLen - 28).
SECONDS_COLUMNS = ("run_id", "second", "mbit_s", "reporting", "run_subscribers", "stalled",
                   "kept")


def mbit_per_sample(data_len: object) -> float:
    """Megabits one sample of ``-dataLen`` bytes counts for Perftest (NaN when unknown).

    >>> mbit_per_sample(100)
    0.0008
    """
    try:
        n = float(data_len)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return math.nan
    return n * 8 / 1e6 if math.isfinite(n) and n > 0 else math.nan


def run_seconds(campaign: Campaign) -> pd.DataFrame:
    """One row per run and second in which any subscriber reported: Mbit/s summed over the
    subscribers that reported (samples/s × -dataLen × 8 / 10⁶; the agents' printed Mbit/s
    where the run's data length is unknown), how many reported (``reporting``; in the whole
    run: ``run_subscribers``), ``stalled`` (one of them received nothing) and ``kept`` (the
    verdict counts it: every subscriber that reported in the run reported in it,
    :func:`analysis.load.aggregate_throughput`)."""
    thr = campaign.throughput
    if thr.empty:
        return pd.DataFrame(columns=list(SECONDS_COLUMNS))
    factor = thr["run_id"].map(campaign.runs.set_index("run_id")["data_len"].map(
        mbit_per_sample)).to_numpy(float)
    mbit = np.where(np.isfinite(factor), thr["samples_per_s"].to_numpy(float) * factor,
                    thr["mbps"].to_numpy(float))
    per = thr.assign(mbit_s=mbit, stalled=thr["samples_per_s"].to_numpy(float) == 0)
    secs = per.groupby(["run_id", "second"], observed=True, sort=True).agg(
        mbit_s=("mbit_s", "sum"), reporting=("subscriber", "nunique"),
        stalled=("stalled", "max")).reset_index()
    secs["run_subscribers"] = secs["run_id"].map(
        thr.groupby("run_id", observed=True)["subscriber"].nunique()).astype(int)
    kept = aggregate_throughput(campaign)[["run_id", "second"]].assign(kept=True)
    secs = secs.merge(kept, on=["run_id", "second"], how="left")
    secs["kept"] = secs["kept"].astype("boolean").fillna(False).astype(bool)
    return secs[list(SECONDS_COLUMNS)]


def _mean(values: list[float]) -> float:
    return float(np.mean(values)) if values else math.nan


def _geomean(values: list[float]) -> float:
    """The verdicts compare log run values: their centre is the geometric mean."""
    x = np.asarray([v for v in values if v > 0], dtype=float)
    return float(np.exp(np.log(x).mean())) if x.size else math.nan


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _off(a: float, b: float) -> str:
    return f"{100 * (a / b - 1):+.1f}%" if math.isfinite(a) and math.isfinite(b) and b else "n/a"


@dataclass
class StudyCell:
    """One mode of one cell: the study's means and the verdicts' statistics, and the
    seconds behind the throughput ones."""

    latency_mean: float  # mean over runs of publisher 0's mean latency, µs
    latency_median: float  # geometric mean of the run medians, µs (the verdict's)
    mbit_mean: float  # mean over runs of the mean second summed over subscribers
    mbit_kept_mean: float  # the same over the seconds the verdict keeps
    mbit_median: float  # geometric mean of the run medians of the kept seconds (the verdict's)
    seconds: int = 0  # seconds in which any subscriber reported, over the runs
    kept: int = 0
    stalled: int = 0
    missing: int = 0  # seconds in which fewer subscribers reported than the run had
    never: list[str] = field(default_factory=list)  # "<run> k of n": subscribers silent

    @property
    def left_out(self) -> int:
        return self.seconds - self.kept

    def why(self) -> str:
        """Where the study's means and the verdict's statistics part, and why."""
        parts = [f"latency: the mean is {_off(self.latency_mean, self.latency_median)} off "
                 "the median (the mean weighs the tail)"]
        if self.seconds == 0:
            return parts[0] + "; no throughput seconds."
        text = (f"Mbit/s: the mean of {_plural(self.seconds, 'second')} is "
                f"{_off(self.mbit_mean, self.mbit_median)} off the median second")
        causes = []
        if self.left_out:
            causes.append(
                f"{_plural(self.left_out, 'second')} left out by the verdict, not every "
                "subscriber reporting (without them the mean is "
                f"{_off(self.mbit_kept_mean, self.mbit_median)} off)")
        if self.stalled:
            causes.append(f"{_plural(self.stalled, 'stalled second')} (a subscriber "
                          "received nothing: they pull the mean down, hardly the median)")
        if self.missing:
            never = (f"; never reporting: {', '.join(self.never)}, whose share both "
                     "figures lack" if self.never else "")
            causes.append(f"{_plural(self.missing, 'missing-subscriber second')} (fewer "
                          f"subscribers reported than the run had{never})")
        text += (": " + "; ".join(causes) + "; the rest is the mean against the median"
                 if causes else ": no second left out, stalled or missing a subscriber; "
                 "the mean against the median alone")
        return "; ".join([*parts, text]) + "."


def study_cell(campaign: Campaign, run_ids: list[str], seconds: pd.DataFrame) -> StudyCell:
    """The study's and the verdict's statistics over the runs of one mode of one cell."""
    runs = campaign.runs.set_index("run_id")
    lat = [campaign.latency_of(r) for r in run_ids]
    lat = [x for x in lat if x.size]
    sel = seconds[seconds["run_id"].isin(run_ids)]
    by_run = dict(tuple(sel.groupby("run_id", sort=False)))
    means, kept_means, medians = [], [], []
    cell = StudyCell(_mean([float(x.mean()) for x in lat]),
                     _geomean([float(np.median(x)) for x in lat]), math.nan, math.nan, math.nan)
    for rid in run_ids:
        s = by_run.get(rid)
        if s is None or s.empty:
            continue
        kept = s.loc[s["kept"], "mbit_s"]
        means.append(float(s["mbit_s"].mean()))
        if len(kept):
            kept_means.append(float(kept.mean()))
            medians.append(float(kept.median()))
        configured = int(runs.at[rid, "subscribers"])
        cell.seconds += len(s)
        cell.kept += len(kept)
        cell.stalled += int(s["stalled"].sum())
        cell.missing += int((s["reporting"] < configured).sum())
        silent = configured - int(s["run_subscribers"].iloc[0])
        if silent > 0:
            cell.never.append(f"{rid} {silent} of {configured}")
    cell.mbit_mean, cell.mbit_kept_mean = _mean(means), _mean(kept_means)
    cell.mbit_median = _geomean(medians)
    return cell


def study_table(analysis: Analysis) -> pd.DataFrame:
    """Per cell where both modes ran, and mode: the study's statistics (publisher 0's mean
    latency; the mean second of throughput summed over subscribers, Mbit/s) beside the
    verdict's (the run medians, their geometric mean over runs; the median second counted
    only where every subscriber reported), the seconds behind them and why they differ."""
    from analysis.verdicts import short_verdict

    camp = analysis.campaign
    seconds = run_seconds(camp)
    rows = []
    for pair in analysis.pairs:
        if not pair.complete:  # one mode: no verdict about the modes to set it beside
            continue
        cells = {m: study_cell(camp, pair.runs[m], seconds) for m in MODES}
        # no verdict: too few samples ("not compared"), or an RTT test's throughput ("n/a")
        verdict = {m: (short_verdict(pair.verdicts[m]) if m in pair.verdicts else
                       "not compared" if m in pair.not_compared else "n/a") for m in METRICS}
        for mode, c in cells.items():
            why = c.why()
            if mode == "multicast":
                u = cells["unicast"]
                why += (f" Multicast against unicast: latency mean "
                        f"{_off(c.latency_mean, u.latency_mean)} (medians "
                        f"{_off(c.latency_median, u.latency_median)}), Mbit/s mean "
                        f"{_off(c.mbit_mean, u.mbit_mean)} (median seconds "
                        f"{_off(c.mbit_median, u.mbit_median)}).")
            rows.append({
                "group": pair.group, "participants": pair.label, "mode": mode,
                "runs": len(pair.runs[mode]),
                "latency mean µs (study)": c.latency_mean,
                "latency median µs (verdict)": c.latency_median,
                "latency verdict": verdict["latency"],
                "Mbit/s mean (study)": c.mbit_mean,
                "Mbit/s median second (verdict)": c.mbit_median,
                "throughput verdict": verdict["throughput"],
                "seconds": c.seconds, "seconds kept": c.kept, "seconds left out": c.left_out,
                "stalled seconds": c.stalled, "missing-subscriber seconds": c.missing,
                "why they differ": why,
            })
    return pd.DataFrame(rows)


def implementation_agreement_table(analysis: Analysis) -> pd.DataFrame:
    """Per matrix point and metric of a campaign with several implementations: each one's
    verdict, whether they agree, the test of a difference in multicast's effect between
    them, and the generated sentence (analysis.compare.implementations)."""
    from analysis.compare import implementations

    rows = []
    for c in implementations(analysis):
        row: dict[str, object] = {"group": c.group, "participants": c.participants,
                                  "metric": c.metric}
        for agent, o, e in zip(c.agents, c.outcomes, c.effects, strict=True):
            row[f"{agent} verdict"] = o
            row[f"{agent} change_pct"] = e
        row["agreement"] = c.agreement
        for agent, d in zip(c.agents[1:], c.differences, strict=True):
            key = f"{agent} vs {c.agents[0]}"
            est, lo, hi = d.change if d else (math.nan,) * 3
            row[f"{key} effect ratio_pct"], row[f"{key} lo"], row[f"{key} hi"] = est, lo, hi
            row[f"{key} p_holm"] = d.p_adj if d else math.nan
        row["sentence"] = c.sentence()
        rows.append(row)
    return pd.DataFrame(rows)


def all_tables(analysis: Analysis) -> dict[str, pd.DataFrame]:
    out = {
        "verdicts": verdict_table(analysis),
        "mode_verdicts": mode_verdicts_table(analysis),
        "summary": summary_table(analysis),
        "statistics": statistics_table(analysis),
        "comparisons": comparisons_table(analysis),
        "wire": wire_table(analysis),
    }
    from analysis import ablation, views

    modes_compared = any(p.complete for p in analysis.pairs)
    if not modes_compared:  # one mode only: no verdict about the modes anywhere
        for name in ("verdicts", "mode_verdicts", "comparisons"):
            out[name] = pd.DataFrame()
    if modes_compared:  # the study's means beside the verdicts about the modes
        out["study"] = study_table(analysis)
    if len(analysis.agents) > 1 and modes_compared:
        # [matrix] agents: the implementations' verdicts about the modes side by side
        out["implementations"] = implementation_table(analysis)
        out["implementation_agreement"] = implementation_agreement_table(analysis)
    cells = ablation_cells(analysis)
    if cells:
        out["ablation"] = ablation.table(cells)
        out["ablation_paragraphs"] = pd.DataFrame({"paragraph": ablation.paragraphs(cells)})
    out.update(views.view_tables(analysis))
    return out


def ablation_cells(analysis: Analysis) -> list:
    """The ablation's cells where it applies: it asks which factor changes multicast's
    penalty, so only where the modes are compared on both sides of some switch. Against
    message size an implementation switch alone is what the implementations side by side
    already test (the same interaction test): no ablation then."""
    from analysis import ablation, views

    if not any(p.complete for p in analysis.pairs):
        return []
    cells = ablation.ablations(analysis)
    if not any(ablation.NOT_COMPARED not in c.outcomes for c in cells):
        return []
    if (views.Design.of(analysis.campaign.runs).by_size
            and {c.factor for c in cells} == {"implementation"}):
        return []
    return cells


# ---- writers -------------------------------------------------------------------------

def _cell(value: object) -> str:
    if isinstance(value, float):
        if not math.isfinite(value):
            return "n/a"
        return f"{value:.4g}"
    return str(value)


def to_markdown(df: pd.DataFrame) -> str:
    cols = [str(c) for c in df.columns]
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    for rec in df.itertuples(index=False):
        cells = [_cell(v).replace("|", "\\|").replace("\n", " ") for v in rec]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


_LATEX = {
    "\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
    "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
    "×": r"$\times$", "µ": r"\textmu{}", "→": r"$\rightarrow$", "−": r"$-$", "|": r"$|$",
    "Δ": r"$\Delta$", "<": r"$<$", ">": r"$>$", "≥": r"$\geq$", "≤": r"$\leq$",
}


def latex_escape(text: str) -> str:
    return "".join(_LATEX.get(ch, ch) for ch in text)


def to_latex(df: pd.DataFrame, *, colspec: str | None = None, caption: str = "",
             label: str = "", size: str = r"\small") -> str:
    """A booktabs table; ``colspec`` defaults to left-aligned text, right-aligned numbers."""
    if colspec is None:
        colspec = "".join(
            "r" if pd.api.types.is_numeric_dtype(df[c]) else "l" for c in df.columns
        )
    head = " & ".join(latex_escape(str(c)) for c in df.columns) + r" \\"
    body = [
        " & ".join(latex_escape(_cell(v)) for v in rec) + r" \\"
        for rec in df.itertuples(index=False)
    ]
    out = [r"\begin{table}[htbp]", r"\centering", size]
    if caption:
        out.append(rf"\caption{{{latex_escape(caption)}}}")
    if label:
        out.append(rf"\label{{{label}}}")
    wide = len(df.columns) > 8
    out += [r"\resizebox{\textwidth}{!}{%"] if wide else []
    out += [rf"\begin{{tabular}}{{{colspec}}}", r"\toprule", head, r"\midrule", *body,
            r"\bottomrule", r"\end{tabular}" + ("}" if wide else "")]
    out.append(r"\end{table}")
    return "\n".join(out) + "\n"


# LaTeX layouts for the tables the paper includes (text-heavy columns wrap).
LATEX_LAYOUT = {
    "verdicts": (["participants", "latency test", "throughput test"],
                 "lp{0.39\\textwidth}p{0.39\\textwidth}",
                 "Verdicts per participant count, each qualified by its test "
                 "(multicast vs unicast change of the median with its 95% interval)."),
    "summary": (None, None, "Mean, median and p99 with 95% block-bootstrap intervals."),
    "explanations": (["participants", "wire evidence", "explanation"],
                     "lp{0.36\\textwidth}p{0.42\\textwidth}",
                     "Wire evidence and the dominant difference between the modes."),
    "ablation": (["participants", "factor", "metric", "fidelity", "baseline verdict",
                  "switched verdict", "effect on the penalty", "ratio change_pct", "p_holm"],
                 "lp{0.2\\textwidth}lp{0.1\\textwidth}lllrr",
                 "Ablations: each factor switched alone from its baseline; the verdicts about "
                 "the modes on both sides, what switching does to multicast's penalty, and the "
                 "interaction test (multicast/unicast ratio switched vs baseline, %, Holm)."),
}


for _name, _what in (("implementation", "the implementations"),
                     ("placement", "the placements"), ("reliability", "the reliability levels")):
    LATEX_LAYOUT[f"{_name}_verdicts"] = (
        None, None, f"Verdicts about {_what} per matrix point: the second level's change of "
        "the run values against the first, % with its 95% t interval (runs as the unit, "
        "Welch, TOST, Holm over the table).")
LATEX_LAYOUT["study"] = (
    ["participants", "mode", "latency mean µs (study)", "latency median µs (verdict)",
     "Mbit/s mean (study)", "Mbit/s median second (verdict)", "seconds left out",
     "stalled seconds", "missing-subscriber seconds"],
    None, "The study's statistics beside the verdicts': publisher 0's mean latency against the "
    "median (geometric mean of the run medians); the mean second of throughput summed over "
    "subscribers (Mbit/s, -dataLen bytes per sample, Perftest's 28-byte overhead included) "
    "against the verdict's median second, which counts only seconds in which every "
    "subscriber reported.")
LATEX_LAYOUT["mode_verdicts_by_size"] = (
    None, None, "Verdicts about the modes per message size: multicast's change against "
    "unicast, % with its 95% t interval (runs as the unit, Holm over the campaign).")


def write_tables(tables: dict[str, pd.DataFrame], out_dir: Path) -> list[Path]:
    """Write every table as CSV, Markdown and LaTeX into ``out_dir``; return the paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, df in tables.items():
        for ext, text in (
            ("csv", df.to_csv(index=False)),
            ("md", to_markdown(df)),
            ("tex", _latex_for(name, df)),
        ):
            path = out_dir / f"{name}.{ext}"
            path.write_text(text)
            written.append(path)
    if "verdicts" in tables:
        path = out_dir / "explanations.tex"
        path.write_text(_latex_for("explanations", tables["verdicts"]))
        written.append(path)
    return written


def _latex_for(name: str, df: pd.DataFrame) -> str:
    cols, colspec, caption = LATEX_LAYOUT.get(name, (None, None, f"{name} table"))
    if df.empty:
        return f"% {name}: empty table\n"
    sub = df[cols] if cols else df
    if "group" in df.columns and df["group"].nunique() == 1 and "group" in sub.columns:
        sub = sub.drop(columns="group")
    if name in ("statistics", "comparisons", "wire"):
        size = r"\tiny"
        return to_latex(sub, caption=caption, label=f"tab:{name}", size=size)
    return to_latex(sub, colspec=colspec, caption=caption, label=f"tab:{name}")


__all__ = ["WIRE_EVIDENCE", "all_tables", "to_latex", "to_markdown", "write_tables"]
