"""`mcastlab report`: figures, tables and one Markdown report read top to bottom."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from analysis import stats
from analysis.analyse import Analysis, analyse
from analysis.figures import all_figures
from analysis.load import load_campaign
from analysis.tables import all_tables, latex_escape, to_markdown, write_tables


@dataclass
class ReportResult:
    out_dir: Path
    report: Path
    figures: list[Path]
    tables: list[Path]
    seconds: float


METHOD = """\
**How to read this report.** For every participant count the two modes are compared on
two metrics: publisher 0's one-way latency (every latency sample; lower is better) and
the per-second throughput summed over all subscribers (higher is better). Each ECDF is
drawn with a {conf:.0f}% *simultaneous* DKW band (the whole curve lies inside it with that
probability), computed on the *effective* sample size: the samples of a run are
autocorrelated, so the band uses n divided by the variance inflation that a block
bootstrap measures.

**The verdict** comes from a test of first-order stochastic dominance on the difference
of the two ECDFs, ΔF(x). Blocks of consecutive samples (blocks never span two runs; with
at least {min_reps} repetitions per mode the runs themselves) are permuted between the
two modes ({n_boot} permutations, or every split when there are fewer) to find the
threshold c that sup|ΔF| exceeds with probability α under identical distributions.
Wherever |ΔF(x)| > c, one mode has significantly more mass below x.

- *X dominates*: X is significantly better somewhere and significantly worse nowhere.
- *Crossing*: each mode is significantly better somewhere; the crossover point (dotted
  line; grey interval = where it can lie) splits the range, and the share of each
  mode's samples below it is given.
- *No significant difference*: |ΔF| stays below c everywhere.

On identical distributions any verdict other than "no significant difference" occurs
with probability about α = {alpha}. Effect sizes are the change of multicast relative to
unicast of the mean and the median, with {conf:.0f}% block-bootstrap intervals. "p" is
the permutation p-value of sup|ΔF|; the iid Kolmogorov–Smirnov p-value in the
comparison table ignores autocorrelation and is shown only for contrast.
"""


def _img(rel: str, alt: str) -> str:
    return f"![{alt}]({rel})\n"


def fidelity_summary(analysis: Analysis) -> str:
    """The report's first paragraph: how many runs the testbed, not the network, bound,
    and how many repetitions the verdicts rest on."""
    runs = analysis.campaign.runs
    bound = runs["fidelity_bound"]
    n = len(runs)
    host, unknown = int((bound == "host").sum()), int((bound == "unknown").sum())
    lines = ["## Fidelity: did the testbed keep up?\n"]
    if host:
        where = sorted({p.label for p in analysis.pairs if p.testbed_bound},
                       key=lambda s: int(s.split("×")[0]))
        lines.append(
            f"**{host} of {n} runs were host-bound**: the emulator's CPUs, not the network, "
            f"limited them (socket drops, CPU pressure, late timers or a publication rate "
            f"not reached; manifest `fidelity`). Comparisons with such a run are reported as "
            f"*testbed-bound*, with their reasons, never as a verdict: {', '.join(where)}. "
            "To measure the network there: fewer participants per core, a lower `pub_rate` "
            "(offered load), CPU-limited hosts, or more machines.")
    else:
        lines.append(f"No run of the {n} was host-bound" + (
            f" ({unknown} were recorded without the fidelity monitor: unknown)" if unknown
            else "") + ".")
    if unknown and host:
        lines.append(f"{unknown} runs were recorded without the fidelity monitor (unknown).")
    reps = sorted({min(p.repetitions.values()) for p in analysis.pairs if p.complete})
    if reps == [1]:
        lines.append("Each verdict rests on **one run per mode**: it is conditional on these "
                     "runs, since run-to-run variation is not estimated; at least "
                     f"{stats.MIN_REPETITIONS_AS_UNITS} repetitions make runs the resampled "
                     "units.")
    elif reps:
        lines.append(f"Verdicts rest on {'–'.join(str(r) for r in (reps[0], reps[-1]))} "
                     "runs per mode.")
    return "\n".join(lines) + "\n"


def write_report(analysis: Analysis, out_dir: Path) -> ReportResult:
    start = time.perf_counter()
    fig_dir, tab_dir = out_dir / "figures", out_dir / "tables"
    figures = all_figures(analysis, fig_dir)
    tables = all_tables(analysis)
    table_paths = write_tables(tables, tab_dir)
    camp = analysis.campaign
    n_lat = len(camp.latency)
    md: list[str] = [
        f"# mcastlab report: {camp.name}\n",
        f"Results: `{camp.path}`" + (f" · scenario `{camp.scenario}`" if camp.scenario else ""),
        f" · {len(camp.runs)} complete runs · {n_lat:,} latency samples · "
        f"{len(camp.throughput):,} subscriber-seconds\n",
    ]
    md.append(fidelity_summary(analysis))
    if camp.skipped:
        md.append("**Runs not analysed** (incomplete or failed): "
                  + "; ".join(f"`{r}` ({why})" for r, why in camp.skipped) + "\n")
    md.append(METHOD.format(conf=100 * (1 - analysis.alpha), alpha=analysis.alpha,
                            n_boot=analysis.n_boot, min_reps=stats.MIN_REPETITIONS_AS_UNITS))
    verdicts = tables["verdicts"]
    for group in analysis.groups:
        sfx = "" if len(analysis.groups) == 1 else f"-{group}"
        sel = verdicts[verdicts["group"] == group]
        md += [
            f"## {group}: verdicts\n",
            "Each cell: verdict, crossover(s) if any, the test behind it, and multicast's "
            "change of the median relative to unicast with its 95% interval.\n",
            to_markdown(sel[["participants", "fidelity", "runs per mode", "latency test",
                             "throughput test"]].rename(
                columns={"latency test": "latency (lower is better)",
                         "throughput test": "throughput (higher is better)"})),
            "\n### What the wire shows\n",
            to_markdown(sel[["participants", "wire evidence"]]),
            "\n" + "\n".join(f"- {s}" for s in sel["explanation"]) + "\n",
            f"\n## {group}: latency\n",
            _img(f"figures/ecdf_latency{sfx}.png", "latency ECDFs"),
            "\nThe test behind the verdicts: where ΔF leaves the grey band, one mode is "
            "significantly better.\n\n",
            _img(f"figures/difference_latency{sfx}.png", "latency ECDF differences"),
            f"\n## {group}: throughput\n",
            _img(f"figures/ecdf_throughput{sfx}.png", "throughput ECDFs"),
            "\n",
            _img(f"figures/difference_throughput{sfx}.png", "throughput ECDF differences"),
            "\nPer subscriber (every subscriber-second of every run):\n\n",
            _img(f"figures/ecdf_throughput_per_subscriber{sfx}.png", "per-subscriber ECDFs"),
            f"\n## {group}: summary vs participant count\n",
            _img(f"figures/summary{sfx}.png", "summary vs participant count"),
            to_markdown(tables["summary"][tables["summary"]["group"] == group].drop(
                columns="group")),
            f"\n## {group}: wire metrics vs participant count\n",
            _img(f"figures/wire_metrics{sfx}.png", "wire metrics"),
        ]
    comp = tables["comparisons"]
    if not comp.empty:
        md += ["\n## Test details\n",
               "p: block-permutation p-value of sup|ΔF|; c: its critical value; "
               "ks_D / ks_p_if_iid: "
               "scipy's two-sample KS on the raw samples (p assumes independence); "
               "P_unicast_lower: probability that a unicast sample is lower than a "
               "multicast one; areas: integral of the ECDF gap where each mode is better "
               "(their difference is the difference of the means).\n\n",
               to_markdown(comp.drop(columns=[c for c in comp.columns
                                              if c.endswith(("_lo", "_hi"))]))]
    st = tables["statistics"]
    if not st.empty:
        md += ["\n## Statistics per configuration\n",
               "Point estimates from all samples; [lo, hi] are 95% percentile intervals of "
               "the block bootstrap (`resampling`: blocks of `block_len` samples, or whole "
               "repetitions); `n_eff`: effective sample size behind the DKW band "
               "(half-width `dkw_eps`).\n\n",
               to_markdown(st.drop(columns="group") if st["group"].nunique() == 1 else st)]
    md += ["\n## Runs\n", to_markdown(camp.runs[["run_id", "group", "mode", "publishers",
                                                 "subscribers", "repetition",
                                                 "latency_samples", "wire_available",
                                                 "fidelity_bound", "fidelity_reasons"]]),
           "\nEvery table is also in `tables/` as CSV, Markdown and LaTeX; every figure in "
           "`figures/` as PDF and PNG.\n"]
    table_paths += _paper_inputs(analysis, tables, tab_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    report = out_dir / "report.md"
    report.write_text("\n".join(md))
    return ReportResult(out_dir, report, figures, table_paths, time.perf_counter() - start)


def _paper_inputs(analysis: Analysis, tables: dict, tab_dir: Path) -> list[Path]:
    """LaTeX macros and the explanation sentences, for paper/main.tex."""
    camp = analysis.campaign
    macros = {
        "CampaignName": latex_escape(camp.name),
        "CampaignRuns": str(len(camp.runs)),
        "CampaignLatencySamples": f"{len(camp.latency):,}".replace(",", "{,}"),
        "CampaignCounts": latex_escape(", ".join(p.label for p in analysis.pairs)),
        "AnalysisAlpha": f"{analysis.alpha:g}",
        "AnalysisBoot": str(analysis.n_boot),
    }
    macro_path = tab_dir / "campaign.tex"
    macro_path.write_text("".join(f"\\newcommand{{\\{k}}}{{{v}}}\n" for k, v in macros.items()))
    sentences = tables["verdicts"]["explanation"].tolist()
    sent_path = tab_dir / "sentences.tex"
    sent_path.write_text("\\begin{itemize}\n"
                         + "".join(f"\\item {latex_escape(s)}\n" for s in sentences)
                         + "\\end{itemize}\n")
    return [macro_path, sent_path]


def generate(results: str | Path, out_dir: str | Path | None = None, *,
             n_boot: int = stats.N_BOOT, alpha: float = stats.ALPHA) -> ReportResult:
    """Load ``results``, analyse it, and write figures, tables and report.md."""
    campaign = load_campaign(results)
    out = Path(out_dir) if out_dir is not None else Path(results) / "report"
    analysis = analyse(campaign, n_boot=n_boot, alpha=alpha)
    return write_report(analysis, out)
