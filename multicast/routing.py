"""Multicast routing daemons: the routed topology's `mrouting`/`pim_daemon` values.

:data:`ROUTING_DAEMONS` names each daemon class (a :class:`~multicast.daemon.Daemon`) as
``"module:Class"`` under this package, one line per daemon, so adding a daemon is its
module (plus its config template) and its line here. A class's `mrouting` is the
`mrouting` value it implements: the distinct values, in this order, plus ``none`` are
that parameter's choices; several daemons for one value (PIM-SM: pimd 2.3.2 and FRR) are
told apart by `pim_daemon`, whose choices are their names here.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from multicast.daemon import Daemon

ROUTING_DAEMONS: dict[str, str] = {
    "pimd": "pimd:Pimd",
    "smcroute": "smcroute:Smcroute",
    "frr": "frr:FrrPim",
}
NONE = "none"  # mrouting=none: no daemon
PIM = "pimd"  # the mrouting value whose implementation pim_daemon chooses


def daemon_class(name: str) -> type[Daemon]:
    """The daemon class registered as `name` (KeyError for an unknown one)."""
    module, _, cls = ROUTING_DAEMONS[name].partition(":")
    return getattr(import_module(f"multicast.{module}"), cls)


def mrouting_choices() -> tuple[str, ...]:
    """The `mrouting` parameter's allowed values: ("pimd", "smcroute", "none")."""
    modes = dict.fromkeys(daemon_class(n).mrouting for n in ROUTING_DAEMONS)
    return (*modes, NONE)


def implementations(mrouting: str) -> tuple[str, ...]:
    """Registered daemons implementing `mrouting` (for PIM, the `pim_daemon` choices)."""
    return tuple(n for n in ROUTING_DAEMONS if daemon_class(n).mrouting == mrouting)


def daemon_for(params: dict[str, Any]) -> type[Daemon] | None:
    """The daemon class the routers run for these topology parameters; None for none."""
    mode = params.get("mrouting")
    if mode in (None, NONE):
        return None
    return daemon_class((params.get("pim_daemon") or PIM) if mode == PIM else mode)
