"""Where a capture's repairs went: to a multicast group or to single readers.

A repair is a user DATA/DATA_FRAG sent again (the dissector's ``data_is_repair``: the same
writer, sequence number and fragment already sent to that destination, or to a group
earlier). Connext resends a repair to the group once 2 readers NACK it
(``multicast_resend_threshold``); the native agent with ``[matrix] repairs = "multicast"``
(Cyclone RetransmitMerging adaptive) from the first NACK; by default Cyclone repairs to
each NACKing reader. The destination of each repair says which a run did.

    >>> r = destinations(dissect("run/pcaps/h1-eth0.pcap"))  # doctest: +SKIP
"""

from __future__ import annotations

from dataclasses import dataclass

from captures import dissect as dz
from captures.heartbeats import user_data


@dataclass(frozen=True)
class RepairDestinations:
    """Counts of a capture's user DATA/DATA_FRAG submessages (not quoted in ICMP)."""

    first: int  # first sends
    to_group: int  # repairs addressed to a multicast group
    to_reader: int  # repairs addressed to one host (unicast)


def destinations(d: dz.Dissection, source: int | None = None) -> RepairDestinations:
    """Repairs by destination kind (of datagrams from ``source`` only, if given)."""
    sel = user_data(d, source)
    repair = sel & d.repair
    group = (d.frames["flags"][d.subs["frame"]] & dz.F_MCAST) != 0
    return RepairDestinations(int((sel & ~d.repair).sum()), int((repair & group).sum()),
                              int((repair & ~group).sum()))
