"""Tables as dataframes, and writers for CSV, Markdown and LaTeX (no extra dependencies)."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from analysis import stats
from analysis.analyse import METRICS, MODES, Analysis
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
