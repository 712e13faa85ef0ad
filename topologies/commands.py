"""CLI subcommands of the network part: `probe`, `clean`, `capabilities`."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "probe", help="build a topology, check unicast and one multicast stream, tear down",
        description="Build TOPOLOGY, ping all host pairs, send a multicast stream from --sender "
                    "to a group joined by --members, print per-host counts, switch ports, "
                    "router MFC/IGMP state. Exit 1 when a member missed packets or a "
                    "non-member got packets snooping should have pruned.")
    p.add_argument("topology", help="lan | routed | lab | production, or a scenario .toml file")
    p.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                   help="topology parameter (repeatable), e.g. snooping=on")
    p.add_argument("--sender", required=True)
    p.add_argument("--members", required=True, help="HOST,HOST,... or all")
    p.add_argument("--count", type=int, default=1000)
    p.add_argument("--rate", type=float, default=500.0, help="packets per second")
    p.add_argument("--ttl", type=int, default=8)
    p.add_argument("--timeout", type=float, default=90.0, help="convergence timeout (s)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func=cmd_probe)

    c = subparsers.add_parser("clean", help="remove what dead testbeds left (from their ledgers)")
    c.add_argument("--include-live", action="store_true",
                   help="also tear down testbeds whose owner process is still running")
    c.set_defaults(func=cmd_clean)

    k = subparsers.add_parser("capabilities", help="show what this machine can emulate")
    k.add_argument("--json", action="store_true")
    k.set_defaults(func=cmd_capabilities)


def parse_param_args(items: list[str]) -> dict[str, str]:
    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ValueError(f"--param {item!r}: expected KEY=VALUE")
        out[key.strip()] = value.strip()
    return out


def _topology_from(arg: str, params: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """A topology name, or a scenario file with [topology] name/params (flags override)."""
    if arg.endswith(".toml") and Path(arg).exists():
        import tomllib

        data = tomllib.loads(Path(arg).read_text())
        topo = data.get("topology", {})
        if isinstance(topo, str):
            name, base = topo, dict(data.get("topology_params", {}))
        else:
            name, base = topo.get("name", ""), dict(topo.get("params", {}))
        if not name:
            raise ValueError(f"{arg}: no [topology] name found")
        base.update(params)
        return name, base
    return arg, params


def cmd_probe(args: argparse.Namespace) -> int:
    import topologies
    from topologies import probe

    try:
        name, params = _topology_from(args.topology, parse_param_args(args.param))
        spec = topologies.resolve(name, params)
    except (ValueError, OSError) as exc:
        print(f"mcastlab probe: {exc}", file=sys.stderr)
        return 2
    missing = topologies.missing_capabilities(spec)
    if missing:
        for m in missing:
            print(f"mcastlab probe: {m}", file=sys.stderr)
        return 2
    hosts = topologies.host_names(spec)
    members = ([h for h in hosts if h != args.sender] if args.members == "all"
               else [m.strip() for m in args.members.split(",") if m.strip()])
    unknown = [h for h in [args.sender, *members] if h not in hosts]
    if unknown:
        print(f"mcastlab probe: unknown host(s) {', '.join(unknown)}; allowed: "
              f"{', '.join(hosts)}", file=sys.stderr)
        return 2
    try:
        with topologies.build(spec) as net:
            try:
                net.wait_converged(args.timeout)
                report = probe.reachability_report(net)
                result = probe.probe(net, args.sender, members, count=args.count,
                                     rate=args.rate, ttl=args.ttl)
            except (topologies.ConvergenceError, topologies.BuildError):
                raise
            except Exception as exc:  # one line, never a traceback; the network comes down
                raise topologies.BuildError("probing", "-", f"{type(exc).__name__}: {exc}",
                                            None) from exc
    except (topologies.ConvergenceError, topologies.BuildError) as exc:
        print(f"mcastlab probe: {exc}", file=sys.stderr)
        return 1
    reach = report["unreachable"]
    result["unicast_unreachable"] = reach
    result["unicast_coverage"] = {k: report[k] for k in ("coverage", "pairs_checked",
                                                        "pairs_total", "not_checked", "seconds")}
    ok = result["ok"] and not any(reach.values()) and not report["not_checked"]
    if args.json:
        print(json.dumps(result, indent=2, default=str))
    else:
        print(probe.format_table(result, reach))
        print(f"unicast coverage: {report['coverage']}, {report['seconds']:g} s"
              + (f"; {len(report['not_checked'])} pairs not checked before the deadline"
                 if report["not_checked"] else ""))
    return 0 if ok else 1


def cmd_clean(args: argparse.Namespace) -> int:
    from mcastlab import ledger

    for line in ledger.clean(include_live=args.include_live):
        print(line)
    return 0


def cmd_capabilities(args: argparse.Namespace) -> int:
    from mcastlab import capabilities

    have = capabilities.detect()
    if args.json:
        print(json.dumps(have, indent=2))
        return 0
    for name, ok in have.items():
        what, alt = capabilities.MESSAGES[name]
        print(f"{name:<11} {'yes' if ok else 'NO ':<4}" + ("" if ok else f"  {what}: {alt}"))
    return 0
