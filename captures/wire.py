"""Per-run wire tables: turn a run's captures into the tables of captures/README.md.

    analyse_run(run_dir)          # reads run_dir/pcaps/*.pcap*, writes run_dir/wire/
    analyse_pcaps({"h1-eth0": [path]}, out_dir, local_ips={"h1-eth0": {"10.0.0.1"}})

Every capture file is dissected by the C core (captures/dissect.py); this module only
joins and aggregates the columnar records with numpy/pandas.
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from captures import coverage as cov
from captures import dissect as dz
from captures.coverage import RING_SUFFIX, discover_pcaps

STORM_WINDOW_S = 0.010  # ACKNACKs for the same writer range within this window ...
STORM_READERS = 3  # ... from at least this many distinct readers make a NACK storm
JOIN_RECORD_TYPES = {1, 2, 4, 5}  # IGMPv3 MODE_IS_INCLUDE/EXCLUDE, TO_EXCLUDE, ALLOW
SUMMARY_FILE = "summary.json"


class WireError(Exception):
    """Bad input for the wire analysis (one-line message naming the path)."""


def ip_str(v: int) -> str:
    return str(ipaddress.IPv4Address(int(v)))


def ip_int(s: str) -> int:
    return int(ipaddress.IPv4Address(s))


@dataclass
class PointData:
    """One capture point's decoded records as pandas frames."""

    point: str
    frames: pd.DataFrame
    subs: pd.DataFrame
    ctls: pd.DataFrame
    topics: pd.DataFrame
    bad: dict[str, int]
    quoted: dict[str, int]  # RTPS submessages quoted inside ICMP errors, by kind


def _guid_strings(prefixes: np.ndarray, pidx: np.ndarray, eid: np.ndarray) -> pd.Categorical:
    """GUIDs ``prefixhex:entityhex`` as a Categorical (strings built once per unique GUID)."""
    if len(pidx) == 0:
        return pd.Categorical([])
    key = pidx.astype(np.uint64) << np.uint64(32) | eid.astype(np.uint64)
    inv, uniq = pd.factorize(key)  # hash-based: faster than sorting millions of keys
    names = []
    for k in uniq:
        p, e = int(k) >> 32, int(k) & 0xFFFFFFFF
        pre = prefixes[p].tobytes().hex() if p < len(prefixes) else "?" * 24
        names.append(f"{pre}:{e:08x}")
    return pd.Categorical.from_codes(inv.astype(np.int32), categories=names)


KIND_CATEGORIES = [dz.submessage_name(i) for i in range(256)]


def kind_names(ids: np.ndarray) -> pd.Categorical:
    """Submessage ids -> specification names, vectorised (Categorical)."""
    return pd.Categorical.from_codes(np.asarray(ids, dtype=np.int16), categories=KIND_CATEGORIES)


def load_point(point: str, files: Iterable[Path]) -> PointData:
    """Dissect a point's files (ring order) into frames/subs/ctls tables."""
    fr, sb, ct, tp = [], [], [], []
    bad: dict[str, int] = {}
    quoted: dict[str, int] = {}
    offset = 0
    for f in files:
        d = dz.dissect(f)
        for k, v in d.bad.items():
            bad[k] = bad.get(k, 0) + v
        frames = pd.DataFrame({n: d.frames[n] for n in
                               ("ts", "wirelen", "src", "dst", "sport", "dport", "l4len", "ipid",
                                "nfrags", "proto", "flags", "kind", "bad")})
        frames.index = frames.index + offset
        # submessages quoted inside ICMP errors are not traffic: counted apart
        for sid in d.subs["id"][d.subs["quoted"] != 0]:
            name = dz.submessage_name(int(sid))
            quoted[name] = quoted.get(name, 0) + 1
        ds = d.subs[d.subs["quoted"] == 0]
        subs = pd.DataFrame({n: ds[n] for n in
                             ("seq", "seq2", "frame", "writer_eid", "reader_eid", "aux1", "aux2",
                              "plen", "octets", "id", "flags", "cls")})
        subs["frame"] = subs["frame"].astype(np.int64) + offset
        # writer GUID: its prefix is the sender's for writer-side submessages and the
        # destination's (INFO_DST) for reader-side ones (ACKNACK, NACK_FRAG).
        reader_side = np.isin(ds["id"], (0x06, 0x12))
        wpre = np.where(reader_side, ds["dst_prefix"], ds["src_prefix"])
        rpre = np.where(reader_side, ds["src_prefix"], ds["dst_prefix"])
        subs["writer"] = _guid_strings(d.prefixes, wpre, ds["writer_eid"])
        subs["reader"] = _guid_strings(d.prefixes, rpre, ds["reader_eid"])
        ctls = pd.DataFrame({n: d.ctls[n] for n in
                             ("frame", "group", "src", "nrec", "proto", "type", "version", "rec",
                              "rtype")})
        ctls["frame"] = ctls["frame"].astype(np.int64) + offset
        if len(d.topics):
            guids = [g.tobytes().hex() for g in d.topics["guid"]]
            tp.append(pd.DataFrame({
                "guid": [f"{g[:24]}:{g[24:]}" for g in guids],
                "topic": [t.decode(errors="replace") for t in d.topics["topic"]],
                "type": [t.decode(errors="replace") for t in d.topics["type"]],
                "is_reader": d.topics["is_reader"].astype(bool)}))
        fr.append(frames)
        sb.append(subs)
        ct.append(ctls)
        offset += len(frames)
    empty_topics = pd.DataFrame({"guid": [], "topic": [], "type": [], "is_reader": []})
    return PointData(
        point=point,
        frames=pd.concat(fr) if fr else pd.DataFrame(),
        subs=pd.concat(sb, ignore_index=True) if sb else pd.DataFrame(),
        ctls=pd.concat(ct, ignore_index=True) if ct else pd.DataFrame(),
        topics=pd.concat(tp, ignore_index=True).drop_duplicates() if tp else empty_topics,
        bad=bad,
        quoted=quoted,
    )


# ---- per-table builders ---------------------------------------------------------------
PAYLOAD_NAMES = {dz.K_OTHER: "ip_other", dz.K_RTPS: "rtps", dz.K_IGMP: "igmp", dz.K_PIM: "pim",
                 dz.K_UDP: "udp_other", dz.K_NONIP: "non_ip", dz.K_ICMP: "icmp"}


def _datagram_payload(fr: pd.DataFrame) -> pd.Series:
    """Payload kind of every frame; IP fragments take the kind of their datagram."""
    kind = fr["kind"].map(PAYLOAD_NAMES)
    frag = (fr["flags"] & dz.F_FRAG) != 0
    if frag.any():
        done = fr[(fr["flags"] & dz.F_REASM) != 0]
        key = ["src", "dst", "ipid"]
        last = done.assign(k=kind[done.index]).drop_duplicates(key, keep="last")
        m = fr.loc[frag, key].merge(last[[*key, "k"]], on=key, how="left")
        kind.loc[frag] = m["k"].fillna("fragment_incomplete").to_numpy()
    return kind


DIRECTIONS = np.array(["unknown", "out", "in"], dtype=object)
CASTS = np.array(["unicast", "multicast"], dtype=object)
CLASSES = np.array(["none", "discovery", "user"], dtype=object)


def _direction_codes(src: np.ndarray, local: set[int] | None) -> np.ndarray:
    """0 unknown (no local address known), 1 out (sent by the point's host), 2 in."""
    if not local:
        return np.zeros(len(src), dtype=np.int8)
    return np.where(np.isin(src, list(local)), 1, 2).astype(np.int8)


def packet_table(pd_: PointData, local: set[int] | None, t0: float) -> pd.DataFrame:
    fr = pd_.frames
    if fr.empty:
        return pd.DataFrame()
    df = pd.DataFrame({
        "direction": _direction_codes(fr["src"].to_numpy(), local),
        "cast": ((fr["flags"].to_numpy() & dz.F_MCAST) != 0).astype(np.int8),
        "payload": _datagram_payload(fr).to_numpy(),
        "second": np.floor(fr["ts"].to_numpy() - t0).astype(np.int32),
        "bytes": fr["wirelen"].to_numpy().astype(np.int64),
        "fragment": ((fr["flags"].to_numpy() & dz.F_FRAG) != 0).astype(np.int64),
    })
    g = df.groupby(["direction", "cast", "payload", "second"])
    out = g.agg(packets=("bytes", "size"), bytes=("bytes", "sum"),
                fragments=("fragment", "sum")).reset_index()
    out["direction"] = DIRECTIONS[out["direction"].to_numpy()]
    out["cast"] = CASTS[out["cast"].to_numpy()]
    out.insert(0, "point", pd_.point)
    return out


def submessage_table(pd_: PointData, local: set[int] | None, t0: float) -> pd.DataFrame:
    """Grouped on integer codes (fast on millions of rows), named afterwards."""
    sb = pd_.subs
    if sb.empty:
        return pd.DataFrame()
    fr = pd_.frames.loc[sb["frame"].to_numpy()]
    ids = sb["id"].to_numpy()
    df = pd.DataFrame({
        "direction": _direction_codes(fr["src"].to_numpy(), local),
        "kind": ids,
        "cast": ((fr["flags"].to_numpy() & dz.F_MCAST) != 0).astype(np.int8),
        "traffic": sb["cls"].to_numpy(),
        "second": np.floor(fr["ts"].to_numpy() - t0).astype(np.int32),
        "bytes": sb["octets"].to_numpy().astype(np.int64),
        "payload_bytes": sb["plen"].to_numpy().astype(np.int64) * np.isin(ids, (0x15, 0x16)),
    })
    g = df.groupby(["direction", "kind", "cast", "traffic", "second"])
    out = g.agg(submessages=("bytes", "size"), bytes=("bytes", "sum"),
                payload_bytes=("payload_bytes", "sum")).reset_index()
    out["direction"] = DIRECTIONS[out["direction"].to_numpy()]
    out["kind"] = [dz.submessage_name(int(i)) for i in out["kind"]]
    out["cast"] = CASTS[out["cast"].to_numpy()]
    out["traffic"] = CLASSES[out["traffic"].to_numpy()]
    out.insert(0, "point", pd_.point)
    return out


def data_events(pd_: PointData) -> pd.DataFrame:
    """User DATA/DATA_FRAG submessages with a ``repair`` flag: the same (writer, sn,
    fragment) was already seen at this point sent to multicast, or to the same unicast
    destination (so unicast fan-out to many readers is not counted as repair)."""
    sb = pd_.subs
    if sb.empty:
        return pd.DataFrame()
    d = sb[sb["id"].isin([0x15, 0x16]) & (sb["cls"] == dz.C_USER)]
    if d.empty:
        return pd.DataFrame()
    fr = pd_.frames.loc[d["frame"].to_numpy()]
    ev = pd.DataFrame({
        "ts": fr["ts"].to_numpy(), "writer": d["writer"].to_numpy(), "seq": d["seq"].to_numpy(),
        "frag": np.where(d["id"].to_numpy() == 0x16, d["aux1"].to_numpy(), 0).astype(np.int64),
        "dst": fr["dst"].to_numpy(), "src": fr["src"].to_numpy(),
        "mcast": (fr["flags"].to_numpy() & dz.F_MCAST) != 0,
        "bytes": d["plen"].astype(np.int64).to_numpy(), "octets": d["octets"].to_numpy(),
    }).sort_values("ts", kind="stable")
    key = ["writer", "seq", "frag"]
    dup_same_dst = ev.duplicated([*key, "dst"], keep="first")
    first_mc = ev[ev["mcast"]].groupby(key, observed=True)["ts"].min().rename("first_mc")
    ev = ev.join(first_mc, on=key)
    ev["repair"] = dup_same_dst | (ev["ts"] > ev["first_mc"]).fillna(False)
    return ev.drop(columns=["first_mc"])


def repair_table(point: str, ev: pd.DataFrame, sb: pd.DataFrame) -> pd.DataFrame:
    if ev.empty:
        return pd.DataFrame()
    g = ev.groupby("writer")
    out = pd.DataFrame({
        "first_data": g["repair"].apply(lambda r: int((~r).sum())),
        "repair_data": g["repair"].sum().astype(np.int64),
        "first_bytes": g.apply(lambda x: int(x.loc[~x["repair"], "bytes"].sum()),
                               include_groups=False),
        "repair_bytes": g.apply(lambda x: int(x.loc[x["repair"], "bytes"].sum()),
                                include_groups=False),
    })
    nk = sb[(sb["id"] == 0x06) & (sb["plen"] > 0)].groupby("writer")
    out["acknacks_with_nacks"] = nk.size().reindex(out.index).fillna(0).astype(np.int64)
    out["nacked_sns"] = nk["plen"].sum().reindex(out.index).fillna(0).astype(np.int64)
    out["repair_ratio"] = np.where(out["first_bytes"] > 0,
                                   out["repair_bytes"] / out["first_bytes"].clip(lower=1), 0.0)
    out.insert(0, "point", point)
    return out.reset_index()


def nack_table(pd_: PointData) -> pd.DataFrame:
    """Every ACKNACK that NACKs something, and every NACK_FRAG: the NACKed ranges."""
    sb = pd_.subs
    if sb.empty:
        return pd.DataFrame()
    n = sb[((sb["id"] == 0x06) & (sb["plen"] > 0)) | (sb["id"] == 0x12)]
    fr = pd_.frames.loc[n["frame"].to_numpy()]
    return pd.DataFrame({
        "point": pd_.point, "ts": fr["ts"].to_numpy(),
        "kind": np.asarray(kind_names(n["id"].to_numpy()), dtype=object),
        "reader": n["reader"].to_numpy(), "writer": n["writer"].to_numpy(),
        "first_sn": n["seq"].to_numpy(),
        "last_sn": np.where(n["id"].to_numpy() == 0x06, n["seq2"].to_numpy(), n["seq"].to_numpy()),
        "nacked": n["plen"].astype(np.int64).to_numpy(),
        "src": [ip_str(x) for x in fr["src"].to_numpy()],
    })


def storm_table(nacks: pd.DataFrame) -> pd.DataFrame:
    """NACK storms: >= STORM_READERS distinct readers NACKing the same writer's range
    (same first NACKed sn) within one STORM_WINDOW_S window; one row per storm."""
    if nacks.empty:
        return pd.DataFrame()
    a = nacks[nacks["kind"] == "ACKNACK"].assign(
        window=lambda x: np.floor(x["ts"] / STORM_WINDOW_S).astype(np.int64))
    g = a.groupby(["writer", "first_sn", "window"]).agg(
        readers=("reader", "nunique"), acknacks=("reader", "size"), ts=("ts", "min"),
        points=("point", "nunique"))
    return g[g["readers"] >= STORM_READERS].reset_index()


def rate_table(pd_: PointData, duration: float) -> pd.DataFrame:
    """HEARTBEATs per writer and ACKNACKs per reader (user traffic), per second."""
    sb = pd_.subs
    if sb.empty:
        return pd.DataFrame()
    dur = max(duration, 1e-9)
    u = sb[sb["cls"] == dz.C_USER]
    hb = u[u["id"] == 0x07].groupby("writer").size().rename("count").reset_index()
    hb = hb.rename(columns={"writer": "endpoint"}).assign(role="writer", kind="HEARTBEAT")
    an = u[u["id"] == 0x06].groupby("reader").size().rename("count").reset_index()
    an = an.rename(columns={"reader": "endpoint"}).assign(role="reader", kind="ACKNACK")
    out = pd.concat([hb, an], ignore_index=True)
    out["per_s"] = out["count"] / dur
    out.insert(0, "point", pd_.point)
    return out


def control_table(pd_: PointData) -> pd.DataFrame:
    ct = pd_.ctls
    if ct.empty:
        return pd.DataFrame()
    m = ct[ct["rec"] == 0]
    igmp_names = m["type"].map(lambda t: dz.IGMP_NAMES.get(int(t), f"type_0x{int(t):02x}"))
    pim_names = m["type"].map(lambda t: dz.PIM_NAMES.get(int(t), f"type_{int(t)}"))
    names = np.where(m["proto"] == 2, igmp_names, pim_names)
    df = pd.DataFrame({"point": pd_.point, "proto": np.where(m["proto"] == 2, "igmp", "pim"),
                       "type": names, "version": m["version"].to_numpy(),
                       "group": [ip_str(g) for g in m["group"]],
                       "bytes": pd_.frames.loc[m["frame"].to_numpy(), "wirelen"].to_numpy()})
    return df.groupby(["point", "proto", "type", "version", "group"]).agg(
        messages=("bytes", "size"), bytes=("bytes", "sum")).reset_index()


def memberships(pd_: PointData, local: set[int] | None) -> set[int]:
    """Groups joined by the point's host: IGMP reports seen on the point (from its local
    addresses when known)."""
    ct = pd_.ctls
    if ct.empty:
        return set()
    src = pd_.frames.loc[ct["frame"].to_numpy(), "src"].to_numpy()
    from_local = np.isin(src, list(local)) if local else np.ones(len(ct), dtype=bool)
    igmp = (ct["proto"].to_numpy() == 2) & from_local
    t, rec = ct["type"].to_numpy(), ct["rec"].to_numpy()
    v12 = igmp & np.isin(t, (0x12, 0x16)) & (rec == 0)
    v3 = igmp & (t == 0x22) & (rec == 1) & np.isin(ct["rtype"].to_numpy(), list(JOIN_RECORD_TYPES))
    return {int(g) for g in ct["group"].to_numpy()[v12 | v3] if g}


def flooding_table(pd_: PointData, local: set[int] | None) -> pd.DataFrame:
    """Multicast user-data frames (RTPS user traffic or other UDP, fragments included)
    delivered to the point, by group, with whether the point's host is a member."""
    fr = pd_.frames
    if fr.empty:
        return pd.DataFrame()
    members = memberships(pd_, local)
    payload = _datagram_payload(fr)
    key = ["src", "dst", "ipid"]
    not_local_scope = (fr["dst"].to_numpy() >> 8) != 0xE00000  # 224.0.0.0/24: link-local
    mc = fr[((fr["flags"] & dz.F_MCAST) != 0) & not_local_scope]
    if local:
        mc = mc[~mc["src"].isin(list(local))]
    is_user = (payload.loc[mc.index] == "udp_other").to_numpy().copy()
    if not pd_.subs.empty:  # datagrams (all their fragments) carrying RTPS user traffic
        u = pd_.subs.loc[pd_.subs["cls"] == dz.C_USER, "frame"].unique()
        done = fr.loc[u, key].drop_duplicates().assign(user=True)
        hit = mc[key].merge(done, on=key, how="left")["user"].fillna(False).to_numpy(dtype=bool)
        is_user |= hit
    mc = mc[is_user]
    if mc.empty:
        return pd.DataFrame()
    df = pd.DataFrame({"point": pd_.point, "group": mc["dst"].to_numpy(),
                       "bytes": mc["wirelen"].astype(np.int64).to_numpy()})
    out = df.groupby(["point", "group"]).agg(frames=("bytes", "size"), bytes=("bytes", "sum"))
    out = out.reset_index()
    out["member"] = out["group"].isin(list(members))
    out["flooded"] = ~out["member"]
    out["group"] = out["group"].map(ip_str)
    return out


def fragment_table(pd_: PointData) -> pd.DataFrame:
    fr = pd_.frames
    if fr.empty:
        return pd.DataFrame()
    done = fr[(fr["flags"] & dz.F_REASM) != 0]
    return (done.groupby("nfrags").size().rename("datagrams").reset_index()
            .rename(columns={"nfrags": "fragments_per_datagram"}).assign(point=pd_.point))


# ---- the run ----------------------------------------------------------------------------
def load_local_ips(pcap_dir: Path) -> dict[str, set[int]]:
    """``pcaps/points.json`` written by captures.capture: {point: {"ips": [...]}}."""
    f = pcap_dir / "points.json"
    if not f.exists():
        return {}
    try:
        raw = json.loads(f.read_text())
        return {p: {ip_int(ip) for ip in v.get("ips", [])} for p, v in raw.items()}
    except (ValueError, AttributeError) as exc:
        raise WireError(f"{f}: bad points file ({exc}); "
                        "expected {point: {\"ips\": [addresses]}}") from exc


def _write(df: pd.DataFrame, path: Path) -> None:
    tmp = path.with_suffix(".tmp")
    df.to_parquet(tmp, index=False)
    os.replace(tmp, path)


def analyse_pcaps(points: Mapping[str, list[Path]], out_dir: Path | None,
                  local_ips: Mapping[str, set[int]] | None = None,
                  run_span: Mapping[str, float] | None = None) -> dict:
    """Dissect every point's files, write the wire tables into out_dir (if given) and
    return the totals (the contents of summary.json).

    ``run_span`` (``{"start", "end"}``, wall-clock seconds; the manifest's ``run_span``)
    gives ``coverage``: how much of the run each point's surviving files hold (a ring
    buffer keeps only the end of a long run, and every figure here describes that part).
    """
    local_ips = local_ips or {}
    loaded = [load_point(p, files) for p, files in sorted(points.items())]
    ts = [x.frames["ts"] for x in loaded if not x.frames.empty]
    t0 = float(min(t.min() for t in ts)) if ts else 0.0
    t1 = float(max(t.max() for t in ts)) if ts else 0.0
    duration = t1 - t0
    tables: dict[str, list[pd.DataFrame]] = {k: [] for k in (
        "packets", "submessages", "repairs", "nacks", "rates", "control", "flooding",
        "fragments", "topics")}
    totals_rtps: dict[str, int] = {}
    bad: dict[str, int] = {}
    quoted: dict[str, int] = {}
    n_packets = frag_frames = user_bytes = rtps_bytes = repair_bytes = first_bytes = 0
    igmp: dict[str, int] = {"query": 0, "report": 0, "leave": 0}
    pim: dict[str, int] = {}
    events = []
    for x in loaded:
        local = local_ips.get(x.point)
        if not local and not x.ctls.empty:
            # infer: the single source of IGMP reports on this point (several sources mean
            # reports are flooded, so the point's own address is unknown)
            rep = x.ctls[(x.ctls["proto"] == 2) & np.isin(x.ctls["type"], (0x12, 0x16, 0x17, 0x22))]
            srcs = set(x.frames.loc[rep["frame"].to_numpy(), "src"].astype(int))
            local = srcs if len(srcs) == 1 else None
        for k, v in x.bad.items():
            bad[k] = bad.get(k, 0) + v
        for k, v in x.quoted.items():
            quoted[k] = quoted.get(k, 0) + v
        n_packets += len(x.frames)
        if x.frames.empty:
            continue
        frag_frames += int(((x.frames["flags"] & dz.F_FRAG) != 0).sum())
        tables["packets"].append(packet_table(x, local, t0))
        tables["submessages"].append(submessage_table(x, local, t0))
        ev = data_events(x)
        if not ev.empty:
            events.append(ev.assign(point=x.point))
            user_bytes += int(ev["bytes"].sum())
            repair_bytes += int(ev.loc[ev["repair"], "bytes"].sum())
            first_bytes += int(ev.loc[~ev["repair"], "bytes"].sum())
            tables["repairs"].append(repair_table(x.point, ev, x.subs))
        tables["nacks"].append(nack_table(x))
        tables["rates"].append(rate_table(x, duration))
        tables["control"].append(control_table(x))
        tables["flooding"].append(flooding_table(x, local))
        tables["fragments"].append(fragment_table(x))
        tables["topics"].append(x.topics)
        if not x.subs.empty:
            for sid, n in x.subs["id"].value_counts().items():
                name = dz.submessage_name(int(sid))
                totals_rtps[name] = totals_rtps.get(name, 0) + int(n)
            rt = x.frames[x.frames["kind"] == dz.K_RTPS]
            rtps_bytes += int(rt["l4len"].sum())
        cm = x.ctls[x.ctls["rec"] == 0] if not x.ctls.empty else x.ctls
        for proto, t in zip(cm.get("proto", []), cm.get("type", []), strict=True):
            if proto == 2:
                name = {0x11: "query", 0x12: "report", 0x16: "report", 0x22: "report",
                        0x17: "leave"}.get(int(t), "other")
                igmp[name] = igmp.get(name, 0) + 1
            else:
                name = dz.PIM_NAMES.get(int(t), f"type_{int(t)}")
                pim[name] = pim.get(name, 0) + 1
    merged = {k: pd.concat([d for d in v if not d.empty], ignore_index=True)
              if any(not d.empty for d in v) else pd.DataFrame() for k, v in tables.items()}
    if not merged["topics"].empty:
        merged["topics"] = merged["topics"].drop_duplicates(["guid", "topic", "type"])
    merged["storms"] = storm_table(merged["nacks"])
    # the topic of each endpoint, from SEDP when the capture holds it
    topic_of = ({} if merged["topics"].empty
                else dict(zip(merged["topics"]["guid"], merged["topics"]["topic"], strict=True)))
    for name, col in (("repairs", "writer"), ("rates", "endpoint"), ("storms", "writer")):
        df = merged[name]
        if not df.empty:
            df["topic"] = df[col].astype(str).map(topic_of).fillna("")
    rates = merged["rates"]

    def _mean_rate(kind: str) -> float:
        if rates.empty:
            return 0.0
        r = rates[rates["kind"] == kind].groupby("endpoint")["count"].max()
        return float(r.mean() / max(duration, 1e-9)) if len(r) else 0.0

    storms = merged["storms"]
    summary = {
        "packets": int(n_packets),
        "rtps_submessages": dict(sorted(totals_rtps.items())),
        "rtps_submessages_quoted_in_icmp": dict(sorted(quoted.items())),
        "user_data_bytes": int(user_bytes),
        "meta_bytes": int(max(rtps_bytes - user_bytes, 0)),
        "meta_share": float((rtps_bytes - user_bytes) / rtps_bytes) if rtps_bytes else 0.0,
        "repair_bytes": int(repair_bytes),
        "repair_ratio": float(repair_bytes / first_bytes) if first_bytes else 0.0,
        "acknack_per_reader_per_s": _mean_rate("ACKNACK"),
        "heartbeat_per_writer_per_s": _mean_rate("HEARTBEAT"),
        "nack_storms": len(storms.drop_duplicates(["writer", "first_sn", "window"]))
        if not storms.empty else 0,
        "flooded_frames": int(merged["flooding"].loc[merged["flooding"]["flooded"], "frames"].sum())
        if not merged["flooding"].empty else 0,
        "ip_fragments": int(frag_frames),
        "igmp": igmp,
        "pim": dict(sorted(pim.items())),
        "duration_s": float(duration),
        "points": sorted(points),
        "bad": dict(sorted(bad.items())),
    }
    spans = {x.point: (float(x.frames["ts"].min()), float(x.frames["ts"].max()))
             if not x.frames.empty else None for x in loaded}
    if run_span:
        summary["coverage"] = cov.of_points(spans, run_span)
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
        for name, df in merged.items():
            _write(df, out_dir / f"{name}.parquet")
        tmp = out_dir / (SUMMARY_FILE + ".tmp")
        tmp.write_text(json.dumps(summary, indent=2) + "\n")
        os.replace(tmp, out_dir / SUMMARY_FILE)
    return summary


def analyse_run(run_dir: str | os.PathLike[str],
                run_span: Mapping[str, float] | None = None) -> dict:
    """Analyse ``run_dir/pcaps`` into ``run_dir/wire`` (contract §4); returns the summary.

    The run's span comes from ``run_span`` or else the run's manifest (``run_span``)."""
    run = Path(run_dir)
    if run_span is None:
        with contextlib.suppress(OSError, ValueError, AttributeError):
            run_span = json.loads((run / "manifest.json").read_text()).get("run_span")
    pcaps = run / "pcaps"
    if not pcaps.is_dir():
        raise WireError(f"{run}: no pcaps/ directory (expected a run directory with captures)")
    points = discover_pcaps(pcaps)
    if not points:
        raise WireError(f"{pcaps}: no capture files (*.pcap, *.pcapN, *.pcapng)")
    return analyse_pcaps(points, run / "wire", load_local_ips(pcaps), run_span)


def analyse_path(target: str | os.PathLike[str], out_dir: Path | None = None) -> tuple[dict, Path]:
    """A run directory or a single capture file; returns (summary, tables directory)."""
    p = Path(target)
    if p.is_dir():
        return analyse_run(p), p / "wire"
    if not p.is_file():
        raise WireError(f"{p}: no such run directory or capture file")
    m = RING_SUFFIX.match(p.name)
    point = m["point"] if m else p.stem
    out = out_dir or p.with_name(f"{p.name}.wire")
    return analyse_pcaps({point: [p]}, out, load_local_ips(p.parent)), out
