"""What a switch kind provides to the network that builds it, and what it may ask of that
network in return (:class:`SwitchSite`, which :class:`topologies.net.Network` implements).
Declared here, so a switch kind never imports the network."""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

if TYPE_CHECKING:
    from mcastlab.ledger import Ledger


class SwitchSite(Protocol):
    """The network a switch is built in: its plan, its records and its node shells."""

    spec: Any  # topologies.spec.Spec: the plan (params, routers)
    workdir: Path  # daemon logs
    private: Path  # the network's state directory (OVS databases and sockets)
    ledger: Ledger  # records what the switch creates, for teardown
    fail_on: str  # the node given a failing command (build-failure tests)
    step: tuple[str, str]  # (what, node) under way, for a build error
    querier_ready_at: dict[str, float]  # switch -> monotonic time its querier is ready
    switch_control: dict[str, Any]  # switch -> what the kind keeps to control it

    def real_name(self, node: str) -> str: ...
    def switch_ports(self, sw: str) -> list[tuple[str, str, str]]: ...
    def mtu(self) -> str: ...
    def cmd(self, node: str, command: str) -> str: ...
    def sh(self, node: str, lines: Sequence[str], what: str) -> str: ...
    def popen(self, node: str, argv: Sequence[str], network_plane: bool = False,
              host_cpu: bool = True, **kwargs: Any) -> subprocess.Popen: ...


class SwitchKind:
    """One switch implementation. Subclasses set the class attributes and `start`/`state`."""

    name: ClassVar[str] = ""  # its `switch` value as built (net.switch_kind, the manifest)
    needs: ClassVar[str] = ""  # the capability (mcastlab.capabilities) it requires
    # Checksum offload (ethtool tx/rx) off on every host and router interface too, not
    # only on the switch's ports.
    offload_off: ClassVar[bool] = False
    # Snooping prunes without any IGMP querier on the segment (OVS learns from the
    # hosts' unsolicited reports); else a querier (switch or router) is needed.
    prunes_without_querier: ClassVar[bool] = False

    def resolve(self) -> SwitchKind:
        """The kind to build: itself, or for an alias the kind it stands for here."""
        return self

    def start(self, net: SwitchSite, sw: str) -> None:
        """Create switch `sw` in its namespace with its ports (net.switch_ports) attached."""
        raise NotImplementedError

    def state(self, net: SwitchSite, sw: str) -> dict[str, Any]:
        """Snooping read-back of `sw`: settings, mdb and router ports by logical port."""
        raise NotImplementedError

    def not_ready(self, net: SwitchSite, sw: str) -> str | None:
        """What the switch itself still lacks before the segment is ready; None when ready."""
        del net, sw
        return None


def logical_ports(net: SwitchSite, sw: str) -> dict[str, str]:
    """{real port name: logical port name} of switch `sw`."""
    return {real: logical for logical, real, _peer in net.switch_ports(sw)}
