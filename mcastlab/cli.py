"""The `mcastlab` command line: one subcommand per concern, each defined in its own module.

Every module listed in COMMAND_MODULES has a ``register(subparsers)`` function that adds
its subcommands with ``set_defaults(func=...)``; ``func(args)`` returns the exit status.
Modules keep heavy imports (Mininet, pandas) inside their functions so that ``--help``
and the analysis commands work without root or Mininet.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from mcastlab import __version__

COMMAND_MODULES = (
    "experiments.commands",  # run, status
    "topologies.commands",  # clean, probe, capabilities
    "captures.commands",  # wire, inspect
    "analysis.commands",  # report
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mcastlab",
        description=(
            "Emulate networks, run DDS campaigns in unicast and multicast, "
            "explain the difference."
        ),
    )
    parser.add_argument("--version", action="version", version=f"mcastlab {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:  # that concern has no commands yet
                continue
            raise
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except BrokenPipeError:  # `mcastlab ... | head`: the reader left, nothing to report
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
