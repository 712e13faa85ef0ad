"""Load a campaign's results (docs/contracts.md §3 and §4) into dataframes.

Only complete runs (``manifest.json`` with ``"status": "complete"``) are analysed; the
others are listed in :attr:`Campaign.skipped` with the reason so the report can say so.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from analysis.testbed import UNVERIFIED, UNVERIFIED_CAUSE, cause_from_ids, legacy_cause
from mcastlab import safepath
from mcastlab.errors import UnsafeResults

CONFIG_KEYS = ("run_id", "group", "mode", "publishers", "subscribers")
MODES = ("unicast", "multicast")
LATENCY_COLUMNS = ("run_id", "sample", "latency_us")
THROUGHPUT_COLUMNS = ("run_id", "subscriber", "second", "samples", "samples_per_s", "mbps", "lost")
RESOURCES_COLUMNS = ("run_id", "process", "t_s", "cpu_percent", "rss_bytes")
# Scalar wire metrics (contracts §4) carried into the runs table, prefixed with "wire_".
WIRE_SCALARS = (
    "packets",
    "user_data_bytes",
    "meta_bytes",
    "meta_share",
    "repair_bytes",
    "repair_ratio",
    "acknack_per_reader_per_s",
    "heartbeat_per_writer_per_s",
    "nack_storms",
    "flooded_frames",
    "ip_fragments",
    "duration_s",
)


# Wire evidence taken from the hosts' kernel counters of every run (manifest "udp" and
# "host_fanout"), with or without a capture.
KERNEL_COUNTERS = ("wire_socket_drop_share", "wire_host_fanout")
RATE_OF = ("packets", "nack_storms", "flooded_frames", "ip_fragments")


class ResultsError(ValueError):
    """A results directory or file does not follow the documented schema."""


def require_distinct_folders(paths: list[Path], action: str) -> None:
    """Raise :class:`ResultsError` when one campaign directory is given twice (also under
    another name: a symbolic link, a trailing ``/.``): its runs would count twice."""
    seen: dict[Path, Path] = {}
    for p in paths:
        real = Path(p).resolve()
        if real in seen:
            raise ResultsError(f"{seen[real]} and {p} are the same campaign directory; each "
                               f"campaign can be {action} once")
        seen[real] = Path(p)


def require_distinct(campaigns: list[Campaign], action: str) -> None:
    """Raise :class:`ResultsError` when a directory is given twice or a run is in two of
    the campaigns (the same run id, start time and host in their manifests: a copied
    campaign, perhaps resumed under another name), naming both."""
    require_distinct_folders([c.path for c in campaigns], action)
    seen: dict[tuple[str, str, str], Path] = {}
    for c in campaigns:
        for key, where in c.identities.items():
            if key in seen:
                rid, started, host = key
                raise ResultsError(
                    f"{seen[key]} and {where} are the same run (run id {rid}, started "
                    f"{started} on {host}); a copy of a campaign cannot be {action} with it")
        for key, where in c.identities.items():
            seen[key] = where


def require_one_scenario(campaigns: list[Campaign], action: str) -> None:
    """Raise :class:`ResultsError` unless the campaigns are all of one scenario (``action``:
    what was asked of them, "pooled" or "compared")."""
    if len({c.name for c in campaigns}) != 1:
        listing = ", ".join(f"{c.path} ({c.name})" for c in campaigns)
        raise ResultsError(f"campaigns of different scenarios cannot be {action}: {listing}")


@dataclass
class Campaign:
    """A campaign's complete runs as dataframes.

    ``runs``: one row per run (config keys, ``agent``, ``repetition``, ``discovery`` and
    ``wire_*`` columns, NaN where a run has no capture). ``latency``: run_id (categorical), sample,
    latency_us. ``throughput``: the throughput table of every run. ``resources``: the CPU
    and RSS samples of every agent process (runs recorded with ``resources = true``).
    """

    path: Path
    name: str
    scenario: str
    runs: pd.DataFrame
    latency: pd.DataFrame
    throughput: pd.DataFrame
    skipped: list[tuple[str, str]] = field(default_factory=list)
    resources: pd.DataFrame = field(
        default_factory=lambda: pd.DataFrame(columns=list(RESOURCES_COLUMNS)))
    pooled: list[Campaign] = field(default_factory=list)  # the campaigns pooled, as loaded
    # (run id, manifest "started", "hostname") -> run directory: what makes a run the
    # same run in two campaigns (a copy); runs whose manifest lacks either are not listed
    identities: dict[tuple[str, str, str], Path] = field(default_factory=dict)

    @property
    def sources(self) -> list[tuple[Path, int]]:
        """(directory, complete runs) of each pooled campaign (analysis/pool.py)."""
        return [(c.path, len(c.runs)) for c in self.pooled]

    def latency_of(self, run_id: str) -> np.ndarray:
        """Publisher 0's latency samples of one run, in order (µs)."""
        row = self.runs.loc[self.runs["run_id"] == run_id].iloc[0]
        start = int(row["latency_offset"])
        values = self.latency["latency_us"].to_numpy()
        return values[start : start + int(row["latency_samples"])]


def _read_json(path: Path) -> dict:
    try:
        with path.open() as fh:
            data = json.load(fh)
    except FileNotFoundError:
        raise ResultsError(f"{path}: file is missing") from None
    except json.JSONDecodeError as exc:
        raise ResultsError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})") from None
    if not isinstance(data, dict):
        raise ResultsError(f"{path}: expected a JSON object at the top level")
    return data


def _check_config(path: Path, cfg: dict) -> None:
    for key in CONFIG_KEYS:
        if key not in cfg:
            raise ResultsError(f"{path}: missing key '{key}' (required: {', '.join(CONFIG_KEYS)})")
    if cfg["mode"] not in MODES:
        raise ResultsError(
            f"{path}: key 'mode' is {cfg['mode']!r}; allowed values: {', '.join(MODES)}"
        )
    for key in ("publishers", "subscribers"):
        if not isinstance(cfg[key], int) or cfg[key] < 1:
            raise ResultsError(f"{path}: key '{key}' must be a positive integer, got {cfg[key]!r}")


def _read_table(path: Path, columns: tuple[str, ...]) -> pd.DataFrame:
    import pyarrow.parquet as pq

    if not path.exists():
        raise ResultsError(f"{path}: file is missing")
    try:
        schema_names = pq.read_schema(path).names
    except Exception as exc:  # pyarrow raises several types for corrupt files
        raise ResultsError(f"{path}: not a readable Parquet file ({exc})") from None
    missing = [c for c in columns if c not in schema_names]
    if missing:
        raise ResultsError(
            f"{path}: missing column(s) {', '.join(missing)} (required: {', '.join(columns)})"
        )
    return pq.read_table(path, columns=[c for c in columns if c != "run_id"]).to_pandas()


def _run_dirs(root: Path, index: dict | None) -> list[tuple[str, Path]]:
    """(run id, directory) of every run: campaign.json's ids (each a plain directory name,
    listed once: mcastlab/safepath.py), else the directories holding a config.json. A run
    directory must not be a symbolic link, nor hold one."""
    where = root / "campaign.json"
    try:
        if index is not None:
            if not isinstance(index.get("runs"), list):
                raise ResultsError(f"{where}: key 'runs' must be a list")
            ids = safepath.index_run_ids(where, index)
        else:
            ids = [p.name for p in sorted(root.iterdir()) if (p / "config.json").is_file()]
            where = root
        return [(rid, safepath.run_directory(root, rid, where)) for rid in ids]
    except UnsafeResults as exc:
        raise ResultsError(str(exc)) from None


def _check_inside(run_dir: Path) -> None:
    """Refuse a run directory holding a symbolic link: what it reads stays inside."""
    link = safepath.symlink_below(run_dir)
    if link is not None:
        raise ResultsError(f"{link}: a symbolic link inside a run directory; a run's files "
                           "are read only inside it")


def load_campaign(path: str | Path) -> Campaign:
    """Read every complete run of the campaign directory ``path``.

    Raises :class:`ResultsError` with a one-line message naming the file and key when the
    directory does not follow the schema, or when it holds no complete run.
    """
    root = Path(path)
    if not root.is_dir():
        raise ResultsError(f"{root}: not a directory (expected a results/<campaign> directory)")
    index = _read_json(root / "campaign.json") if (root / "campaign.json").exists() else None
    rows: list[dict] = []
    lat_parts: list[pd.DataFrame] = []
    thr_parts: list[pd.DataFrame] = []
    res_parts: list[pd.DataFrame] = []
    skipped: list[tuple[str, str]] = []
    identities: dict[tuple[str, str, str], Path] = {}
    dirs_of: dict[str, Path] = {}
    for run_id, run_dir in _run_dirs(root, index):
        manifest_path = run_dir / "manifest.json"
        if not run_dir.exists():
            # in the campaign's matrix but never started (e.g. `mcastlab run --only`)
            skipped.append((run_id, "not run"))
            continue
        if not manifest_path.exists():
            skipped.append((run_id, "no manifest.json (run incomplete)"))
            continue
        _check_inside(run_dir)
        manifest = _read_json(manifest_path)
        try:
            safepath.manifest_members(manifest_path, manifest)
        except UnsafeResults as exc:
            raise ResultsError(str(exc)) from None
        status = manifest.get("status")
        if status != "complete":
            skipped.append((run_id, f"manifest status {status!r}"))
            continue
        cfg = _read_json(run_dir / "config.json")
        _check_config(run_dir / "config.json", cfg)
        if cfg["run_id"] in dirs_of:
            raise ResultsError(f"{run_dir / 'config.json'}: key 'run_id' {cfg['run_id']!r} is "
                               f"also {dirs_of[cfg['run_id']] / 'config.json'}'s; each run once")
        dirs_of[cfg["run_id"]] = run_dir
        started, host = manifest.get("started"), manifest.get("hostname")
        if isinstance(started, str) and isinstance(host, str):
            identities[(str(cfg["run_id"]), started, host)] = run_dir
        lat, thr, res = _run_tables(run_dir, str(cfg["run_id"]))
        if res is not None:
            res_parts.append(res)
        rows.append(_run_row(cfg, manifest, run_dir, len(lat)))
        lat_parts.append(lat[["sample", "latency_us"]])
        thr_parts.append(thr[list(THROUGHPUT_COLUMNS)])
    if not rows:
        reasons = "; ".join(f"{r}: {why}" for r, why in skipped[:5]) or "no run directories"
        raise ResultsError(f"{root}: no complete run to analyse ({reasons})")
    runs = pd.DataFrame(rows)
    # Latency rows are concatenated run after run: remember where each run starts.
    runs["latency_offset"] = runs["latency_samples"].cumsum() - runs["latency_samples"]
    latency = pd.concat(lat_parts, ignore_index=True)
    # run_id as a categorical built from codes: no per-row Python strings for 10 M rows
    codes = np.repeat(np.arange(len(runs), dtype=np.int32), runs["latency_samples"].to_numpy())
    latency.insert(0, "run_id", pd.Categorical.from_codes(codes, categories=runs["run_id"]))
    throughput = pd.concat(thr_parts, ignore_index=True)
    return Campaign(
        path=root,
        name=str((index or {}).get("campaign", root.name)),
        scenario=str((index or {}).get("scenario", "")),
        runs=runs,
        latency=latency,
        throughput=throughput,
        skipped=skipped,
        resources=(pd.concat(res_parts, ignore_index=True) if res_parts
                   else pd.DataFrame(columns=list(RESOURCES_COLUMNS))),
        identities=identities,
    )


def _run_tables(run_dir: Path, run_id: str
                ) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame | None]:
    """A run's latency (in sample order), throughput and, when sampled, resources tables."""
    lat = _read_table(run_dir / "tables" / "latency.parquet", LATENCY_COLUMNS)
    if not lat["sample"].is_monotonic_increasing:
        lat = lat.sort_values("sample", kind="stable")
    thr = _read_table(run_dir / "tables" / "throughput.parquet", THROUGHPUT_COLUMNS)
    thr["run_id"] = run_id
    res_path = run_dir / "tables" / "resources.parquet"
    res = None
    if res_path.exists():  # optional: runs sample CPU and RSS only when asked to
        res = _read_table(res_path, RESOURCES_COLUMNS)
        res["run_id"] = run_id
        res = res[list(RESOURCES_COLUMNS)]
    return lat, thr, res


def _run_row(cfg: dict, manifest: dict, run_dir: Path, n_latency: int) -> dict:
    """One run's row of the runs table, from its config.json and manifest.json."""
    row = {
        "run_id": cfg["run_id"],
        "group": str(cfg["group"]),
        "mode": cfg["mode"],
        "agent": str(cfg.get("agent", "")),
        "discovery": cfg.get("discovery", ""),
        "publishers": int(cfg["publishers"]),
        "subscribers": int(cfg["subscribers"]),
        "repetition": int(cfg.get("repetition", 0)),
        "execution_time": cfg.get("execution_time"),
        "reliable": cfg.get("reliable"),
        "data_len": cfg.get("data_len"),
        "topology": cfg.get("topology", ""),
        # the matrix's named axes (analysis/ablation.py switches one at a time)
        "topology_variant": str(cfg.get("topology_variant", "")),
        "topology_params": json.dumps(cfg.get("topology_params", {}), sort_keys=True),
        "placement_variant": str(cfg.get("placement_variant", "")),
        "fanout": str(cfg.get("fanout", "kernel")),
        "same_host": str(cfg.get("same_host", "udp")),
        # asked for ("" unset: each agent's own); what ran: heartbeat_timing_run
        "heartbeat_timing": str(cfg.get("heartbeat_timing", "")),
        "heartbeat_timing_run": str(manifest.get("heartbeat_timing") or ""),
        # Connext's reliability choices ("" unset: each agent's own)
        "multicast_resend": str(cfg.get("multicast_resend", "")),
        "receive_buffer": str(cfg.get("receive_buffer", "")),
        "latency_count": int(cfg.get("latency_count") or 0),
        "pub_rate": int(cfg.get("pub_rate") or 0),
        "test": str(cfg.get("test", "throughput")),
        "dir": str(run_dir),
        "latency_samples": n_latency,
        # the whole run, network built to torn down: what one more run costs
        "run_duration_s": float(manifest.get("duration_s") or math.nan),
    }
    row.update(_wire_row(run_dir / "wire" / "summary.json"))
    row["wire_socket_drop_share"] = socket_drop_share(manifest.get("udp"))
    row["wire_host_fanout"] = host_fanout_factor(manifest.get("host_fanout"))
    row["wire_capture_drop_share"] = capture_drop_share(manifest.get("capture_drops"))
    row["shm_data_share"] = shm_data_share(manifest.get("same_host"))
    row.update(fidelity_row(manifest.get("fidelity")))
    row["retaken"] = retaken_text(manifest.get("retaken"))
    return row


def fidelity_row(fid: object) -> dict[str, object]:
    """``fidelity_bound`` (network | saturated | host | unknown), ``fidelity_reasons`` (why
    host-bound, in words), ``fidelity_cause`` (what bound a run that gives no verdict:
    emulator | host | unverified, from the ids of the checks it failed, read from the
    words only in records made before the ids), ``fidelity_faithful`` (the record's
    ``emulator.faithful`` with CPU-limited hosts, else None), ``fidelity_saturation`` (how
    CPU-limited hosts were saturated),
    ``fidelity_warnings``, and ``fidelity_drops_cpu`` / ``fidelity_drops_by_cpu`` (the CPU
    whose pinned hosts dropped the most socket datagrams, and the figures) of a
    run's manifest ``fidelity`` record (experiments/fidelity.py). ``saturated`` runs had
    faithful emulation of saturated fixed-capacity hosts: they give verdicts. Runs
    recorded before the monitor existed are ``unknown``, never taken as network-bound.
    A run whose checks did not all run (record ``verified`` false) is ``unverified``, its
    reasons what was not checked: it gives no verdict, as a host-bound run gives none."""
    if not isinstance(fid, dict) or fid.get("bound") not in ("network", "saturated", "host"):
        return {"fidelity_bound": "unknown", "fidelity_reasons": "", "fidelity_cause": "",
                "fidelity_faithful": None,
                "fidelity_saturation": "", "fidelity_warnings": "",
                "fidelity_drops_cpu": "", "fidelity_drops_by_cpu": ""}
    reasons = fid.get("reasons") or []
    bound = fid["bound"]
    cause = ""
    if bound == "host":
        failed = fid.get("failed")
        cause = (cause_from_ids([str(i) for i in failed]) if isinstance(failed, list)
                 else legacy_cause("; ".join(str(r) for r in reasons)))
    if fid.get("verified", True) is False:  # records made before the key read as verified
        bound, cause = "unverified", UNVERIFIED_CAUSE
        reasons = [UNVERIFIED + "; ".join(str(m) for m in fid.get("unverified") or [])
                   + (" (and " + "; ".join(str(r) for r in reasons) + ")" if reasons else "")]
    emulator = fid.get("emulator")
    faithful = emulator.get("faithful") if isinstance(emulator, dict) else None
    return {"fidelity_bound": bound,
            "fidelity_reasons": "; ".join(str(r) for r in reasons),
            "fidelity_cause": cause,
            "fidelity_faithful": faithful if isinstance(faithful, bool) else None,
            "fidelity_saturation": str(fid.get("saturation_text") or ""),
            "fidelity_warnings": "; ".join(str(w) for w in fid.get("warnings") or []),
            "fidelity_drops_cpu": str(fid.get("most_drops_cpu") or ""),
            "fidelity_drops_by_cpu": str(fid.get("drops_by_cpu_text") or "")}


def retaken_text(retaken: object) -> str:
    """The earlier attempts of a run that the runner moved to superseded/ and took again
    (manifest ``retaken``: unfaithful emulation, or steal time alone), '' when none.

    >>> retaken_text([{"attempt": 1, "superseded": "20261203T051500Z",
    ...                "why": ["timer wake-up latency p99 outside the hosts: 5923 µs"]}])
    'attempt 1 (superseded/20261203T051500Z): timer wake-up latency p99 outside the hosts: 5923 µs'
    """
    if not isinstance(retaken, list):
        return ""
    return "; ".join(
        f"attempt {r.get('attempt')} (superseded/{r.get('superseded')}): "
        + ", ".join(str(w) for w in r.get("why") or [])
        for r in retaken if isinstance(r, dict))


def _totals(records: object, *keys: str) -> list[int] | None:
    """Each key summed over a manifest record keyed by host or capture point (missing or
    null values count 0); None when the record is absent or empty."""
    if not isinstance(records, dict) or not records:
        return None
    return [sum(int(r.get(k) or 0) for r in records.values() if isinstance(r, dict))
            for k in keys]


def _ratio(records: object, numerator: str, denominator: str) -> float:
    """Sum of ``numerator`` over sum of ``denominator`` across a manifest record (NaN when
    the record is absent or the denominator sums to 0)."""
    totals = _totals(records, denominator, numerator)
    if not totals or not totals[0]:
        return np.nan
    return totals[1] / totals[0]


def socket_drop_share(udp: object) -> float:
    """Share of the datagrams reaching the agents' hosts that the kernel dropped because a
    socket's receive buffer was full (manifest ``udp``; NaN for runs recorded without it).

    >>> socket_drop_share({"h1": {"InDatagrams": 90, "RcvbufErrors": 10}})
    0.1
    """
    totals = _totals(udp, "InDatagrams", "RcvbufErrors")
    if not totals or not sum(totals):
        return np.nan
    got, drops = totals
    return drops / (got + drops)


def host_fanout_factor(host_fanout: object) -> float:
    """Socket deliveries per UDP datagram arriving at the agents' hosts, over all of them
    (manifest ``host_fanout``, experiments/sockstats.py): 1 when each datagram reaches one
    socket, more when the kernel hands a multicast datagram to every socket bound to its
    port. NaN for runs recorded without it.

    >>> host_fanout_factor({"h1": {"udp_arrived": 100, "socket_deliveries": 700},
    ...                     "h2": {"udp_arrived": 100, "socket_deliveries": 100}})
    4.0
    """
    return _ratio(host_fanout, "socket_deliveries", "udp_arrived")


def shm_data_share(same_host: object) -> float:
    """Share of the user DATA the subscribers received that came through shared memory
    (manifest ``same_host.data_by_path``, Fast DDS agents only, experiments/samehost.py);
    NaN where the agent does not count its paths.

    >>> shm_data_share({"data_by_path": {"shared_memory": 25, "udp_this_host": 0,
    ...                                  "udp_other_hosts": 75}})
    0.25
    """
    paths = same_host.get("data_by_path") if isinstance(same_host, dict) else None
    if not isinstance(paths, dict) or not sum(int(v or 0) for v in paths.values()):
        return np.nan
    return int(paths.get("shared_memory") or 0) / sum(int(v or 0) for v in paths.values())


def capture_drop_share(capture_drops: object) -> float:
    """Share of the packets tcpdump's filter received that the kernel dropped before they
    were written (manifest ``capture_drops``, every capture point); where it is not small
    the capture-based wire figures undercount. NaN for runs without that record.

    >>> capture_drop_share({"h1-eth0": {"received": 200, "dropped": 50}})
    0.25
    """
    return _ratio(capture_drops, "dropped", "received")


COVERAGE_COLS = ("covered_s", "run_s", "missing_start_s", "missing_end_s")


def _coverage_cols(cov: object) -> dict[str, float]:
    """``wire_capture_*``: the least-covered capture point of a run (wire/summary.json
    ``coverage``; NaN for summaries made without the run's span). A ring buffer that
    wrapped holds only the end of the run, and so do the figures made from it."""
    recs = [c for c in cov.values() if isinstance(c, dict)] if isinstance(cov, dict) else []
    out = {f"wire_capture_{k}": np.nan for k in COVERAGE_COLS}
    try:
        if recs:
            worst = min(recs, key=lambda c: float(c["covered_s"]))
            out.update({f"wire_capture_{k}": float(worst[k]) for k in COVERAGE_COLS})
    except (KeyError, TypeError, ValueError):
        pass
    return out


WINDOW_COLS = ("window_s", "window_length_s", "window_count", "window_offset_s",
               "window_inside", "window_every_s")


def _window_cols(rec: object) -> dict[str, float]:
    """``wire_window_*``: the run's capture windows (wire/summary.json ``windows``,
    captures/windows.py): seconds captured in all, each window's length, how many, the
    first one's offset after full discovery, and 1.0 when every window lay inside the
    measurement window, and the sampling period. NaN for a capture over the whole run."""
    from captures.windows import WindowSummary

    out = {f"wire_{k}": np.nan for k in WINDOW_COLS}
    try:
        w = WindowSummary.of(rec if isinstance(rec, dict) else None)
    except (KeyError, TypeError, ValueError):
        w = None
    if w is not None:
        out.update(wire_window_s=w.total_s, wire_window_length_s=w.length_s,
                   wire_window_count=float(w.count), wire_window_offset_s=w.offset_s,
                   wire_window_inside=float(w.inside), wire_window_every_s=w.every_s)
    return out


def _wire_row(path: Path) -> dict:
    """Flatten wire/summary.json into ``wire_*`` columns (NaN when the run has no capture)."""
    row: dict[str, float] = {f"wire_{k}": np.nan for k in WIRE_SCALARS}
    row.update(_coverage_cols(None))
    row.update(_window_cols(None))
    row["wire_available"] = False
    if not path.exists():
        return row
    data = _read_json(path)
    row["wire_available"] = True
    for key in WIRE_SCALARS:
        value = data.get(key)
        if isinstance(value, int | float):
            row[f"wire_{key}"] = float(value)
    subs = data.get("rtps_submessages") or {}
    if isinstance(subs, dict):
        for kind in ("DATA", "DATA_FRAG", "HEARTBEAT", "ACKNACK", "NACK_FRAG", "GAP"):
            row[f"wire_sm_{kind}"] = float(subs.get(kind, 0))
    # Totals depend on how long the capture lasted (ring buffers keep only the last
    # seconds of a long run), so counts are also given per second of capture (of capture
    # window, for a run captured in windows: duration_s is their seconds).
    duration = row["wire_duration_s"]
    for key in RATE_OF:
        ok = math.isfinite(duration) and duration > 0
        row[f"wire_{key}_per_s"] = row[f"wire_{key}"] / duration if ok else np.nan
    row.update(_coverage_cols(data.get("coverage")))
    row.update(_window_cols(data.get("windows")))
    igmp = data.get("igmp") or {}
    if isinstance(igmp, dict):
        row["wire_igmp"] = float(sum(v for v in igmp.values() if isinstance(v, int | float)))
    pim = data.get("pim") or {}
    if isinstance(pim, dict):
        row["wire_pim"] = float(sum(v for v in pim.values() if isinstance(v, int | float)))
    return row


def aggregate_throughput(campaign: Campaign) -> pd.DataFrame:
    """Per-run, per-second throughput summed over all subscribers (as the study did).

    A subscriber's ``second`` counts its own reporting intervals. Only seconds in which
    every subscriber that reported at all in the run reported are kept, so that the
    seconds in which some subscribers have already stopped do not look like a dip.
    """
    thr = campaign.throughput
    subs = thr.groupby("run_id", observed=True)["subscriber"].nunique()
    g = thr.groupby(["run_id", "second"], observed=True, sort=True)
    agg = g.agg(samples_per_s=("samples_per_s", "sum"), mbps=("mbps", "sum"),
                lost=("lost", "sum"), reporting=("subscriber", "nunique")).reset_index()
    agg = agg[agg["reporting"].to_numpy() >= agg["run_id"].map(subs).to_numpy()]
    return agg.drop(columns="reporting").reset_index(drop=True)
