"""The kernel's IPv4 neighbour (ARP) table: what a network needs of it, and room made for
that need. Used by the network as it builds and by each server of a cluster for its own
table, so it depends on nothing of either."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcastlab.ledger import Ledger
    from topologies.spec import Spec

# The kernel's IPv4 neighbour (ARP) table is one table for every network namespace of the
# machine, and so are its limits (net.ipv4.neigh.default.gc_thresh2/3, 512/1024 by
# default): past gc_thresh3 a new entry is refused ("neighbor table overflow") and the
# packet that needed it is dropped. 250 hosts pinging 4 others each need ~1,750 entries;
# hosts that all talk to each other, 250 x 249. Network._neighbour_room raises them
# for what the network needs.
NEIGH_SYSCTL = Path("/proc/sys/net/ipv4/neigh/default")
NEIGH_STAT = Path("/proc/net/stat/arp_cache")
NEIGH_MARGIN = 1024  # room left for the rest of the machine


def neighbour_need(spec: Spec) -> int:
    """ARP entries the network can hold at once: on each segment every node may know every
    other node's address, and each router-to-router link holds two.

    >>> from topologies import lan
    >>> neighbour_need(lan.plan({"hosts": 250}))
    62250
    """
    per_segment = sum(len(m) * (len(m) - 1) for m in spec.switches.values())
    return per_segment + 2 * len(spec.router_links)


def neighbour_room(ledger: Ledger, need: int) -> dict[str, Any]:
    """Raise this machine's neighbour table limits to the entries in use + `need` +
    NEIGH_MARGIN through `ledger` (which restores them); the manifest's record. Also run
    by each other server of a cluster for its own table (mcastlab cluster-session).
    Where the limits are not visible (a network namespace other than the machine's first:
    the table is the machine's, raised from there), says so and changes nothing."""
    if not (NEIGH_SYSCTL / "gc_thresh3").exists():
        return {"needed": need, "unchanged": f"{NEIGH_SYSCTL} is not visible in this "
                                             f"network namespace"}
    before = {k: int((NEIGH_SYSCTL / k).read_text()) for k in ("gc_thresh2", "gc_thresh3")}
    in_use = neighbour_entries()
    target = in_use + need + NEIGH_MARGIN
    after = {k: ledger.raise_sysctl(NEIGH_SYSCTL / k, target)
             for k in ("gc_thresh3", "gc_thresh2")}  # thresh3 first: thresh2 <= thresh3
    return {"needed": need, "in_use_before": in_use, "before": before, "after": after,
            "scope": "machine-wide (net.ipv4.neigh.default), raised only, "
                     "restored at teardown"}


def neighbour_entries() -> int:
    """Entries in the machine's IPv4 neighbour table now (first row of
    /proc/net/stat/arp_cache: the count is global, the rows are per CPU)."""
    lines = NEIGH_STAT.read_text().split("\n")
    fields = dict(zip(lines[0].split(), lines[1].split(), strict=False))
    return int(fields["entries"], 16)
