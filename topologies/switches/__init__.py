"""Switch kinds: the `switch` parameter's values, one module per kind.

A kind is a :class:`~topologies.switches.base.SwitchKind` (how to start one switch, read
its snooping state back, what it needs of the machine). :data:`SWITCH_KINDS` names each
kind's class as ``"module:Class"`` under this package, one line per kind, so adding a
kind is its module plus its line here; the `switch` parameter's allowed values are this
table's keys, in this order. Modules are imported when a kind is first asked for.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from topologies.switches.base import SwitchKind

SWITCH_KINDS: dict[str, str] = {
    "linuxbridge": "linuxbridge:LinuxBridge",
    "ovs": "ovs:Ovs",
    "ovs-user": "ovs:OvsUser",
    "ovs-kernel": "ovs:OvsKernel",
}


def switch_kind(name: str) -> SwitchKind:
    """The kind registered as `name` (KeyError for an unknown one)."""
    module, _, cls = SWITCH_KINDS[name].partition(":")
    return getattr(import_module(f"{__name__}.{module}"), cls)()
