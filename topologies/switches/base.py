"""What a switch kind provides to :class:`topologies.net.Network`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from topologies.net import Network


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

    def start(self, net: Network, sw: str) -> None:
        """Create switch `sw` in its namespace with its ports (net.switch_ports) attached."""
        raise NotImplementedError

    def state(self, net: Network, sw: str) -> dict[str, Any]:
        """Snooping read-back of `sw`: settings, mdb and router ports by logical port."""
        raise NotImplementedError

    def not_ready(self, net: Network, sw: str) -> str | None:
        """What the switch itself still lacks before the segment is ready; None when ready."""
        del net, sw
        return None


def logical_ports(net: Network, sw: str) -> dict[str, str]:
    """{real port name: logical port name} of switch `sw`."""
    return {real: logical for logical, real, _peer in net.switch_ports(sw)}
