"""The life of one sample on the wire: ``mcastlab inspect PCAP --writer GUID --seq N``.

Collects, per capture point and in time order, the DATA/DATA_FRAG submessages carrying
(writer, N) -- first sends and repairs --, the HEARTBEATs and GAPs whose range covers N,
and the ACKNACK/NACK_FRAG submessages that NACK it.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from captures import dissect as dz
from captures import wire

GUID_RE = re.compile(r"^[0-9a-f]{32}$")


def parse_guid(text: str) -> str:
    """``0110bdbc...:00000b02`` (or 32 hex digits with any ``.:- `` separators) ->
    canonical ``prefix:entity``; ValueError with the allowed form otherwise."""
    h = re.sub(r"[.:\- ]", "", text.strip().lower())
    if not GUID_RE.match(h):
        raise ValueError(f"--writer {text!r}: expected a GUID of 32 hex digits "
                         "(12-byte prefix + 4-byte entity id), "
                         "e.g. 0110bdbc3bb732ca294671af:00000b02")
    return f"{h[:24]}:{h[24:]}"


def sample_life(points: dict[str, list[Path]], writer: str, seq: int) -> pd.DataFrame:
    rows = []
    for point, files in sorted(points.items()):
        x = wire.load_point(point, files)
        if x.subs.empty:
            continue
        sb = x.subs[x.subs["writer"] == writer]
        if sb.empty:
            continue
        ev = wire.data_events(x)
        if not ev.empty:
            ev = ev[(ev["writer"] == writer) & (ev["seq"] == seq)]
        fr = x.frames
        sid, s1, s2 = sb["id"].to_numpy(), sb["seq"].to_numpy(), sb["seq2"].to_numpy()
        hit = (
            (np.isin(sid, (0x07,)) & (s1 <= seq) & (seq <= s2))  # HEARTBEAT range
            | ((sid == 0x06) & (sb["plen"].to_numpy() > 0) & (s1 <= seq) & (seq <= s2))  # NACKed
            | ((sid == 0x08) & (s1 <= seq) & (seq < s2))  # GAP
            | (np.isin(sid, (0x12, 0x13)) & (s1 == seq))
        )
        for _, s in sb[hit].iterrows():
            f = fr.loc[int(s["frame"])]
            rows.append({"ts": float(f["ts"]), "point": point,
                         "event": dz.submessage_name(int(s["id"])),
                         "src": wire.ip_str(f["src"]), "dst": wire.ip_str(f["dst"]),
                         "reader": s["reader"], "detail": f"sn {int(s['seq'])}..{int(s['seq2'])}"})
        for _, e in ev.iterrows():
            rows.append({"ts": float(e["ts"]), "point": point,
                         "event": "DATA repair" if e["repair"] else "DATA first",
                         "src": wire.ip_str(e["src"]), "dst": wire.ip_str(e["dst"]),
                         "reader": "", "detail": f"{int(e['bytes'])} B frag {int(e['frag'])}"})
    df = pd.DataFrame(rows, columns=["ts", "point", "event", "src", "dst", "reader", "detail"])
    return df.sort_values(["ts", "point"], kind="stable").reset_index(drop=True)
