"""CLI subcommands of the network part: `probe`, `clean`, `capabilities`."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
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
    p.add_argument("topology", help="lan | routed | lab | production, or a scenario .toml file "
                   "(its [cluster] too, if any)")
    p.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                   help="topology parameter (repeatable), e.g. snooping=on")
    p.add_argument("--sender", required=True)
    p.add_argument("--members", required=True, help="HOST,HOST,... or all")
    p.add_argument("--count", type=int, default=1000)
    p.add_argument("--rate", type=float, default=500.0, help="packets per second")
    p.add_argument("--ttl", type=int, default=8)
    p.add_argument("--timeout", type=float, default=90.0, help="convergence timeout (s)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    # For the build-failure test only (tests/topologies/test_build_errors_netns.py), hidden
    # from --help: NODE's configuration gets one command that really fails.
    p.add_argument("--fail-on", default="", metavar="NODE", help=argparse.SUPPRESS)
    p.set_defaults(func=cmd_probe)

    c = subparsers.add_parser("clean", help="remove what dead testbeds left (from their ledgers)")
    c.add_argument("--include-live", action="store_true",
                   help="also tear down testbeds whose owner process is still running")
    c.add_argument("--tag", help="only the testbed with this tag")
    c.add_argument("--session", help="(cluster, with --tag; run over ssh by the controller) "
                   "only if this session owns the tag's ledger here")
    c.set_defaults(func=cmd_clean)

    # Run on the other servers of a [cluster] by the controller, over ssh
    # (topologies/cluster.py); not meant to be typed.
    s = subparsers.add_parser("cluster-session", help="(cluster, run over ssh) own this "
                              "server's ledger until stdin closes")
    s.add_argument("--tag", required=True)
    s.add_argument("--session", required=True,
                   help="the controller's id for this session, in the ledger's owner line")
    s.add_argument("--neighbours", type=int, default=0,
                   help="ARP entries the network may need: this server's neighbour table "
                        "limits are raised for them (restored when the session ends)")
    s.set_defaults(func=cmd_cluster_session)
    x = subparsers.add_parser("cluster-exec", help="(cluster, run over ssh) record this "
                              "process in the server's ledger, then exec the command")
    x.add_argument("--tag", required=True)
    x.add_argument("--session", required=True, help="the session owning the tag's ledger")
    x.add_argument("--node", required=True)
    x.add_argument("--what", required=True)
    x.add_argument("--record-link", help="a root-namespace link the command creates")
    x.add_argument("--interrupt-on-eof", action="store_true",
                   help="run the command as a child with no stdin; when this process's stdin "
                        "ends, send it SIGINT (SIGKILL 10 s later)")
    x.add_argument("argv", nargs=argparse.REMAINDER)
    x.set_defaults(func=cmd_cluster_exec)
    h = subparsers.add_parser("cluster-check", help="what this server offers a [cluster] "
                              "(version, VXLAN, sshd MaxSessions, clock)")
    h.add_argument("--json", action="store_true")
    h.set_defaults(func=cmd_cluster_check)

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


def _cluster_from(arg: str) -> Any:
    """A scenario file's [cluster] (topologies.cluster.ClusterConfig), or None."""
    if not (arg.endswith(".toml") and Path(arg).exists()):
        return None
    import tomllib

    from topologies.cluster import ClusterConfig

    section = tomllib.loads(Path(arg).read_text()).get("cluster")
    return None if section is None else ClusterConfig.from_section(section, arg)


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
        cluster = _cluster_from(args.topology)  # the scenario's servers, if it has some
        if cluster is not None:
            from topologies.cluster import placement

            placement(spec, cluster)  # what a cluster cannot build, refused here
    except (ValueError, OSError) as exc:
        print(f"mcastlab probe: {exc}", file=sys.stderr)
        return 2
    missing = topologies.missing_capabilities(spec)
    if missing:
        for m in missing:
            print(f"mcastlab probe: {m}", file=sys.stderr)
        return 2
    from topologies import cpulimit

    why = cpulimit.spec_problem(spec)
    if why:
        print(f"mcastlab probe: --param cpu: {why}", file=sys.stderr)
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
        with topologies.build(spec, cluster=cluster, fail_on=args.fail_on) as net:
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
    """Exit 1 when a ledger stays for a server that could not be cleaned (said so)."""
    from mcastlab import ledger

    if args.session and not args.tag:
        print("mcastlab clean: --session needs --tag", file=sys.stderr)
        return 2
    for line in ledger.clean(include_live=args.include_live, tag=args.tag,
                             session=args.session):
        print(line)
    return 1 if ledger.kept(tag=args.tag) else 0


def cmd_cluster_session(args: argparse.Namespace) -> int:
    """Own this server's ledger for the controller's testbed `--tag`, session `--session`
    (taken atomically, refused with exit 3 when this server holds that tag already, for
    another testbed: then nothing is changed here); say "ready", wait for end of file on
    stdin (the controller closed it, or its connection died), then stop everything
    recorded and remove the ledger."""
    import signal
    import tempfile

    from mcastlab.ledger import Ledger, TagTaken

    def ended(_signo: int, _frame: Any) -> None:
        raise SystemExit(0)

    try:
        led = Ledger.create(tag=args.tag, session=args.session)
    except TagTaken as exc:
        print(f"mcastlab cluster-session: refused on {os.uname().nodename}: {exc}",
              file=sys.stderr)
        return 3
    signal.signal(signal.SIGTERM, ended)
    signal.signal(signal.SIGHUP, ended)
    try:
        # Where the nodes here write files the controller fetches back (captures, samplers).
        staging = Path(tempfile.mkdtemp(prefix=f"mcastlab-{args.tag}-", dir="/var/tmp"))
        led.record_dir(staging)
        from topologies.neighbours import neighbour_room

        room = neighbour_room(led, args.neighbours)
        print(f"ready {led.path} {staging} {json.dumps(room, separators=(',', ':'))}",
              flush=True)
        while sys.stdin.readline():
            pass
    except OSError:
        pass
    finally:
        led.release()
        with contextlib.suppress(OSError):
            print("released", flush=True)
    return 0


def cmd_cluster_exec(args: argparse.Namespace) -> int:
    """Append this process (and `--record-link`) to the ledger of `--tag`, then exec;
    refused unless that ledger is `--session`'s."""
    from mcastlab.ledger import Ledger, owner_of
    from mcastlab.paths import STATE_DIR

    argv = args.argv[1:] if args.argv[:1] == ["--"] else args.argv
    path = STATE_DIR / f"{args.tag}.ledger"
    if not argv or not path.is_file() or path.is_symlink():
        print(f"mcastlab cluster-exec: no command, or no session ledger {path}", file=sys.stderr)
        return 2
    if (owner_of(path) or {}).get("session") != args.session:
        print(f"mcastlab cluster-exec: {path} is not session {args.session}'s", file=sys.stderr)
        return 2
    led = Ledger(tag=args.tag, path=path)
    if args.record_link:
        led.record_link(args.record_link)
    led.record_proc(os.getpid(), args.node, args.what)
    if not args.interrupt_on_eof:
        os.execvp(argv[0], argv)
    return _interrupt_on_eof(led, args.node, args.what, argv)


def _interrupt_on_eof(led: Any, node: str, what: str, argv: list[str]) -> int:
    """Run `argv` (recorded) and relay: a signal to the controller's ssh client cannot
    reach a process on another server, the end of this process's stdin can. Exits with
    the child's status (128 + signal when it was killed, as a shell does)."""
    import signal
    import subprocess
    import threading

    child = led.spawn(argv, node, what, stdin=subprocess.DEVNULL)

    def relay() -> None:
        with contextlib.suppress(OSError):
            while os.read(0, 65536):  # unbuffered: no lock held at interpreter exit
                pass
        if child.poll() is None:
            child.send_signal(signal.SIGINT)
            try:
                child.wait(timeout=10)
            except subprocess.TimeoutExpired:
                child.kill()

    threading.Thread(target=relay, daemon=True).start()
    rc = child.wait()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(rc if rc >= 0 else 128 - rc)  # not past the relay thread, still reading


def cmd_cluster_check(args: argparse.Namespace) -> int:
    from topologies.cluster import check_info

    info = check_info()
    print(json.dumps(info, indent=2 if not args.json else None))
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
