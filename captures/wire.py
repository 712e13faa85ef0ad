"""Per-run wire tables: turn a run's captures into the tables of captures/README.md.

    analyse_run(run_dir)          # reads run_dir/pcaps/*.pcap*, writes run_dir/wire/
    analyse_pcaps({"h1-eth0": [path]}, out_dir, local_ips={"h1-eth0": {"10.0.0.1"}})

The per-packet work is done once, in C (captures/fold.py -> dissect.aggregate): each
capture point arrives here as small tables keyed by source address and second, by
endpoint GUID, by group. This module only names, filters and regroups those (hundreds
to thousands of rows), and writes them. Where each metric is defined:

- in C (captures/native/mcl_dissect.c): what a frame's payload is (a fragment takes its
  datagram's), a submessage's class, the writer/reader GUID of a submessage, and whether
  a DATA is a repair (``data_is_repair``);
- here: direction (from the point's addresses), memberships and flooding, NACK storms,
  rates, and the summary.
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import os
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from captures import coverage as cov
from captures import dissect as dz
from captures import fold
from captures.fold import RING_SUFFIX, WireError, discover_pcaps, ip_int, load_local_ips

__all__ = ["RING_SUFFIX", "SUMMARY_FILE", "WireError", "analyse_folded", "analyse_path",
           "analyse_pcaps", "analyse_run", "discover_pcaps", "ip_int", "ip_str",
           "load_local_ips"]

STORM_WINDOW_S = 0.010  # ACKNACKs for the same writer range within this window ...
STORM_READERS = 3  # ... from at least this many distinct readers make a NACK storm
JOIN_RECORD_TYPES = {1, 2, 4, 5}  # IGMPv3 MODE_IS_INCLUDE/EXCLUDE, TO_EXCLUDE, ALLOW
SUMMARY_FILE = "summary.json"


def ip_str(v: int) -> str:
    return str(ipaddress.IPv4Address(int(v)))


KIND_CATEGORIES = [dz.submessage_name(i) for i in range(256)]


def kind_names(ids: np.ndarray) -> pd.Categorical:
    """Submessage ids -> specification names, vectorised (Categorical)."""
    return pd.Categorical.from_codes(np.asarray(ids, dtype=np.int16), categories=KIND_CATEGORIES)


# payload codes of the C core (frame kinds, plus fragments whose datagram never completed)
PAYLOADS = np.array(["ip_other", "rtps", "igmp", "pim", "udp_other", "non_ip", "icmp",
                     "fragment_incomplete"], dtype=object)
DIRECTIONS = np.array(["unknown", "out", "in"], dtype=object)
CASTS = np.array(["unicast", "multicast"], dtype=object)
CLASSES = np.array(["none", "discovery", "user"], dtype=object)
IGMP_SUMMARY = {0x11: "query", 0x12: "report", 0x16: "report", 0x22: "report", 0x17: "leave"}


def _direction_codes(src: np.ndarray, local: set[int] | None) -> np.ndarray:
    """0 unknown (no local address known), 1 out (sent by the point's host), 2 in."""
    if not local:
        return np.zeros(len(src), dtype=np.int8)
    return np.where(np.isin(src, list(local)), 1, 2).astype(np.int8)


def guid_names(prefixes: np.ndarray, pfx: np.ndarray, eid: np.ndarray) -> np.ndarray:
    """GUIDs ``prefixhex:entityhex`` of (prefix index, entity id) pairs; an unknown prefix
    (none given, or the table was full) reads as 24 ``?``."""
    hexes = [p.tobytes().hex() for p in prefixes]
    unknown = "?" * 24
    return np.array([f"{hexes[p] if p < len(hexes) else unknown}:{e:08x}"
                     for p, e in zip(pfx.tolist(), eid.tolist(), strict=True)], dtype=object)


def _frame(arr: np.ndarray, cols: tuple[str, ...]) -> pd.DataFrame:
    return pd.DataFrame({c: arr[c] for c in cols})


# ---- per-table builders (one capture point's folded tables) --------------------------
def packet_table(point: str, a: dz.Aggregate, local: set[int] | None) -> pd.DataFrame:
    if not len(a.pkt):
        return pd.DataFrame()
    df = pd.DataFrame({
        "direction": _direction_codes(a.pkt["src"], local),
        "cast": a.pkt["cast"].astype(np.int8),
        "payload": PAYLOADS[a.pkt["payload"]],
        "second": a.pkt["second"],
        "packets": a.pkt["packets"], "bytes": a.pkt["bytes"], "fragments": a.pkt["fragments"],
    })
    out = df.groupby(["direction", "cast", "payload", "second"]).sum().reset_index()
    out["direction"] = DIRECTIONS[out["direction"].to_numpy()]
    out["cast"] = CASTS[out["cast"].to_numpy()]
    out.insert(0, "point", point)
    return out


def submessage_table(point: str, a: dz.Aggregate, local: set[int] | None) -> pd.DataFrame:
    if not len(a.sub):
        return pd.DataFrame()
    df = pd.DataFrame({
        "direction": _direction_codes(a.sub["src"], local),
        "kind": a.sub["id"], "cast": a.sub["cast"].astype(np.int8), "traffic": a.sub["cls"],
        "second": a.sub["second"], "submessages": a.sub["submessages"],
        "bytes": a.sub["bytes"], "payload_bytes": a.sub["payload_bytes"],
    })
    out = df.groupby(["direction", "kind", "cast", "traffic", "second"]).sum().reset_index()
    out["direction"] = DIRECTIONS[out["direction"].to_numpy()]
    out["kind"] = [dz.submessage_name(int(i)) for i in out["kind"]]
    out["cast"] = CASTS[out["cast"].to_numpy()]
    out["traffic"] = CLASSES[out["traffic"].to_numpy()]
    out.insert(0, "point", point)
    return out


def endpoint_table(a: dz.Aggregate) -> pd.DataFrame:
    """Per endpoint GUID: data sends (first / repair), NACKs received, HEARTBEATs sent,
    ACKNACKs sent (the C core's per-GUID counters, named)."""
    g = a.guid
    cols = ("first_data", "repair_data", "first_bytes", "repair_bytes", "acknacks_with_nacks",
            "nacked_sns", "heartbeats", "acknacks")
    df = _frame(g, cols).astype(np.int64)
    df.insert(0, "guid", guid_names(a.prefixes, g["pfx"], g["eid"]))
    return df.groupby("guid", sort=True).sum()  # unknown prefixes merge, as their names do


def repair_table(point: str, ep: pd.DataFrame) -> pd.DataFrame:
    w = ep[(ep["first_data"] + ep["repair_data"]) > 0]
    if w.empty:
        return pd.DataFrame()
    out = w[["first_data", "repair_data", "first_bytes", "repair_bytes", "acknacks_with_nacks",
             "nacked_sns"]].copy()
    out["repair_ratio"] = np.where(out["first_bytes"] > 0,
                                   out["repair_bytes"] / out["first_bytes"].clip(lower=1), 0.0)
    out.insert(0, "point", point)
    return out.rename_axis("writer").reset_index()


def nack_table(point: str, a: dz.Aggregate) -> pd.DataFrame:
    """Every ACKNACK that NACKs something, and every NACK_FRAG: the NACKed ranges."""
    n = a.nacks
    if not len(n):
        return pd.DataFrame()
    return pd.DataFrame({
        "point": point, "ts": n["ts"],
        "kind": np.asarray(kind_names(n["id"]), dtype=object),
        "reader": guid_names(a.prefixes, n["rpfx"], n["reader_eid"]),
        "writer": guid_names(a.prefixes, n["wpfx"], n["writer_eid"]),
        "first_sn": n["first_sn"], "last_sn": n["last_sn"],
        "nacked": n["nacked"].astype(np.int64),
        "src": [ip_str(x) for x in n["src"]],
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


def rate_table(point: str, ep: pd.DataFrame, duration: float) -> pd.DataFrame:
    """HEARTBEATs per writer and ACKNACKs per reader (user traffic), per second."""
    dur = max(duration, 1e-9)
    hb = ep.loc[ep["heartbeats"] > 0, "heartbeats"]
    an = ep.loc[ep["acknacks"] > 0, "acknacks"]
    if hb.empty and an.empty:
        return pd.DataFrame()
    out = pd.concat([
        pd.DataFrame({"endpoint": hb.index.to_numpy(), "count": hb.to_numpy(),
                      "role": "writer", "kind": "HEARTBEAT"}),
        pd.DataFrame({"endpoint": an.index.to_numpy(), "count": an.to_numpy(),
                      "role": "reader", "kind": "ACKNACK"})], ignore_index=True)
    out["per_s"] = out["count"] / dur
    out.insert(0, "point", point)
    return out


def _ctl_messages(a: dz.Aggregate) -> np.ndarray:
    return a.ctl[a.ctl["rec"] == 0]


def control_table(point: str, a: dz.Aggregate) -> pd.DataFrame:
    m = _ctl_messages(a)
    if not len(m):
        return pd.DataFrame()
    igmp = m["proto"] == 2
    names = [dz.IGMP_NAMES.get(int(t), f"type_0x{int(t):02x}") if i
             else dz.PIM_NAMES.get(int(t), f"type_{int(t)}")
             for t, i in zip(m["type"], igmp, strict=True)]
    df = pd.DataFrame({"point": point, "proto": np.where(igmp, "igmp", "pim"), "type": names,
                       "version": m["version"], "group": [ip_str(g) for g in m["group"]],
                       "messages": m["messages"], "bytes": m["bytes"]})
    return df.groupby(["point", "proto", "type", "version", "group"]).sum().reset_index()


def memberships(a: dz.Aggregate, local: set[int] | None) -> set[int]:
    """Groups joined by the point's host: IGMP reports seen on the point (from its local
    addresses when known)."""
    ct = a.ctl
    if not len(ct):
        return set()
    from_local = np.isin(ct["src"], list(local)) if local else np.ones(len(ct), dtype=bool)
    igmp = (ct["proto"] == 2) & from_local
    t, rec = ct["type"], ct["rec"]
    v12 = igmp & np.isin(t, (0x12, 0x16)) & (rec == 0)
    v3 = igmp & (t == 0x22) & (rec == 1) & np.isin(ct["rtype"], list(JOIN_RECORD_TYPES))
    return {int(g) for g in ct["group"][v12 | v3] if g}


def flooding_table(point: str, a: dz.Aggregate, local: set[int] | None,
                   joined: set[int] | None = None) -> pd.DataFrame:
    """Multicast user-data frames (RTPS user traffic or other UDP, fragments included)
    delivered to the point, by group, with whether the point's host is a member (joined
    in this capture, or in ``joined``: the groups of its whole-run IGMP capture)."""
    fl = a.flood
    if local:
        fl = fl[~np.isin(fl["src"], list(local))]
    if not len(fl):
        return pd.DataFrame()
    df = pd.DataFrame({"point": point, "group": fl["group"].astype(np.int64),
                       "frames": fl["frames"], "bytes": fl["bytes"]})
    out = df.groupby(["point", "group"]).sum().reset_index()
    out["member"] = out["group"].isin(list(memberships(a, local) | (joined or set())))
    out["flooded"] = ~out["member"]
    out["group"] = out["group"].map(ip_str)
    return out


def fragment_table(point: str, a: dz.Aggregate) -> pd.DataFrame:
    if not len(a.frag):
        return pd.DataFrame()
    df = pd.DataFrame({"fragments_per_datagram": a.frag["nfrags"].astype(np.uint16),
                       "datagrams": a.frag["datagrams"]})
    return (df.groupby("fragments_per_datagram").sum().reset_index().assign(point=point))


def topic_table(a: dz.Aggregate) -> pd.DataFrame:
    t = a.topics
    guids = [g.tobytes().hex() for g in t["guid"]]
    return pd.DataFrame({
        "guid": [f"{g[:24]}:{g[24:]}" for g in guids],
        "topic": [x.decode(errors="replace") for x in t["topic"]],
        "type": [x.decode(errors="replace") for x in t["type"]],
        "is_reader": t["is_reader"].astype(bool)})


def _infer_local(a: dz.Aggregate) -> set[int] | None:
    """Without points.json: the single source of IGMP reports on this point (several
    sources mean reports are flooded, so the point's own address is unknown)."""
    ct = a.ctl
    rep = ct[(ct["proto"] == 2) & np.isin(ct["type"], (0x12, 0x16, 0x17, 0x22))]
    srcs = {int(s) for s in rep["src"]}
    return srcs if len(srcs) == 1 else None


# ---- the run ----------------------------------------------------------------------------
def _write(df: pd.DataFrame, path: Path) -> None:
    tmp = path.with_suffix(".tmp")
    df.to_parquet(tmp, index=False)
    os.replace(tmp, path)


def analyse_folded(folded: fold.Folded, out_dir: Path | None,
                   local_ips: Mapping[str, set[int]] | None = None,
                   run_span: Mapping[str, float] | None = None,
                   windows: Mapping | None = None,
                   control: fold.Folded | None = None) -> dict:
    """Name and regroup the folded tables, write them into out_dir (if given) and return
    the totals (the contents of summary.json).

    ``run_span`` (``{"start", "end"}``, wall-clock seconds; the manifest's ``run_span``)
    gives ``coverage``: how much of the run each point's surviving files hold (a ring
    buffer keeps only the end of a long run, and every figure here describes that part).

    ``windows`` (``pcaps/windows.json``, captures/windows.py): the files hold capture
    windows inside the measurement window; every rate is per second of window
    (``duration_s`` = the windows' seconds) and the summary names them (``windows``).
    ``control``: the points' whole-run IGMP/PIM captures, for memberships only.
    """
    local_ips = local_ips or {}
    window_s = float(windows.get("s") or 0.0) if windows else 0.0
    duration = window_s if windows else folded.t1 - folded.t0
    tables: dict[str, list[pd.DataFrame]] = {k: [] for k in (
        "packets", "submessages", "repairs", "nacks", "rates", "control", "flooding",
        "fragments", "topics")}
    subcount = np.zeros(256, dtype=np.int64)
    quoted = np.zeros(256, dtype=np.int64)
    bad: dict[str, int] = {}
    n_packets = frag_frames = user_bytes = rtps_bytes = repair_bytes = first_bytes = 0
    igmp: dict[str, int] = {"query": 0, "report": 0, "leave": 0}
    pim: dict[str, int] = {}
    for point, a in sorted(folded.points.items()):
        local = local_ips.get(point) or (_infer_local(a) if len(a.ctl) else None)
        for k, v in a.bad.items():
            bad[k] = bad.get(k, 0) + v
        quoted += a.quoted.astype(np.int64)
        n_packets += a.nframes
        if not a.nframes:
            continue
        subcount += a.subcount.astype(np.int64)
        frag_frames += a.frag_frames
        rtps_bytes += a.rtps_bytes
        tables["packets"].append(packet_table(point, a, local))
        tables["submessages"].append(submessage_table(point, a, local))
        ep = endpoint_table(a)
        if not ep.empty:
            first_bytes += int(ep["first_bytes"].sum())
            repair_bytes += int(ep["repair_bytes"].sum())
            tables["repairs"].append(repair_table(point, ep))
            tables["rates"].append(rate_table(point, ep, duration))
        tables["nacks"].append(nack_table(point, a))
        tables["control"].append(control_table(point, a))
        joined = (memberships(control.points[point], local)
                  if control is not None and point in control.points else None)
        tables["flooding"].append(flooding_table(point, a, local, joined))
        tables["fragments"].append(fragment_table(point, a))
        tables["topics"].append(topic_table(a))
        m = _ctl_messages(a)
        for proto, t, n in zip(m["proto"], m["type"], m["messages"], strict=True):
            if proto == 2:
                name = IGMP_SUMMARY.get(int(t), "other")
                igmp[name] = igmp.get(name, 0) + int(n)
            else:
                name = dz.PIM_NAMES.get(int(t), f"type_{int(t)}")
                pim[name] = pim.get(name, 0) + int(n)
    user_bytes = first_bytes + repair_bytes
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
            df["topic"] = [topic_of.get(g, "") for g in df[col].astype(str)]
    rates = merged["rates"]

    def _mean_rate(kind: str) -> float:
        if rates.empty:
            return 0.0
        r = rates[rates["kind"] == kind].groupby("endpoint")["count"].max()
        return float(r.mean() / max(duration, 1e-9)) if len(r) else 0.0

    def _by_name(counts: np.ndarray) -> dict[str, int]:
        return dict(sorted((dz.submessage_name(i), int(n)) for i, n in enumerate(counts) if n))

    storms = merged["storms"]
    summary = {
        "packets": int(n_packets),
        "rtps_submessages": _by_name(subcount),
        "rtps_submessages_quoted_in_icmp": _by_name(quoted),
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
        "points": sorted(folded.points),
        "bad": dict(sorted(bad.items())),
    }
    spans = {name: (agg.tmin, agg.tmax) if agg.nframes else None
             for name, agg in folded.points.items()}
    if windows:
        summary["windows"] = window_summary(windows)
    elif run_span:
        summary["coverage"] = cov.of_points(spans, run_span)
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
        for name, df in merged.items():
            _write(df, out_dir / f"{name}.parquet")
        tmp = out_dir / (SUMMARY_FILE + ".tmp")
        tmp.write_text(json.dumps(summary, indent=2) + "\n")
        os.replace(tmp, out_dir / SUMMARY_FILE)
    return summary


def window_summary(rec: Mapping) -> dict:
    """The summary's ``windows``: what the figures describe (captures/windows.py)."""
    keep = ("index", "start", "end", "s", "offset_s", "inside", "packets", "dropped")
    return {"text": rec.get("text", ""), "s": rec.get("s", 0.0), "plan": rec.get("plan", {}),
            "windows": [{k: w.get(k) for k in keep} for w in rec.get("windows") or []]}


def analyse_pcaps(points: Mapping[str, list[Path]], out_dir: Path | None,
                  local_ips: Mapping[str, set[int]] | None = None,
                  run_span: Mapping[str, float] | None = None,
                  windows: Mapping | None = None,
                  control: Mapping[str, list[Path]] | None = None) -> dict:
    """Dissect every point's files, write the wire tables into out_dir (if given) and
    return the totals (the contents of summary.json)."""
    return analyse_folded(fold.fold(points), out_dir, local_ips, run_span, windows,
                          fold.fold(control) if control else None)


def run_span_of(run: Path) -> Mapping[str, float] | None:
    """The run's ``run_span`` from its manifest (None when absent or unreadable)."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        return json.loads((run / "manifest.json").read_text()).get("run_span")
    return None


def analyse_run(run_dir: str | os.PathLike[str],
                run_span: Mapping[str, float] | None = None) -> dict:
    """Analyse ``run_dir/pcaps`` into ``run_dir/wire`` (contract §4); returns the summary.

    The run's span comes from ``run_span`` or else the run's manifest (``run_span``)."""
    run = Path(run_dir)
    if not run.is_dir():
        raise WireError(f"{run}: no pcaps/ directory (expected a run directory with captures)")
    t = fold.resolve(run)
    return analyse_pcaps(t.points, t.out_dir, t.local_ips, run_span or run_span_of(run),
                         t.windows, t.control)


def analyse_path(target: str | os.PathLike[str], out_dir: Path | None = None) -> tuple[dict, Path]:
    """A run directory or a single capture file; returns (summary, tables directory)."""
    t = fold.resolve(target, out_dir)
    span = run_span_of(Path(target)) if Path(target).is_dir() else None
    return analyse_pcaps(t.points, t.out_dir, t.local_ips, span, t.windows, t.control), t.out_dir
