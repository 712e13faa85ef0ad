"""Pool the runs of several campaigns of one configuration into one campaign.

The verdicts about the modes take runs as the unit, so independent campaigns of the same
scenario and configuration are just more runs: a machine too small to give a cell enough
runs in one sitting can decide it over several. Runs are pooled only where every campaign
ran the same configuration (run length, hosts' CPU, QoS, …); a difference is an error
naming the cell, the key and the values, never a silent mix.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from analysis.load import (
    Campaign,
    ResultsError,
    load_campaign,
    require_distinct,
    require_distinct_folders,
    require_one_scenario,
)

# The run-table columns that must match, per (group, count, mode), for runs to be pooled.
CONFIGURATION_KEYS = (
    "agent", "discovery", "execution_time", "reliable", "data_len", "topology",
    "topology_variant", "topology_params", "placement_variant", "fanout", "same_host",
    "heartbeat_timing", "multicast_resend", "receive_buffer", "latency_count", "pub_rate", "test",
)
CELL_KEYS = ("group", "publishers", "subscribers", "mode")


def _configurations(campaign: Campaign) -> dict[tuple, dict[str, object]]:
    out: dict[tuple, dict[str, object]] = {}
    for _, row in campaign.runs.iterrows():
        cell = tuple(row[k] for k in CELL_KEYS)
        conf = {k: row[k] for k in CONFIGURATION_KEYS if k in row}
        seen = out.setdefault(cell, conf)
        if not all(_same(seen.get(k), conf.get(k)) for k in CONFIGURATION_KEYS):
            seen["_mixed"] = True  # one campaign, two configurations: pooling refuses
    return out


def _same(a: object, b: object) -> bool:
    if isinstance(a, float) and isinstance(b, float) and np.isnan(a) and np.isnan(b):
        return True
    return a == b


def check_poolable(campaigns: list[Campaign]) -> None:
    """Raise :class:`ResultsError` unless the campaigns are distinct (no directory twice,
    no run in two of them), of one scenario, and ran each cell they share with one
    configuration."""
    require_distinct(campaigns, "pooled")
    require_one_scenario(campaigns, "pooled")
    first = _configurations(campaigns[0])
    for other in campaigns[1:]:
        for cell, conf in _configurations(other).items():
            ref = first.get(cell)
            if ref is None:
                continue  # a cell only some campaigns ran: its runs are pooled as they are
            for key in CONFIGURATION_KEYS:
                if key in ref and key in conf and not _same(ref[key], conf[key]):
                    group, pubs, subs, mode = cell
                    raise ResultsError(
                        f"{other.path}: {group} {pubs}×{subs} {mode} ran with {key} = "
                        f"{conf[key]!r}, {campaigns[0].path} with {ref[key]!r}; only runs "
                        "of one configuration can be pooled")
            if conf.get("_mixed") or ref.get("_mixed"):
                group, pubs, subs, mode = cell
                raise ResultsError(f"{group} {pubs}×{subs} {mode}: runs of one campaign "
                                   "differ in configuration; they cannot be pooled")


def pool(paths: list[str | Path]) -> Campaign:
    """One campaign holding every complete run of ``paths`` (two or more campaign
    directories of one scenario). Run ids become ``<k>/<run id>`` (k = the campaign's
    position, from 1) and repetitions are renumbered in campaign order, so each run
    stays traceable to its directory (column ``dir``)."""
    if len(paths) < 2:
        raise ResultsError("pooling needs at least two campaign directories")
    require_distinct_folders([Path(p) for p in paths], "pooled")  # before loading them
    return pool_campaigns([load_campaign(p) for p in paths])


def pool_campaigns(campaigns: list[Campaign]) -> Campaign:
    """:func:`pool` of campaigns already loaded (:attr:`Campaign.pooled` keeps them)."""
    check_poolable(campaigns)
    runs, lat, thr, res, skipped = [], [], [], [], []
    for k, camp in enumerate(campaigns, start=1):
        rename = {rid: f"{k}/{rid}" for rid in camp.runs["run_id"]}
        r = camp.runs.copy()
        r["run_id"] = r["run_id"].map(rename)
        r["campaign"] = k
        runs.append(r)
        lat.append(camp.latency[["sample", "latency_us"]])
        t = camp.throughput.copy()
        t["run_id"] = t["run_id"].map(rename)
        thr.append(t)
        if len(camp.resources):
            s = camp.resources.copy()
            s["run_id"] = s["run_id"].map(rename)
            res.append(s)
        skipped += [(f"{k}/{rid}", why) for rid, why in camp.skipped]
    pooled = pd.concat(runs, ignore_index=True)
    # latency rows stay in run order: campaign after campaign, each in its own run order
    pooled["latency_offset"] = pooled["latency_samples"].cumsum() - pooled["latency_samples"]
    order = pooled.sort_values(["campaign", "repetition"], kind="stable")
    pooled["repetition"] = (order.groupby(list(CELL_KEYS), sort=False).cumcount() + 1
                            ).reindex(pooled.index)
    latency = pd.concat(lat, ignore_index=True)
    codes = np.repeat(np.arange(len(pooled), dtype=np.int32),
                      pooled["latency_samples"].to_numpy())
    latency.insert(0, "run_id", pd.Categorical.from_codes(codes, categories=pooled["run_id"]))
    first = campaigns[0]
    return Campaign(
        path=first.path,
        name=first.name,
        scenario=first.scenario,
        runs=pooled,
        latency=latency,
        throughput=pd.concat(thr, ignore_index=True),
        skipped=skipped,
        resources=(pd.concat(res, ignore_index=True) if res else first.resources),
        pooled=campaigns,
    )
