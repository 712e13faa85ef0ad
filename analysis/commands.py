"""`mcastlab report RESULTS [--out DIR]`: figures, tables and the report of a campaign."""

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
    p.add_argument("results", type=Path, help="campaign directory (results/<campaign>)")
    p.add_argument("--out", type=Path, default=None,
                   help="output directory (default: RESULTS/report)")
    p.add_argument("--alpha", type=float, default=0.05,
                   help="significance level of bands and tests (default 0.05)")
    p.add_argument("--bootstrap", type=int, default=499,
                   help="bootstrap replicates per configuration (default 499)")
    p.set_defaults(func=run_report)


def run_report(args: argparse.Namespace) -> int:
    if not 0 < args.alpha < 0.5:
        print(f"mcastlab report: --alpha must be in (0, 0.5), got {args.alpha}", file=sys.stderr)
        return 2
    if args.bootstrap < 99:
        print(f"mcastlab report: --bootstrap must be at least 99, got {args.bootstrap}",
              file=sys.stderr)
        return 2
    from analysis.load import ResultsError
    from analysis.report import generate

    try:
        res = generate(args.results, args.out, n_boot=args.bootstrap, alpha=args.alpha)
    except ResultsError as exc:
        print(f"mcastlab report: {exc}", file=sys.stderr)
        return 2
    print(f"report: {res.report}")
    print(f"figures: {len(res.figures)} files in {res.out_dir / 'figures'}")
    print(f"tables: {len(res.tables)} files in {res.out_dir / 'tables'}")
    return 0
