"""How often each throughput writer asked its readers for acknowledgements, from a capture.

A reliable writer asks for acknowledgements with a HEARTBEAT whose Final flag is clear
(RTPS 2.x, 9.4.5.7: F = 0 obliges the readers to answer with an ACKNACK); Perftest's
ThroughputQos sends one every 10 ms, every 1 ms while the send window is nearly full,
and the native agent under -scaleSettings every 1-3 s. The spacing between a writer's
consecutive acknowledgement requests is what a run's reliability protocol was, whatever
the agent printed.

One request may leave in several datagrams (to each unicast reader, and again when
piggybacked): requests of one writer less than ``MERGE_S`` apart are one request, timed
at the first. The throughput writers are the ``writers`` user writers that sent the most
DATA in the capture (a publisher's Throughput writer; the subscribers' Latency writers
send a ping's echo now and then). Given ``source`` (the captured host's IPv4 address),
only writers of that host count: a capture sees every request a writer of its own host
sends, but of another host's writer only those addressed to its own readers (in unicast
a writer asks each reader apart, and the readers that acknowledged are not asked again).

    >>> s = spacing_table(dissect("run/pcaps/h1-eth0.pcap"), writers=25)  # doctest: +SKIP
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from captures import dissect as dz

HEARTBEAT = 0x07
DATA_IDS = (0x15, 0x16)  # DATA, DATA_FRAG
FINAL = 0x02  # HEARTBEAT flags: F
MERGE_S = 0.0005  # requests of one writer closer than this are one request


@dataclass(frozen=True)
class WriterSpacing:
    """One writer's acknowledgement requests over a capture."""

    writer: str  # GUID prefix (hex) and entity id
    data: int  # DATA / DATA_FRAG submessages it sent in the capture
    requests: int  # acknowledgement requests (after merging)
    p50_ms: float  # spacing between consecutive requests (nan with fewer than 2)
    p90_ms: float
    max_ms: float


def sent_by(d: dz.Dissection, source: int | None) -> np.ndarray:
    """Per submessage: not quoted, and (with ``source``) in a datagram from that address."""
    s = d.subs
    ok = s["quoted"] == 0
    if source is not None:
        ok &= d.frames["src"][s["frame"]] == source
    return ok


def user_data(d: dz.Dissection, source: int | None = None) -> np.ndarray:
    """Per submessage: a user DATA/DATA_FRAG (not quoted; from ``source`` if given)."""
    s = d.subs
    return np.isin(s["id"], DATA_IDS) & (s["cls"] == dz.C_USER) & sent_by(d, source)


def _requests(d: dz.Dissection, prefix: int, eid: int) -> np.ndarray:
    """Per submessage: one writer's acknowledgement-requesting HEARTBEAT (not quoted)."""
    s = d.subs
    return ((s["id"] == HEARTBEAT) & ((s["flags"] & FINAL) == 0) & (s["quoted"] == 0)
            & (s["src_prefix"] == prefix) & (s["writer_eid"] == eid))


def request_times(d: dz.Dissection, prefix: int, eid: int) -> np.ndarray:
    """Times (s) of one writer's acknowledgement requests, merged (``MERGE_S``)."""
    t = np.sort(d.frames["ts"][d.subs["frame"][_requests(d, prefix, eid)]])
    if t.size == 0:
        return t
    keep = np.concatenate(([True], np.diff(t) >= MERGE_S))
    return t[keep]


def throughput_writers(d: dz.Dissection, writers: int, source: int | None = None
                       ) -> list[tuple[int, int, int]]:
    """(prefix index, entity id, DATA count) of the ``writers`` user writers with the most
    DATA (sent from ``source`` if given), most first."""
    s = d.subs
    sel = user_data(d, source)
    if not sel.any():
        return []
    keys = np.stack([s["src_prefix"][sel].astype(np.int64), s["writer_eid"][sel].astype(np.int64)],
                    axis=1)
    uniq, counts = np.unique(keys, axis=0, return_counts=True)
    order = np.argsort(-counts, kind="stable")[:writers]
    return [(int(uniq[i, 0]), int(uniq[i, 1]), int(counts[i])) for i in order]


def spacing_table(d: dz.Dissection, writers: int, source: int | None = None
                  ) -> list[WriterSpacing]:
    """Per throughput writer (of ``source`` if given): its acknowledgement requests and
    their spacing."""
    out = []
    for prefix, eid, data in throughput_writers(d, writers, source):
        t = request_times(d, prefix, eid)
        gaps = np.diff(t) * 1e3
        if gaps.size:
            p50, p90, top = (float(np.percentile(gaps, 50)), float(np.percentile(gaps, 90)),
                             float(gaps.max()))
        else:
            p50 = p90 = top = float("nan")
        out.append(WriterSpacing(f"{d.prefix_hex(prefix)}:{eid:08x}", data, int(t.size),
                                 p50, p90, top))
    return out


def request_destinations(d: dz.Dissection, prefix: int, eid: int) -> tuple[int, int]:
    """One writer's acknowledgement-requesting HEARTBEAT submessages (not merged): how many
    were addressed to a multicast group and how many to one host. With Perftest's
    ``-multicast`` a Connext writer sends its periodic heartbeats to the group
    (``enable_multicast_periodic_heartbeat``); heartbeats that answer a reader's NACK go to
    that reader."""
    frames = d.subs["frame"][_requests(d, prefix, eid)]
    group = (d.frames["flags"][frames] & dz.F_MCAST) != 0
    return int(group.sum()), int((~group).sum())
