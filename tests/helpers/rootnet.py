"""Captures on a BridgeLab's bridge ports, which live in the root namespace.

``captures.capture.start`` takes a network and ``{point: (node, interface)}``; a lab's
bridge ports have no node (``None``), so this adapter starts tcpdump through the lab::

    cap = capture.start(RootNet(lab), {"h1": (None, lab.ports[0])}, pcaps, 0, 0, 0)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from captures.minilab import BridgeLab


class RootNet:
    """Adapter: capture points on root-namespace bridge ports (node None)."""

    def __init__(self, lab: BridgeLab) -> None:
        self.lab = lab

    def popen(self, node: str | None, argv: list[str], **kw):
        return self.lab.popen(node, argv, stdout=kw.get("stdout"), stderr=kw.get("stderr"))
