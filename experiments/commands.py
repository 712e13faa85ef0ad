"""``mcastlab run SCENARIO [--results DIR]`` and ``mcastlab status RESULTS [--json]``."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("run", help="run a scenario's campaign (resumes an existing one)")
    p.add_argument("scenario", type=Path, help="scenario file, e.g. experiments/smoke.toml")
    p.add_argument("--results", type=Path, default=None,
                   help="campaign directory (default: results/<campaign name>)")
    p.add_argument("--only", action="append", default=None, metavar="RUN_ID",
                   help="run only this run id (repeatable)")
    p.add_argument("--check", action="store_true",
                   help="validate the scenario and list its runs; build nothing")
    p.add_argument("--quick", action="store_true",
                   help="apply the scenario's [quick] overrides (a short variant)")
    p.add_argument("--no-progress", action="store_true",
                   help="no progress display or phase lines (failures, host-bound runs "
                   "and warnings are still printed)")
    p.add_argument("--redo", action="store_true",
                   help="redo finished runs whose configuration changed in a key that changes "
                   "results (they move to RESULTS/superseded/<time>/; nothing is deleted)")
    p.set_defaults(func=cmd_run)

    s = sub.add_parser("status", help="summarise a campaign directory")
    s.add_argument("results", type=Path, help="campaign directory, e.g. results/smoke")
    s.add_argument("--json", action="store_true", help='print {"runs": [{"id", "status", ...}]}')
    s.set_defaults(func=cmd_status)


def cmd_run(args: argparse.Namespace) -> int:
    from experiments.scenario import ScenarioError

    try:
        if args.check:
            return _check_only(args.scenario, args.quick, args.results)
        from experiments.runner import CampaignRunner

        # Validates the scenario against its topology and this machine; builds nothing.
        runner = CampaignRunner(args.scenario, args.results, progress=not args.no_progress,
                                only=args.only, quick=args.quick, redo=args.redo)
    except ScenarioError as exc:
        print(f"mcastlab run: {exc}", file=sys.stderr)
        return 2
    if args.only and not runner.runs:
        print(f"mcastlab run: --only: no run of {args.scenario} has that id "
              "(list them with --check)", file=sys.stderr)
        return 2
    if os.geteuid() != 0:
        print("mcastlab run: must run as root (it builds network namespaces)", file=sys.stderr)
        return 2
    from experiments.runner import CampaignConflict
    from mcastlab.errors import UnsafeResults

    try:
        return runner.run()
    except (CampaignConflict, UnsafeResults) as exc:
        print(f"mcastlab run: {exc}", file=sys.stderr)
        return 2


def _check_only(path: Path, quick: bool = False, results: Path | None = None) -> int:
    import topologies
    from experiments import matrix
    from experiments.scenario import validate

    sc, specs = validate(path, quick=quick)
    if results is not None:
        from experiments.runner import check_results_path

        check_results_path(results)
    hosts = {v: list(topologies.host_names(s)) for v, s in specs.items()}
    runs = matrix.expand(sc, hosts, str(path))
    print(f"{path}: valid; campaign {sc.campaign.name}, {len(runs)} runs")
    for r in runs:
        print(f"  {r['run_id']}")
    from topologies.cpulimit import faithful_cpu_gaps

    for variant, spec in specs.items():
        gaps = faithful_cpu_gaps(spec.params)
        if gaps:
            where = f"topology variant {variant!r}" if len(specs) > 1 else "[topology] params"
            print(f"note: {path}: {where} limits the hosts' CPU (cpu = {spec.params['cpu']}) "
                  f"without the settings measured faithful: {'; '.join(gaps)}. Without them "
                  "a scenario of only cpu = 0.4 on 4 hosts was unfaithful at 75x75 in both "
                  "runs tried (timer outside the hosts 10.6 and 11.9 ms late at p99, limit "
                  "5 ms) where the shipped seed003-scaled presets are faithful "
                  "(experiments/README.md, \"Fixed-capacity hosts\")")
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    from experiments.results import campaign_status
    from mcastlab.errors import UnsafeResults

    try:
        st = campaign_status(args.results)
    except (FileNotFoundError, UnsafeResults) as exc:
        print(f"mcastlab status: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(st, indent=2))
        return 0
    from rich.console import Console
    from rich.table import Table

    counts = {k: sum(1 for r in st["runs"] if r["status"] == k)
              for k in ("complete", "incomplete", "failed")}
    table = Table(title=f"campaign {st['campaign']} ({st['scenario']})")
    for col in ("run", "status", "fidelity", "attempts", "duration", "reason"):
        table.add_column(col)
    style = {"complete": "green", "incomplete": "yellow", "failed": "red"}
    for r in st["runs"]:
        d = r.get("duration_s")
        fid = r.get("fidelity") or {}
        bound = {"network": "[green]network[/]", "host": "[red]host-bound[/]",
                 "saturated": "[yellow]saturated hosts[/]"}.get(fid.get("bound", ""), "")
        table.add_row(r["id"], f"[{style[r['status']]}]{r['status']}[/]", bound,
                      str(r["attempts"]),
                      f"{d:.0f} s" if isinstance(d, int | float) else "",
                      (r.get("reason") or "")[:80])
    console = Console()
    console.print(table)
    console.print(f"{counts['complete']} complete, {counts['incomplete']} incomplete, "
                  f"{counts['failed']} failed of {len(st['runs'])}")
    host = [r for r in st["runs"] if (r.get("fidelity") or {}).get("bound") == "host"]
    if host:
        console.print(f"[red]{len(host)} run(s) host-bound[/] (the testbed, not the network, "
                      "limited them): " + "; ".join(
                          f"{r['id']}: {', '.join(r['fidelity']['reasons'])}" for r in host[:3]))
    return 0
