"""CLI: ``mcastlab wire RUN_DIR_OR_PCAP [--json]`` and ``mcastlab inspect PCAP --writer GUID
--seq N``. Heavy imports stay inside the functions."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    w = sub.add_parser("wire", help="dissect a run's captures (or one pcap) into wire tables")
    w.add_argument("target", metavar="RUN_DIR_OR_PCAP")
    w.add_argument("--json", action="store_true", help="print the totals as JSON")
    w.add_argument("--out", type=Path, default=None,
                   help="tables directory for a single pcap (default: PCAP.wire/)")
    w.set_defaults(func=cmd_wire)
    i = sub.add_parser("inspect", help="the life of one sample: sends, NACKs, repairs, arrivals")
    i.add_argument("target", metavar="PCAP_OR_RUN_DIR")
    i.add_argument("--writer", required=True, help="writer GUID (prefix:entity, 32 hex digits)")
    i.add_argument("--seq", required=True, type=int, help="sequence number")
    i.add_argument("--json", action="store_true", help="print the events as JSON lines")
    i.set_defaults(func=cmd_inspect)
    v = sub.add_parser("windows", help="a campaign's capture windows: where, how long, packets "
                                       "and kernel drops; checked (exit 1 when one fails)")
    v.add_argument("results", metavar="RESULTS_DIR")
    v.add_argument("--min-s", type=float, default=5.0,
                   help="seconds each window must cover (default 5)")
    v.add_argument("--json", action="store_true", help="print the rows and failures as JSON")
    v.set_defaults(func=cmd_windows)


def _fail(msg: str) -> int:
    print(f"mcastlab: {msg}", file=sys.stderr)
    return 2


def cmd_wire(args: argparse.Namespace) -> int:
    from captures import fold
    from captures.cnative import DissectError

    try:  # the C pass starts now, in threads; numpy and pandas are imported while it runs
        target = fold.resolve(args.target, args.out)
        job = fold.start(target.points)
    except (fold.WireError, DissectError) as exc:
        return _fail(str(exc))
    from captures.wire import analyse_folded, run_span_of

    target_path = Path(args.target)
    span = run_span_of(target_path) if target_path.is_dir() else None
    try:
        control = fold.fold(target.control) if target.control else None
        summary = analyse_folded(job.result(), target.out_dir, target.local_ips, span,
                                 target.windows, control)
    except (fold.WireError, DissectError) as exc:
        return _fail(str(exc))
    out = target.out_dir
    if args.json:
        print(json.dumps(summary, indent=2))
        return 0
    from captures.report import print_wire

    print_wire(summary, out)
    return 0


def cmd_inspect(args: argparse.Namespace) -> int:
    from captures.dissect import DissectError
    from captures.inspect_sample import parse_guid, sample_life
    from captures.wire import WireError, discover_pcaps

    try:
        writer = parse_guid(args.writer)
    except ValueError as exc:
        return _fail(str(exc))
    p = Path(args.target)
    if p.is_dir():
        points = discover_pcaps(p / "pcaps" if (p / "pcaps").is_dir() else p)
    elif p.is_file():
        points = {p.stem: [p]}
    else:
        return _fail(f"{p}: no such capture file or run directory")
    try:
        df = sample_life(points, writer, args.seq)
    except (WireError, DissectError) as exc:
        return _fail(str(exc))
    if args.json:
        for rec in df.to_dict(orient="records"):
            print(json.dumps(rec))
        return 0 if len(df) else 1
    from rich.console import Console
    from rich.table import Table

    t = Table(title=f"writer {writer} sn {args.seq}")
    for c in ("t (s)", "point", "event", "src", "dst", "reader", "detail"):
        t.add_column(c)
    t0 = float(df["ts"].min()) if len(df) else 0.0
    for r in df.itertuples():
        t.add_row(f"{r.ts - t0:.6f}", r.point, r.event, r.src, r.dst, r.reader, r.detail)
    Console().print(t)
    if not len(df):
        print(f"no submessage of writer {writer} concerns sn {args.seq}", file=sys.stderr)
        return 1
    return 0


def cmd_windows(args: argparse.Namespace) -> int:
    from captures.windows import campaign_rows, check_rows

    root = Path(args.results)
    if not root.is_dir():
        return _fail(f"{root}: no such results directory")
    rows = campaign_rows(root)
    if not rows:
        return _fail(f"{root}: no complete run captured in windows (manifest capture_windows)")
    failures = check_rows(rows, args.min_s)
    if args.json:
        print(json.dumps({"runs": rows, "failures": failures}, indent=2))
        return 1 if failures else 0
    from rich.console import Console
    from rich.table import Table

    t = Table(title=f"capture windows of {root}")
    for col in ("run", "measurement", "windows", "window", "from discovery", "inside",
                "packets", "kernel drops"):
        t.add_column(col, justify="left" if col == "run" else "right", no_wrap=col == "run")
    for r in rows:
        t.add_row(r["run"], f"{r['measurement_s']} s", str(r["windows"]), f"{r['window_s']:.2f} s",
                  "-" if r["offset_s"] is None else f"{r['offset_s']:.2f} s",
                  "yes" if r["inside"] else "NO", f"{r['packets']:,}",
                  f"{r['dropped']:,} of {r['received']:,}")
    con = Console()
    con.print(t)
    for f in failures:
        con.print(f"FAIL {f}", style="bold red", markup=False, highlight=False)
    if not failures:
        con.print(f"every window inside its measurement window, at least {args.min_s:g} s (or "
                  "what the measurement window holds), the modes within 10% in length")
    return 1 if failures else 0
