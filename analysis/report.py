"""`mcastlab report`: figures, tables and one Markdown report read top to bottom."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from analysis import modes, stats, views
from analysis.analyse import MODES, Analysis, Pair, analyse
from analysis.figures import all_figures, view_figures
from analysis.load import Campaign, ResultsError, load_campaign
from analysis.pool import pool
from analysis.tables import all_tables, latex_escape, to_markdown, write_tables
from analysis.testbed import advice_sentence, emulator_failed, run_reasons
from analysis.verdicts import window_notes
from mcastlab import safepath


@dataclass
class ReportResult:
    out_dir: Path
    report: Path
    figures: list[Path]
    tables: list[Path]
    seconds: float
    summary: dict = field(default_factory=dict)  # summary_dict(), for --json


METHOD = """\
**How to read this report.** For every participant count the two modes are compared on
two metrics: publisher 0's one-way latency (every latency sample; lower is better) and
the per-second throughput summed over all subscribers (higher is better).

**The verdict is about the modes, with runs as the unit.** Each run is reduced to its
median (of latency; of per-second throughput), on a log scale. With at least 2 runs per
mode, Welch's t-test compares the modes' run medians (unequal variances and run counts
allowed) and gives multicast's change against unicast with a {conf:.0f}% t interval;
two one-sided tests (TOST) check equivalence within a pre-declared margin of
±{margin:.0%}. Holm's method controls the family-wise error rate at α = {alpha} over
the whole table — every network-bound cell with ≥ 2 runs per mode, counts × metrics
({family} cells here) — separately for difference and equivalence; the adjusted p-values
are in the tables. Outcomes:

- *X better*: the run medians differ (Holm-adjusted p < α) and are not equivalent.
- *Practically equal*: the change lies within ±{margin:.0%} (Holm-adjusted TOST p < α).
- *Undecided*: neither is shown — or only one run per mode exists, so run-to-run
  variation (which alone moved the median of unpaced 1×1 latency by −34% and +27% in two
  identical campaigns on these machines) is unknown.
- *Testbed-bound*: a run was host-bound or unverified (see Fidelity); no verdict.

**Within the runs** a test of first-order stochastic dominance on the difference of the
two ECDFs, ΔF(x), describes the distributions: blocks of consecutive samples (never
spanning two runs; with at least {min_reps} repetitions per mode the runs themselves) are
permuted between the modes ({n_boot} permutations, or every split when there are fewer),
and each mode is also resampled on its own ({n_boot} block-bootstrap replicates with its
own block length, centred at its ECDF, the critical value widened to a t quantile for
the degrees of freedom of few blocks), since exchanging blocks is not valid when the
modes differ in sample size and autocorrelation. The threshold c that sup|ΔF| must
exceed is the larger of the two tests' 1 − α quantiles, so a difference is called only
where both tests call it; where |ΔF(x)| > c one mode has significantly more mass below x
(*X dominates*, *crossing*, *no significant difference*). *X dominates* is said only where
the worse tail agrees (p99 and p99.9 for latency, p1 and p0.1 for throughput, with
block-bootstrap intervals of their change): where X's tail is significantly worse it is a
*tail reversal*, where only its p99 (p1) estimate is worse, *X better in the body*.
With fewer than {min_reps} runs this test is conditional on the compared runs: it says
where these runs differ, not that the modes do. Each ECDF is drawn with a {conf:.0f}%
*simultaneous* DKW band on the effective sample size (n divided by the variance inflation
a block bootstrap measures).
The iid Kolmogorov–Smirnov p-value in the comparison table ignores autocorrelation and is
shown only for contrast.
"""


def _img(rel: str, alt: str) -> str:
    return f"![{alt}]({rel})\n"


def _where(analysis: Analysis, pair: Pair) -> str:
    """'25×25', or '25×25 fastdds' when the campaign compares implementations."""
    return f"{pair.label} {pair.agent}" if len(analysis.agents) > 1 else pair.label


def _cell_name(analysis: Analysis, pair: Pair) -> str:
    """'25×25', or with the pair's group when the campaign has several (an ablation's
    cells share their counts, so the count alone does not say which cell is meant)."""
    if len(analysis.groups) > 1:
        return f"{pair.group} {pair.label}"
    return _where(analysis, pair)


def fidelity_summary(analysis: Analysis) -> str:
    """The report's first paragraph: how many runs the testbed, not the network, bound,
    and how many repetitions the verdicts rest on."""
    runs = analysis.campaign.runs
    bound = runs["fidelity_bound"]
    n = len(runs)
    host, unknown = int((bound == "host").sum()), int((bound == "unknown").sum())
    lines = ["## Fidelity: did the testbed keep up?\n"]
    if host:
        where = sorted({_where(analysis, p) for p in analysis.pairs if p.testbed_bound},
                       key=lambda s: int(s.split("×")[0]))
        reasons = run_reasons(runs[bound == "host"])
        tip = advice_sentence(reasons)
        if emulator_failed(reasons):  # CPU-limited hosts: the emulator failed
            lines.append(
                f"**{host} of {n} runs were host-bound**: the emulator did not keep its "
                f"promise to the CPU-limited hosts (a host got less than its allocation, or "
                f"the network plane outside the hosts fell behind; manifest `fidelity`). "
                f"Comparisons with such a run are reported as *testbed-bound*, with their "
                f"reasons, never as a verdict: {', '.join(where)}. {tip}")
        else:
            lines.append(
                f"**{host} of {n} runs were host-bound**: the emulator's CPUs, not the "
                f"network, limited them (socket drops, CPU pressure, late timers or a "
                f"publication rate not reached; manifest `fidelity`). Comparisons with such "
                f"a run are reported as *testbed-bound*, with their reasons, never as a "
                f"verdict: {', '.join(where)}. {tip}")
    else:
        lines.append(f"No run of the {n} was host-bound" + (
            f" ({unknown} were recorded without the fidelity monitor: unknown)" if unknown
            else "") + ".")
    if unknown and host:
        lines.append(f"{unknown} runs were recorded without the fidelity monitor (unknown).")
    unverified = runs[bound == "unverified"]
    if len(unverified):
        items = [f"{r.run_id}: {r.fidelity_reasons}" for r in unverified.itertuples()]
        lines.append(
            f"**{len(unverified)} of {n} runs were unverified**: a fidelity check could not "
            "run (a sampler gave nothing, counters were missing, or the measurement window "
            "never opened), so whether the testbed kept up is unknown; comparisons with such "
            "a run are reported as *testbed-bound*, never as a verdict: "
            + " | ".join(items[:5]) + (" …" if len(items) > 5 else "")
            + f". {advice_sentence(run_reasons(unverified))}")
    saturated = runs[bound == "saturated"]
    if len(saturated):
        example = str(saturated["fidelity_saturation"].iloc[-1])
        lines.append(
            f"{len(saturated)} of {n} runs had **saturated hosts** under faithful emulation: "
            "the emulated hosts are machines of fixed capacity (CPU-limited) and each got its "
            "allocation, so their saturation is a property of the emulated machines, as of "
            f"the study's own VMs, and these runs give verdicts (e.g. {example}).")
    retaken = retaken_summary(runs)
    if retaken:
        lines.append(retaken)
    by_cpu = drops_by_cpu_summary(runs)
    if by_cpu:
        lines.append(by_cpu)
    warned = runs[_text_column(runs, "fidelity_warnings") != ""]
    if len(warned):
        items = [f"{r.run_id}: {r.fidelity_warnings}" for r in warned.itertuples()][:5]
        lines.append(f"Fidelity warnings in {len(warned)} run(s): " + " | ".join(items)
                     + (" …" if len(warned) > 5 else ""))
    lines.append(repetitions_summary(analysis))
    return "\n".join(lines) + "\n"


def _text_column(runs: pd.DataFrame, name: str) -> pd.Series:
    """A text column of the runs table, '' where missing (campaigns recorded before it)."""
    return runs.get(name, pd.Series("", index=runs.index)).fillna("").astype(str)


def retaken_summary(runs: pd.DataFrame) -> str:
    """The runs taken again because an earlier attempt's emulation was unfaithful (or
    steal time alone slowed it), by mode: a mode that needed more retakes is worth a look,
    since the kept runs are the attempts the machine could emulate ('' when none).

    >>> runs = pd.DataFrame({"run_id": ["a", "b", "c"], "mode": ["unicast", "multicast",
    ...     "multicast"], "retaken": ["", "attempt 1 (superseded/T): late timer", ""]})
    >>> retaken_summary(runs)[:85]
    '**Taken again: 1 of 3 runs** (multicast 1): an earlier attempt was unfaithful (the em'
    """
    taken = runs[_text_column(runs, "retaken") != ""]
    if not len(taken):
        return ""
    by_mode = ", ".join(f"{m} {n}" for m, n in taken["mode"].value_counts().sort_index().items())
    items = [f"{r.run_id}: {r.retaken}" for r in taken.itertuples()][:3]
    return (f"**Taken again: {len(taken)} of {len(runs)} runs** ({by_mode}): an earlier "
            "attempt was unfaithful (the emulator did not keep its promise, or steal time "
            "alone slowed it); that attempt is kept in the campaign's superseded/ and the "
            "verdicts use the run taken again (manifest `retaken`): " + " | ".join(items)
            + (" …" if len(taken) > 3 else ""))


def drops_by_cpu_summary(runs: pd.DataFrame) -> str:
    """Which CPU's pinned hosts dropped the most socket datagrams, over the runs where that
    could be told ('' when no run could): hosts of equal allocation are meant to be equal
    machines, and a CPU whose hosts drop more turns into run-to-run spread.

    >>> runs = pd.DataFrame({"run_id": ["a", "b", "c"],
    ...                      "fidelity_drops_cpu": ["cpu0", "cpu0", ""],
    ...                      "fidelity_drops_by_cpu": ["x", "CPU 0 (h1) 2.00%, CPU 1 (h2) 0.10%",
    ...                                                ""]})
    >>> drops_by_cpu_summary(runs)[:80]
    'Socket drops by CPU: in 2 of 2 runs whose pinned hosts dropped datagrams, the ho'
    """
    col = _text_column(runs, "fidelity_drops_cpu")
    told = runs[col != ""]
    if not len(told):
        return ""
    counts = col[col != ""].value_counts()
    cpu, k = str(counts.index[0]), int(counts.iloc[0])
    last = told[col[col != ""] == cpu].iloc[-1]
    others = ", ".join(f"CPU {c.removeprefix('cpu')} in {int(n)}"
                       for c, n in counts.iloc[1:].items())
    return (f"Socket drops by CPU: in {k} of {len(told)} runs whose pinned hosts dropped "
            f"datagrams, the hosts on CPU {cpu.removeprefix('cpu')} dropped the largest share"
            + (f" ({others})" if others else "")
            + f" (e.g. {last['run_id']}: {last['fidelity_drops_by_cpu']}). Hosts of equal "
            "allocation are meant to be equal machines; where one CPU's hosts drop more in "
            "most runs, part of the run-to-run spread is that CPU's, not the mode's (manifest "
            "`fidelity.per_cpu`).")


def repetitions_summary(analysis: Analysis) -> str:
    """How many runs per mode each verdict rests on, and what more runs would decide."""
    by_reps: dict[int, list[str]] = {}
    for p in analysis.pairs:
        if p.complete:
            by_reps.setdefault(min(p.repetitions.values()), []).append(_where(analysis, p))
    if not by_reps:
        return ""
    parts = [f"{r} run{'s' if r > 1 else ''} per mode at "
             f"{', '.join(dict.fromkeys(labels))}"
             for r, labels in sorted(by_reps.items())]
    text = "Verdicts rest on " + "; ".join(parts) + "."
    single = by_reps.get(1, [])
    net_single = [_where(analysis, p) for p in analysis.pairs
                  if p.complete and min(p.repetitions.values()) == 1 and not p.testbed_bound]
    if single:
        text += (" With one run per mode the run-to-run variation is unknown, so those cells"
                 " are *undecided* (their within-run test is conditional on the two runs)"
                 + (f": {', '.join(net_single)}" if net_single else "") + ".")
    plan = more_runs_plan(analysis)
    return f"{text} {plan}" if plan else text


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:.0f} min" if seconds >= 90 else f"{seconds:.0f} s"


def more_runs_plan(analysis: Analysis) -> str:
    """What more runs would decide: each undecided cell's runs per mode at the spread its
    runs showed (:func:`analysis.modes.runs_to_decide`), the runs that adds over the
    campaign and about how long they take at its runs' own durations; and the cells that no
    number of runs decides because their change sits at the equivalence margin."""
    runs = analysis.campaign.runs
    seconds = (runs.set_index("run_id")["run_duration_s"] if "run_duration_s" in runs
               else pd.Series(dtype=float))
    decidable: list[str] = []
    at_margin: list[tuple[str, modes.ModeVerdict]] = []
    added, cost, timed = 0, 0.0, True
    for p in analysis.pairs:
        if not p.complete or p.testbed_bound:
            continue
        need = 0
        for metric, v in p.verdicts.items():
            if v.outcome != modes.UNDECIDED or not v.testable:
                continue
            n = modes.runs_to_decide(v)
            if n is None:
                at_margin.append((f"{_cell_name(analysis, p)} {metric}", v))
            else:
                decidable.append(f"{_cell_name(analysis, p)} {metric} ({n})")
                need = max(need, n)
        more = sum(max(0, need - k) for k in p.repetitions.values())
        if not more:
            continue
        ids = [r for rs in p.runs.values() for r in rs]
        per_run = seconds.reindex(ids).dropna()
        added += more
        if len(per_run):
            cost += more * float(per_run.mean())
        else:
            timed = False
    parts = []
    if decidable:
        when = (f", about {_minutes(cost)} at this campaign's run durations" if timed
                else "")
        parts.append(
            f"More runs would decide {len(decidable)} undecided cell"
            f"{'s' if len(decidable) > 1 else ''} if the modes' runs kept the change and "
            f"spread they showed (runs per mode in parentheses; at that count a campaign "
            f"decides such a change about half the time): {', '.join(decidable)}. "
            f"That is {added} more runs{when}: raise `repetitions_by_count`"
            + (" (`baseline_repetitions_by_count` for the baseline of a one-at-a-time "
               "design)" if len(analysis.groups) > 1 else "")
            + ", or add the runs of further campaigns of this configuration (`mcastlab "
            "report A B … --out DIR` pools them).")
    if at_margin:
        parts.append(
            f"No run count up to {modes.MAX_RUNS_ESTIMATE} per mode decides "
            f"{', '.join(name for name, _ in at_margin)}: at this spread their change is "
            f"too close to the ±{at_margin[0][1].margin:.0%} equivalence margin to call "
            "the modes either different or practically equal.")
    return " ".join(parts)


def coverage_notes(runs: pd.DataFrame) -> str:
    """Runs whose capture misses part of the run (a ring buffer that wrapped keeps only
    the end): their wire figures describe only that part. Empty when every capture
    covers its whole run (or coverage was not recorded)."""
    from captures.coverage import describe

    cols = [f"wire_capture_{k}" for k in ("covered_s", "run_s", "missing_start_s",
                                         "missing_end_s")]
    if not set(cols) <= set(runs.columns):
        return ""
    lines = []
    for rid, *nums in runs[["run_id", *cols]].itertuples(index=False):
        if all(np.isfinite(v) for v in nums):
            whole, text = describe(*nums)
            if not whole:
                lines.append(f"- `{rid}`: {text}")
    if not lines:
        return ""
    return ("\nCaptures that do not cover their whole run (their wire figures describe only "
            "the part captured; manifest `capture_coverage`):\n\n" + "\n".join(lines) + "\n")


def write_report(analysis: Analysis, out_dir: Path, *, pooled_note: str = "") -> ReportResult:
    start = time.perf_counter()
    fig_dir, tab_dir = out_dir / "figures", out_dir / "tables"
    camp = analysis.campaign
    design = views.Design.of(camp.runs)
    tables = all_tables(analysis)
    # Against message size the views replace the per-group templates (one per size, test
    # and implementation would repeat the same panels dozens of times).
    figures = ([] if design.by_size else all_figures(analysis, fig_dir)) + view_figures(
        tables, fig_dir)
    table_paths = write_tables(tables, tab_dir)
    n_lat = len(camp.latency)
    md: list[str] = [
        f"# mcastlab report: {camp.name}\n",
        (f"Results: {len(camp.sources)} campaigns pooled (below)" if camp.sources
         else f"Results: `{camp.path}`")
        + (f" · scenario `{camp.scenario}`" if camp.scenario else ""),
        f" · {len(camp.runs)} complete runs · {n_lat:,} latency samples"
        + (f" · {len(camp.throughput):,} subscriber-seconds" if len(camp.throughput) else "")
        + "\n",
    ]
    if camp.sources:
        md.append(f"**Pooled from {len(camp.sources)} campaigns** of one configuration "
                  "(runs are the unit: their runs are more runs of one experiment; run ids "
                  "`k/…` name the k-th): "
                  + "; ".join(f"{k}. `{p}` ({n} runs)"
                              for k, (p, n) in enumerate(camp.sources, start=1)) + ". "
                  + pooled_note)
    md += views.question(design)
    md.append(fidelity_summary(analysis))
    if camp.skipped:
        md.append("**Runs not analysed** (not run, incomplete or failed): "
                  + "; ".join(f"`{r}` ({why})" for r, why in camp.skipped) + "\n")
    if any(p.complete for p in analysis.pairs):  # the modes are compared somewhere
        family = max((v.family for v in analysis.verdicts), default=0)
        md.append(METHOD.format(conf=100 * (1 - analysis.alpha), alpha=analysis.alpha,
                                n_boot=analysis.n_boot,
                                min_reps=stats.MIN_REPETITIONS_AS_UNITS,
                                margin=analysis.margin, family=family))
    if design.by_size:
        md += size_sections(analysis, design, tables)
    else:
        md += implementations_section(analysis, tables)
        md += axis_sections(design, tables)
        md += ablation_section(tables)
        md += group_sections(analysis, tables)
    md += study_section(tables)
    md += detail_sections(camp, design, tables)
    table_paths += _paper_inputs(analysis, tables, tab_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    report = out_dir / "report.md"
    report.write_text("\n".join(md))
    return ReportResult(out_dir, report, figures, table_paths, time.perf_counter() - start,
                        summary_dict(analysis))


def detail_sections(camp: Campaign, design: views.Design,
                    tables: dict[str, pd.DataFrame]) -> list[str]:
    """The report's appendix: the tests behind the verdicts, the within-run tests, the
    statistics per configuration and the runs."""
    md: list[str] = []
    mv = tables["mode_verdicts"]
    if not mv.empty:
        md += ["\n## Verdicts about the modes: test details\n",
               "Run medians on a log scale; `change_*`: multicast against unicast, % with its "
               "95% Welch t interval; `p_*_holm`: Holm-adjusted over the `family` of "
               "network-bound cells with ≥ 2 runs per mode; equivalence margin ±`margin`.\n\n",
               to_markdown(mv.drop(columns=["group"] if mv["group"].nunique() == 1 else []))]
    comp = tables["comparisons"]
    if not comp.empty:
        md += ["\n## Within-run distribution tests\n",
               "p: p-value of sup|ΔF|, the larger of the block-permutation and the "
               "per-mode block-bootstrap test's (p_permutation, p_bootstrap); c: the "
               "larger of their critical values (c_permutation, c_bootstrap); "
               "ks_D / ks_p_if_iid: "
               "scipy's two-sample KS on the raw samples (p assumes independence); "
               "P_unicast_lower: probability that a unicast sample is lower than a "
               "multicast one; areas: integral of the ECDF gap where each mode is better "
               "(their difference is the difference of the means).\n\n",
               to_markdown(comp.drop(columns=[c for c in comp.columns
                                              if c.endswith(("_lo", "_hi"))]))]
    st = tables["statistics"]
    if not st.empty and not design.by_size:  # per group: the views above replace it
        md += ["\n## Statistics per configuration\n",
               "Point estimates from all samples; [lo, hi] are 95% intervals: with "
               "`resampling` = blocks, percentile intervals of the block bootstrap (blocks of "
               "`block_len` samples, conditional on the runs); with `resampling` = "
               "repetitions (≥ 5 runs), cluster t intervals over the `units` runs (ratio "
               "estimator for the mean, Woodruff for quantiles; a percentile bootstrap over "
               "5–10 runs under-covers); `n_eff`: effective sample size behind the DKW band "
               "(half-width `dkw_eps`).\n\n",
               to_markdown(st.drop(columns="group") if st["group"].nunique() == 1 else st)]
    md += ["\n## Runs\n", to_markdown(camp.runs[["run_id", "group", "mode", "publishers",
                                                 "subscribers", "repetition",
                                                 "latency_samples", "wire_available",
                                                 "fidelity_bound", "fidelity_reasons"]]),
           "\nEvery table is also in `tables/` as CSV, Markdown and LaTeX; every figure in "
           "`figures/` as PDF and PNG.\n"]
    return md


def group_sections(analysis: Analysis, tables: dict[str, pd.DataFrame]) -> list[str]:
    """Per group, against the participant count: the verdicts about the modes (where both
    ran), the ECDFs of the metrics the group measured (an RTT test has no throughput: its
    subscribers only echo), the summary and the wire metrics."""
    verdicts = tables["verdicts"]
    camp = analysis.campaign
    md: list[str] = []
    for group in analysis.groups:
        sfx = "" if len(analysis.groups) == 1 else f"-{group}"
        pairs = analysis.pairs_of(group)
        compared = any(p.complete for p in pairs)
        has = {metric: any(p.curve(metric, m) is not None for p in pairs for m in MODES)
               for metric in ("latency", "throughput")}
        if compared:
            sel = verdicts[verdicts["group"] == group]
            md += [
                f"## {group}: verdicts\n",
                "Each cell: the verdict about the modes and the run-level test behind it "
                "(multicast's change of the run medians against unicast, 95% interval, Holm-"
                "adjusted p-values), then what the within-run distribution test saw, "
                "conditional on the compared runs.\n",
                to_markdown(sel[["participants", "fidelity", "runs per mode",
                                 "latency verdict", "throughput verdict"]]),
                "\n",
                to_markdown(sel[["participants", "latency test", "throughput test"]].rename(
                    columns={"latency test": "latency (lower is better)",
                             "throughput test": "throughput (higher is better)"})),
                "\n### What the wire shows\n",
                to_markdown(sel[["participants", "wire evidence"]]),
                window_notes(analysis.pairs_of(group)),
                "\n" + "\n".join(f"- {s}" for s in sel["explanation"]) + "\n",
            ]
        if has["latency"]:
            md += [f"\n## {group}: latency\n",
                   _img(f"figures/ecdf_latency{sfx}.png", "latency ECDFs")]
            if compared:
                md += ["\nThe test behind the verdicts: where ΔF leaves the grey band, one "
                       "mode is significantly better.\n\n",
                       _img(f"figures/difference_latency{sfx}.png", "latency ECDF differences")]
        if has["throughput"]:
            md += [f"\n## {group}: throughput\n",
                   _img(f"figures/ecdf_throughput{sfx}.png", "throughput ECDFs"), "\n"]
            if compared:
                md.append(_img(f"figures/difference_throughput{sfx}.png",
                               "throughput ECDF differences"))
            md += ["\nPer subscriber (every subscriber-second of every run). The subscribers "
                   "of one run share its conditions: with ≥ 2 runs the runs are the clusters "
                   "of the intervals (t on runs − 1 degrees of freedom); with one run the band "
                   "and intervals are conditional on this run.\n\n",
                   _img(f"figures/ecdf_throughput_per_subscriber{sfx}.png",
                        "per-subscriber ECDFs")]
        md += [
            f"\n## {group}: summary vs participant count\n",
            _img(f"figures/summary{sfx}.png", "summary vs participant count"),
            to_markdown(tables["summary"][tables["summary"]["group"] == group].drop(
                columns="group")),
            f"\n## {group}: wire metrics vs participant count\n",
            _img(f"figures/wire_metrics{sfx}.png", "wire metrics"),
            coverage_notes(camp.runs[camp.runs["group"] == group]),
            window_notes(analysis.pairs_of(group)),
        ]
    return md


def implementations_section(analysis: Analysis, tables: dict[str, pd.DataFrame]) -> list[str]:
    """With several implementations ([matrix] agents): their verdict tables side by side and
    one sentence per cell saying whether the unicast-vs-multicast verdicts agree."""
    side = tables.get("implementations")
    agree = tables.get("implementation_agreement")
    if side is None or side.empty or agree is None:
        return []
    agents = analysis.agents
    counts = agree["agreement"].value_counts()
    return [
        f"## Implementations side by side: {', '.join(agents)}\n",
        "The same matrix, network and placement, run by run with each DDS implementation "
        "(`[matrix] agents`). Each implementation's verdicts are its own (runs as the unit, "
        "Holm over the whole campaign); a cell is *testbed-bound* for an implementation when "
        "one of its runs there was host-bound. *Across implementations*: `agree` (the same "
        "network-bound verdict), `contradict` (opposite modes better, or a mode better where "
        "another found them practically equal), `one says no difference` (a decided verdict "
        "beside an undecided one), `all undecided`, `testbed-bound` (for every "
        "implementation) or `mixed fidelity` (for some). Beside the verdicts, an interaction "
        "test asks whether multicast's effect itself differs between the implementations: "
        f"{agents[0]} is the reference; each other implementation's multicast/unicast ratio of "
        "the run medians against it, Welch–Satterthwaite t on the log run medians of the four "
        "groups of runs, Holm-adjusted over the table.\n",
        "Summary: " + ", ".join(f"{n} {k}" for k, n in sorted(counts.items())) + ".\n",
        to_markdown(side.fillna("not measured by this test")),
        "\n" + "\n".join(f"- {s}" for s in agree["sentence"]) + "\n",
    ]


def ablation_section(tables: dict[str, pd.DataFrame]) -> list[str]:
    """With factors that vary ([matrix] topology variants, placements, fanout, same_host,
    reliability, agents): the ablation table and one generated paragraph per participant count."""
    abl = tables.get("ablation")
    paras = tables.get("ablation_paragraphs")
    if abl is None or abl.empty or paras is None:
        return []
    return [
        "## Ablations: which factor changes multicast's penalty\n",
        "Each row: one factor switched from its baseline (the level most matrix points use), "
        "everything else equal, at one participant count; `fidelity`: which side had a "
        "host-bound run (testbed-bound), otherwise each side's as in the verdict tables "
        "(network-bound, or faithful with saturated hosts). The verdicts about the modes are "
        "those of the tables below (runs as the unit, Holm over the campaign); `change_pct`: "
        "multicast's median change against unicast. The interaction test asks whether "
        "switching the factor changes multicast's effect: the multicast/unicast ratio of the "
        "run medians with the factor switched against the baseline's (`ratio change_pct`, "
        "95% interval `lo`–`hi`), Welch–Satterthwaite t on the log run medians of the four "
        "groups of runs, Holm over this table. *Effect on the penalty* (a penalty: unicast "
        "better at the baseline): `reverses` (multicast better when switched), `removes` "
        "(practically equal), `reduces` / `worsens` (the interaction test shows it shrink / "
        "grow), `no change shown`, `cannot tell` (undecided when switched and no difference "
        "shown), `creates a penalty`, `no penalty` (`no penalty shown`: the baseline is "
        "undecided); `testbed-bound` when a run of either side was host-bound: such a cell "
        "is never read as evidence.\n",
        to_markdown(abl),
        "\n" + "\n".join(f"- {s}" for s in paras["paragraph"]) + "\n",
    ]


def study_section(tables: dict[str, pd.DataFrame]) -> list[str]:
    """The study's statistics (means, as it reported them) beside the verdicts' (medians),
    with the seconds that make them differ."""
    study = tables.get("study")
    if study is None or study.empty:
        return []
    one_group = study["group"].nunique() == 1
    shown = study.drop(columns=["why they differ"] + (["group"] if one_group else []))
    return [
        "\n## The study's statistics beside the verdicts\n",
        "The study compared the modes on means, as Perftest prints them: publisher 0's mean "
        "latency and the mean second of throughput summed over the subscribers, in Mbit/s "
        "(samples/s × `-dataLen` × 8 / 10⁶: each sample counts its payload and Perftest's "
        "28-byte overhead). The verdicts compare each run's median (latency; the median "
        "second of throughput, counting only seconds in which every subscriber that "
        "reported in the run reported) on a log scale: their columns give the geometric "
        "mean of the run medians, and their throughput, compared in samples/s, differs "
        "from Mbit/s by the constant `-dataLen` × 8 / 10⁶. Means over runs of each run's "
        "mean; `seconds`: every second in which any subscriber reported, over the runs; "
        "`seconds left out`: those the verdict does not count; `stalled seconds`: a "
        "subscriber received nothing; `missing-subscriber seconds`: fewer subscribers "
        "reported than the run had (both figures then lack their share).\n\n",
        to_markdown(shown),
        "\n" + "\n".join(
            f"- {'' if one_group else r['group'] + ' '}{r['participants']} {r['mode']}: "
            f"{r['why they differ']}" for r in study.to_dict("records")) + "\n",
    ]


def summary_dict(analysis: Analysis) -> dict:
    """The report's verdicts for scripts (`mcastlab report --json`): every pair's verdicts
    with its agent and fidelity, and with several implementations the agreement cells."""
    from analysis import ablation
    from analysis.compare import implementations
    from analysis.tables import ablation_cells
    from analysis.verdicts import fidelity_cell

    def num(v: float) -> float | None:
        return round(float(v), 4) if np.isfinite(v) else None

    verdicts = []
    for p in analysis.pairs:
        for metric, v in p.verdicts.items():
            verdicts.append({
                "group": p.group, "agent": p.agent, "participants": p.label, "metric": metric,
                "fidelity": fidelity_cell(p), "verdict": v.outcome,
                "runs": v.runs, "change_pct": [num(x) for x in v.change],
                "p_difference_holm": num(v.p_difference_adj),
                "p_equivalence_holm": num(v.p_equivalence_adj),
                "testbed_reasons": v.testbed_reasons})
    cells = implementations(analysis)
    abl = ablation_cells(analysis)
    return {"campaign": analysis.campaign.name, "agents": analysis.agents,
            "runs": len(analysis.campaign.runs),
            "pooled_from": [{"results": str(p), "runs": n}
                            for p, n in analysis.campaign.sources],
            "verdicts": verdicts,
            "implementations": [c.as_dict() for c in cells],
            "ablations": [c.as_dict() for c in abl],
            "ablation_paragraphs": ablation.paragraphs(abl)}


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
    sentences = tables["verdicts"].get("explanation", pd.Series(dtype=str)).tolist()
    sent_path = tab_dir / "sentences.tex"
    sent_path.write_text(("\\begin{itemize}\n"
                          + "".join(f"\\item {latex_escape(s)}\n" for s in sentences)
                          + "\\end{itemize}\n") if sentences
                         else "% no verdict about the modes: one mode only\n")
    out = [macro_path, sent_path]
    agree = tables.get("implementation_agreement")
    if agree is not None and not agree.empty:  # [matrix] agents: one sentence per cell
        impl_path = tab_dir / "implementation_sentences.tex"
        impl_path.write_text("\\begin{itemize}\n"
                             + "".join(f"\\item {latex_escape(s)}\n" for s in agree["sentence"])
                             + "\\end{itemize}\n")
        out.append(impl_path)
    paras = tables.get("ablation_paragraphs")
    if paras is not None and not paras.empty:  # factors switched: one paragraph per count
        abl_path = tab_dir / "ablation_paragraphs.tex"
        abl_path.write_text("\\begin{itemize}\n"
                            + "".join(f"\\item {latex_escape(s)}\n" for s in paras["paragraph"])
                            + "\\end{itemize}\n")
        out.append(abl_path)
    return out


def generate(results: str | Path | list[str | Path], out_dir: str | Path | None = None, *,
             n_boot: int = stats.N_BOOT, alpha: float = stats.ALPHA,
             margin: float = modes.EQUIVALENCE_MARGIN) -> ReportResult:
    """Load ``results`` (a campaign directory, or several of one configuration to pool),
    analyse it, and write figures, tables and report.md."""
    paths = [Path(p) for p in results] if isinstance(results, list) else [Path(results)]
    pooled_note = ""
    if len(paths) > 1:
        if out_dir is None:
            raise ResultsError("pooling several campaigns needs an output directory (--out)")
        campaign = pool(paths)
        pooled_note = agreement_note(campaign.pooled, n_boot=n_boot, alpha=alpha,
                                     margin=margin)
    else:
        campaign = load_campaign(paths[0])
    out = Path(out_dir) if out_dir is not None else paths[0] / "report"
    # A results folder from elsewhere may hold links: never write the report through one
    # (an --out that is itself a link, chosen by the user, is followed).
    link = safepath.symlink_below(out.resolve() if out_dir is not None else out)
    if link is not None:
        raise ResultsError(f"{link}: a symbolic link where the report is written; remove it "
                           "or choose another --out")
    analysis = analyse(campaign, n_boot=n_boot, alpha=alpha, margin=margin)
    return write_report(analysis, out, pooled_note=pooled_note)


def agreement_note(campaigns: list[Campaign], *, n_boot: int, alpha: float,
                   margin: float) -> str:
    """A pooled report's second paragraph: the campaigns' own verdicts, cell by cell, as
    `mcastlab compare` gives them: pooling is sound only where they do not contradict."""
    from analysis.compare import CONTRADICT, compare_campaigns, summary_counts

    _, cells = compare_campaigns(campaigns, n_boot=n_boot, alpha=alpha, margin=margin)
    counts = summary_counts(cells)
    text = ("Each campaign analysed alone (as `mcastlab compare` does): "
            + ", ".join(f"{n} {k}" for k, n in sorted(counts.items())) + ".")
    bad = [f"{c.participants} {c.metric} ({', '.join(c.outcomes)})" for c in cells
           if c.agreement == CONTRADICT]
    if bad:
        text += (f" **The campaigns contradict each other in {len(bad)} cell(s)**: "
                 + "; ".join(bad) + ". Something differed between them beyond the "
                 "configuration (the machine, its load); the pooled verdicts there are not "
                 "those of one experiment.")
    else:
        text += " No cell is contradicted, so the runs are pooled as runs of one experiment."
    return text + "\n"


SIZE_METHOD = """\
**How to read the views against message size.** Each run is reduced to its statistics:
for the RTT test the mean, median, p99 and standard deviation (*jitter*) of its round trips
(the agents store half of each round trip, as Perftest prints it: the views double it),
for the stress test the median second of the throughput summed over the subscribers
(samples/s, Mbit/s) and, where each run has at least {min_pings} pings, the one-way latency
of publisher 0's pings. A curve gives the geometric mean over runs of a statistic with its
{conf:.0f}% t interval over runs on the log scale (runs as the unit, as the verdicts; one
run: no interval; CPU and memory: arithmetic means). Sizes are
Perftest's `-dataLen` (its 28-byte header included), on a log scale; a dotted line marks
the largest UDP datagram (65,507 bytes), above which a sample is fragmented (DATA_FRAG).
Hollow markers: a run there was host-bound (testbed-bound).

**Verdicts about {compared}** use the statistics of the verdicts about the modes: each
run's value on a log scale, Welch's t-test with a {conf:.0f}% t interval of the change,
TOST within ±{margin:.0%}, Holm over the table (one family per axis and metric);
*X better*, *practically equal*, *undecided* (also with one run per level) or
*testbed-bound*. The change is the second level's against the first (the reference).
"""


def _curve_table(curves: pd.DataFrame, test: str) -> pd.DataFrame:
    """The figure's points as text: per curve and size, each statistic [t interval]."""
    from analysis.verdicts import fmt_value

    cols = {"latency": [("latency_mean", "mean RTT", "µs"), ("latency_median", "median RTT",
                                                              "µs"),
                        ("latency_p99", "p99 RTT", "µs"), ("latency_std", "jitter", "µs")],
            "throughput": [("samples_per_s", "samples/s", "samples/s"),
                           ("mbps", "Mbit/s", "Mbit/s"),
                           ("latency_median", "one-way latency median", "µs"),
                           ("latency_std", "one-way jitter", "µs")]}[test]
    c = curves[curves["test"] == test]
    rows = []
    for rec in c.to_dict("records"):
        row = {"curve": rec["curve"], "size": views.size_label(rec["data_len"]),
               "runs": rec["runs"]}
        for key, label, unit in cols:
            est, lo, hi = rec.get(key), rec.get(f"{key}_lo"), rec.get(f"{key}_hi")
            if est is None or not np.isfinite(est):
                continue
            u = "µs" if unit == "µs" else ""  # bounds in the estimate's unit
            text = fmt_value(est, u).strip()
            if np.isfinite(lo):
                text += " [" + ", ".join(fmt_value(b, u).strip() for b in (lo, hi)) + "]"
            row[label] = text
        rows.append(row)
    # "–": a stress run with fewer than MIN_PINGS pings has no latency statistic here
    return pd.DataFrame(rows).fillna("–")


def per_test(tab: pd.DataFrame) -> list[str]:
    """A verdict table split by test (each with its own metrics' columns)."""
    names = {"latency": "RTT test", "throughput": "Stress test"}
    tests = list(dict.fromkeys(tab["test"]))
    out = []
    for t in tests:
        sub = tab[tab["test"] == t].drop(columns="test").dropna(axis=1, how="all")
        out += ([f"*{names.get(t, t)}*\n\n"] if len(tests) > 1 else []) + [to_markdown(sub), "\n"]
    return out


def axis_sections(design: views.Design, tables: dict[str, pd.DataFrame],
                  by_size: bool = False) -> list[str]:
    """Per compared axis (implementations, placements, reliability): its verdict table, a
    reading per metric, and where the tests are."""
    md: list[str] = []
    for axis in design.compared:
        name = views.AXIS_TABLE[axis]
        tab = tables.get(f"{name}_verdicts")
        if tab is None or tab.empty:
            continue
        plural = views.COMPARED[axis][1]
        levels = ", ".join(views.level_text(axis, v) for v in design.levels[axis])
        md += [f"\n## Verdicts about the {plural}" + (", per message size" if by_size else "")
               + "\n",
               f"{levels}: the same matrix, network and placement otherwise, run by run. Per "
               "point and metric: the verdict, the second level's change of the run values "
               "against the first and its 95% t interval (runs as the unit; Welch, TOST, Holm "
               f"over the table; tests in `tables/{name}_verdict_tests.csv`).\n\n",
               *per_test(tab)]
        reading = tables.get(f"{name}_reading")
        if reading is not None and not reading.empty:
            md.append("\n".join(f"- {line}" for line in reading["line"]) + "\n")
    return md


def size_sections(analysis: Analysis, design: views.Design,
                  tables: dict[str, pd.DataFrame]) -> list[str]:
    """The views of a campaign whose message size varies: curves against size per test,
    the verdicts per size about each compared axis, the CPU and memory per role."""
    curves = tables.get("curves", pd.DataFrame())
    compared = ([f"the {views.COMPARED[a][1]}" for a in design.compared]
                + (["the modes"] if design.modes_compared else []))
    md = [SIZE_METHOD.format(min_pings=views.MIN_PINGS, conf=100 * (1 - analysis.alpha),
                             margin=analysis.margin,
                             compared=" and ".join(compared) or "the compared axes")]
    names = {"latency": ("RTT test: latency and jitter against message size", "rtt"),
             "throughput": ("Stress test: throughput against message size", "throughput")}
    for test in dict.fromkeys(curves.get("test", [])):
        title, stem = names.get(test, (test, test))
        md += [f"\n## {title}\n", _img(f"figures/{stem}_vs_size.png", title),
               "\n", to_markdown(_curve_table(curves, test))]
    md += axis_sections(design, tables, by_size=True)
    mt = tables.get("mode_verdicts_by_size")
    if mt is not None and not mt.empty:
        md += ["\n## Verdicts about the modes, per message size\n",
               "The verdicts about the modes (runs as the unit, Holm over the campaign; tests "
               "in the section *Verdicts about the modes: test details*), only the metrics "
               "each test measures; multicast's change against unicast.\n\n",
               *per_test(mt)]
        md += implementations_section(analysis, tables)
    res = [t for t in dict.fromkeys(curves.get("test", []))
           if _has_resources(curves[curves["test"] == t])]
    if res:
        md += ["\n## Resource cost per role\n",
               "CPU share (% of one core, mean of the run's samples every 0.5 s, the first "
               "left out: it is taken as the agents start) and peak RSS per role: the "
               "publisher, subscriber 0, and the other subscribers (their mean). The agents "
               "cycle their pings through the subscribers, as Perftest does, so every "
               "subscriber echoes its share: subscriber 0 is not the only one that "
               "responds. A run shorter than 0.5 s has no sample to show.\n"]
        for t in res:
            stem = names.get(t, (t, t))[1]
            md.append(_img(f"figures/resources_{stem}_vs_size.png", f"resources, {t} test"))
    md += ablation_section(tables)
    return md


def _has_resources(curves: pd.DataFrame) -> bool:
    cols = [c for c in views.RESOURCE_COLUMNS if c in curves]
    return any(np.isfinite(curves[c].astype(float)).any() for c in cols)
