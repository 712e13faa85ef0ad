"""captures/heartbeats.py on a dissection built by hand (pure logic; the wire itself:
tests/captures/test_heartbeat_spacing_netns.py)."""

from __future__ import annotations

import math

import numpy as np

from captures import dissect as dz
from captures import heartbeats as hb

A, B = 0x1000, 0x2000  # frame source addresses


def _dissection(events: list[tuple[float, int, int, int, int, int]]) -> dz.Dissection:
    """events: (time, source address, prefix index, writer entity id, submessage id,
    flags), one frame each."""
    frames = np.zeros(len(events), dtype=dz.FRAME_DTYPE)
    subs = np.zeros(len(events), dtype=dz.SUB_DTYPE)
    for i, (t, src, pfx, eid, sid, flags) in enumerate(events):
        frames[i]["ts"], frames[i]["src"] = t, src
        subs[i]["frame"], subs[i]["src_prefix"], subs[i]["writer_eid"] = i, pfx, eid
        subs[i]["id"], subs[i]["flags"], subs[i]["cls"] = sid, flags, dz.C_USER
    prefixes = np.arange(24, dtype=np.uint8).reshape(2, 12)
    return dz.Dissection("<test>", frames, subs, np.zeros(0, dz.CTL_DTYPE),
                         np.zeros(0, dz.TOPIC_DTYPE), prefixes)


def test_requests_are_merged_final_heartbeats_ignored_and_sources_kept_apart() -> None:
    ev = []
    for k in range(11):  # writer (0, 0x102): a request every 10 ms, each sent twice
        ev += [(k * 0.010, A, 0, 0x102, hb.HEARTBEAT, 0),
               (k * 0.010 + 0.0001, A, 0, 0x102, hb.HEARTBEAT, 0),
               (k * 0.010 + 0.002, A, 0, 0x102, hb.HEARTBEAT, hb.FINAL),  # no request
               (k * 0.010 + 0.003, A, 0, 0x102, 0x15, 0)]
    for k in range(5):  # writer (1, 0x102) of the other host: one DATA and request per 50 ms
        ev += [(k * 0.050, B, 1, 0x102, hb.HEARTBEAT, 0), (k * 0.05 + 0.001, B, 1, 0x102, 0x15, 0)]
    ev += [(0.3, A, 0, 0x207, 0x15, 0)]  # a writer with one DATA: not a throughput writer
    d = _dissection(ev)
    both = hb.spacing_table(d, writers=2)
    assert [w.data for w in both] == [11, 5]
    assert both[0].requests == 11 and math.isclose(both[0].p90_ms, 10.0, rel_tol=1e-6)
    assert math.isclose(both[1].p90_ms, 50.0, rel_tol=1e-6)
    mine = hb.spacing_table(d, writers=2, source=A)
    assert [(w.data, w.requests) for w in mine] == [(11, 11), (1, 0)]
    assert math.isnan(mine[1].p90_ms)
    assert mine[0].writer.endswith(":00000102")
