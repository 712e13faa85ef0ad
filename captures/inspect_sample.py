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


def _guid_mask(d: dz.Dissection, pre: np.ndarray, eid: np.ndarray, guid: str) -> np.ndarray:
    """Rows whose (prefix index, entity id) is ``guid``."""
    prefix, entity = bytes.fromhex(guid[:24]), int(guid[25:], 16)
    idx = [i for i, p in enumerate(d.prefixes) if p.tobytes() == prefix]
    if not idx:
        return np.zeros(len(pre), dtype=bool)
    return (pre == idx[0]) & (eid == entity)


def sample_life(points: dict[str, list[Path]], writer: str, seq: int) -> pd.DataFrame:
    rows = []
    for point, files in sorted(points.items()):
        for path in files:
            d = dz.dissect(path)
            traffic = d.subs["quoted"] == 0
            sb, repair = d.subs[traffic], d.repair[traffic]
            sid = sb["id"]
            # the writer of reader-side submessages (ACKNACK, NACK_FRAG) is their destination
            reader_side = np.isin(sid, (0x06, 0x12))
            wpre = np.where(reader_side, sb["dst_prefix"], sb["src_prefix"])
            rpre = np.where(reader_side, sb["src_prefix"], sb["dst_prefix"])
            mine = _guid_mask(d, wpre, sb["writer_eid"], writer)
            s1, s2 = sb["seq"], sb["seq2"]
            hit = mine & (
                (np.isin(sid, (0x07,)) & (s1 <= seq) & (seq <= s2))  # HEARTBEAT range
                | ((sid == 0x06) & (sb["plen"] > 0) & (s1 <= seq) & (seq <= s2))  # NACKed
                | ((sid == 0x08) & (s1 <= seq) & (seq < s2))  # GAP
                | (np.isin(sid, (0x12, 0x13)) & (s1 == seq))
            )
            data = (mine & np.isin(sid, (0x15, 0x16)) & (sb["cls"] == dz.C_USER)
                    & (s1 == seq))
            for k in [*np.flatnonzero(hit), *np.flatnonzero(data)]:
                s, f = sb[k], d.frames[int(sb[k]["frame"])]
                row = {"ts": float(f["ts"]), "point": point, "src": wire.ip_str(f["src"]),
                       "dst": wire.ip_str(f["dst"])}
                if data[k]:  # first send or repair: the C core's decision (data_is_repair)
                    frag = int(s["aux1"]) if s["id"] == 0x16 else 0
                    row.update(event="DATA repair" if repair[k] else "DATA first", reader="",
                               detail=f"{int(s['plen'])} B frag {frag}")
                else:
                    reader = wire.guid_names(d.prefixes, rpre[k:k + 1], sb["reader_eid"][k:k + 1])
                    row.update(event=dz.submessage_name(int(s["id"])), reader=str(reader[0]),
                               detail=f"sn {int(s['seq'])}..{int(s['seq2'])}")
                rows.append(row)
    df = pd.DataFrame(rows, columns=["ts", "point", "event", "src", "dst", "reader", "detail"])
    return df.sort_values(["ts", "point"], kind="stable").reset_index(drop=True)
