"""`mcastlab report RESULTS... [--out DIR]`: figures, tables and the report of a campaign
(or of several campaigns of one configuration, pooled);
`mcastlab compare RESULTS RESULTS...`: the verdicts of independent campaigns side by side."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "report",
        help="analyse a campaign: ECDFs with bands, dominance verdicts, wire evidence, report",
        description="Compare unicast and multicast for every participant count of a campaign "
        "and write figures (PDF, PNG), tables (CSV, Markdown, LaTeX) and report.md.",
    )
    p.add_argument("results", type=Path, nargs="+",
                   help="campaign directory (results/<campaign>); several campaigns of one "
                   "configuration are pooled (their runs analysed together; needs --out)")
    p.add_argument("--out", type=Path, default=None,
                   help="output directory (default: RESULTS/report)")
    p.add_argument("--alpha", type=float, default=0.05,
                   help="significance level of bands and tests (default 0.05)")
    p.add_argument("--bootstrap", type=int, default=499,
                   help="bootstrap replicates per configuration (default 499)")
    p.add_argument("--margin", type=float, default=0.05,
                   help="equivalence margin: a change of the median within ±MARGIN is "
                   "'practically equal' (default 0.05 = ±5%%)")
    p.add_argument("--json", action="store_true",
                   help="print the verdicts (per agent) and, with several implementations, "
                   "whether they agree, as JSON (the report is written as well)")
    p.set_defaults(func=run_report)

    c = subparsers.add_parser(
        "compare",
        help="verdicts of several independent campaigns of one scenario, and whether they agree",
        description="Analyse each campaign as `mcastlab report` does and print, per "
        "participant count and metric, every campaign's verdict, whether they agree "
        "(agree / all undecided / one says no difference / contradict / testbed-bound / "
        "mixed fidelity) and "
        "the between-campaign spread of multicast's median change.",
    )
    c.add_argument("results", type=Path, nargs="+", help="campaign directories (two or more)")
    c.add_argument("--json", action="store_true", help="machine-readable output")
    c.add_argument("--bootstrap", type=int, default=499,
                   help="bootstrap replicates per configuration (default 499)")
    c.add_argument("--margin", type=float, default=0.05,
                   help="equivalence margin of the verdicts (default 0.05 = ±5%%)")
    c.set_defaults(func=run_compare)


def run_report(args: argparse.Namespace) -> int:
    if not 0 < args.alpha < 0.5:
        print(f"mcastlab report: --alpha must be in (0, 0.5), got {args.alpha}", file=sys.stderr)
        return 2
    if args.bootstrap < 99:
        print(f"mcastlab report: --bootstrap must be at least 99, got {args.bootstrap}",
              file=sys.stderr)
        return 2
    if not 0 < args.margin < 1:
        print(f"mcastlab report: --margin must be in (0, 1), got {args.margin}", file=sys.stderr)
        return 2
    from analysis.load import ResultsError
    from analysis.report import generate

    try:
        res = generate(list(args.results), args.out, n_boot=args.bootstrap, alpha=args.alpha,
                       margin=args.margin)
    except ResultsError as exc:
        print(f"mcastlab report: {exc}", file=sys.stderr)
        return 2
    if getattr(args, "json", False):
        import json

        print(json.dumps({"report": str(res.report), **res.summary}, indent=2))
        return 0
    print(f"report: {res.report}")
    print(f"figures: {len(res.figures)} files in {res.out_dir / 'figures'}")
    print(f"tables: {len(res.tables)} files in {res.out_dir / 'tables'}")
    return 0


def run_compare(args: argparse.Namespace) -> int:
    import json
    import math

    from analysis.compare import compare, summary_counts
    from analysis.load import ResultsError

    if args.bootstrap < 99:
        print(f"mcastlab compare: --bootstrap must be at least 99, got {args.bootstrap}",
              file=sys.stderr)
        return 2
    if not 0 < args.margin < 1:
        print(f"mcastlab compare: --margin must be in (0, 1), got {args.margin}", file=sys.stderr)
        return 2
    try:
        labels, cells = compare(args.results, n_boot=args.bootstrap, margin=args.margin)
    except ResultsError as exc:
        print(f"mcastlab compare: {exc}", file=sys.stderr)
        return 2
    counts = summary_counts(cells)
    if args.json:
        print(json.dumps({"campaigns": labels, "cells": [c.as_dict(labels) for c in cells],
                          "summary": counts}, indent=2))
        return 0
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"{len(labels)} campaigns: " + ", ".join(labels))
    for col in ("group", "count", "metric", *(f"#{i + 1}" for i in range(len(labels))),
                "agreement", "median change: min … max (sd)"):
        table.add_column(col)
    style = {"agree": "green", "contradict": "red", "testbed-bound": "yellow",
             "mixed fidelity": "yellow", "all undecided": "cyan"}
    for c in cells:
        sp = c.spread()
        spread = ("n/a" if not math.isfinite(sp["min"]) else
                  f"{sp['min']:+.0f}% … {sp['max']:+.0f}%"
                  + (f" ({sp['sd']:.0f})" if math.isfinite(sp["sd"]) else ""))
        st = style.get(c.agreement, "")
        table.add_row(c.group, c.participants, c.metric, *c.outcomes,
                      f"[{st}]{c.agreement}[/]" if st else c.agreement, spread)
    console = Console(width=200)
    console.print(table)
    console.print(", ".join(f"{n} {k}" for k, n in sorted(counts.items())))
    return 0
