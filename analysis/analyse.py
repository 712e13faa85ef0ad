"""Unicast vs multicast, per participant count: the comparisons behind every table and figure."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from analysis import dominance, modes, stats
from analysis.load import KERNEL_COUNTERS, Campaign, aggregate_throughput
from analysis.testbed import Reason, no_verdict

MODES = ("unicast", "multicast")
# (metric key, label, unit, lower is better)
METRICS = {
    "latency": ("one-way latency of publisher 0", "µs", True),
    "throughput": ("throughput summed over subscribers", "samples/s", False),
}


@dataclass
class Pair:
    """One matrix point (group, participant count): a unicast and a multicast configuration."""

    group: str
    publishers: int
    subscribers: int
    variant: str  # discovery, when a group holds several; else ""
    runs: dict[str, list[str]]  # mode -> run ids
    comparisons: dict[str, dominance.Comparison] = field(default_factory=dict)
    # mode -> metric -> (summary, grid, cdf) for modes without a partner
    singles: dict[str, dict[str, tuple[stats.Summary, np.ndarray, np.ndarray]]] = field(
        default_factory=dict
    )
    # mode -> (summary, grid, cdf) of per-subscriber throughput
    per_subscriber: dict[str, tuple[stats.Summary, np.ndarray, np.ndarray]] = field(
        default_factory=dict
    )
    wire: dict[str, dict[str, float]] = field(default_factory=dict)  # mode -> wire_* means
    # mode -> wire_* -> each run's value (for intervals when runs repeat)
    wire_runs: dict[str, dict[str, list[float]]] = field(default_factory=dict)
    # mode -> fidelity of each run ("network" | "host" | "unknown"), and the reasons of the
    # host-bound ones ("<run id>: <reasons>")
    fidelity: dict[str, list[str]] = field(default_factory=dict)
    host_bound_reasons: list[str] = field(default_factory=list)
    not_compared: dict[str, str] = field(default_factory=dict)  # metric -> why not
    # metric -> the verdict about the modes, runs as the unit (analysis/modes.py); the
    # comparison above is the within-run distribution test, conditional on these runs
    verdicts: dict[str, modes.ModeVerdict] = field(default_factory=dict)
    # metric -> the same test on each run's p99 (its own Holm family): a median verdict
    # can hide a tail that goes the other way
    tails: dict[str, modes.ModeVerdict] = field(default_factory=dict)
    agent: str = ""  # the implementation (config "agent") of every run of the pair

    @property
    def label(self) -> str:
        base = f"{self.publishers}×{self.subscribers}"
        return f"{base} ({self.variant})" if self.variant else base

    @property
    def testbed_bound(self) -> bool:
        """Some run of this pair was host-bound (the testbed, not the network, decided) or
        unverified (its fidelity checks did not all run)."""
        return any(no_verdict(b) for bounds in self.fidelity.values() for b in bounds)

    @property
    def repetitions(self) -> dict[str, int]:
        return {m: len(ids) for m, ids in self.runs.items()}

    @property
    def complete(self) -> bool:
        return all(self.runs.get(m) for m in MODES)

    def curve(self, metric: str, mode: str) -> tuple[stats.Summary, np.ndarray, np.ndarray] | None:
        """(summary, grid, ECDF) of one mode, whether or not it was compared."""
        comp = self.comparisons.get(metric)
        if comp is not None:
            return comp.summaries[mode], comp.grid, comp.cdfs[mode]
        return self.singles.get(mode, {}).get(metric)


@dataclass
class Analysis:
    campaign: Campaign
    pairs: list[Pair]
    alpha: float
    n_boot: int
    margin: float = modes.EQUIVALENCE_MARGIN

    @property
    def verdicts(self) -> list[modes.ModeVerdict]:
        return [v for p in self.pairs for v in p.verdicts.values()]

    @property
    def groups(self) -> list[str]:
        return sorted({p.group for p in self.pairs})

    def pairs_of(self, group: str) -> list[Pair]:
        return [p for p in self.pairs if p.group == group]

    @property
    def agents(self) -> list[str]:
        """The implementations compared, in order of first appearance among the runs."""
        return list(dict.fromkeys(a for a in self.campaign.runs.get("agent", []) if a))

    def base_group(self, pair: Pair) -> str:
        """The pair's group without its implementation: with several agents the runner
        appends ``-<agent>`` to the group (experiments/matrix.py), so the pairs of one
        matrix point made with different implementations share this."""
        if len(self.agents) > 1 and pair.agent:
            return pair.group.removesuffix(f"-{pair.agent}")
        return pair.group


def _samples(campaign: Campaign, agg_thr: pd.DataFrame, run_ids: list[str]) -> dict:
    values = campaign.latency["latency_us"].to_numpy()
    runs = campaign.runs.set_index("run_id")
    lat = []
    for rid in run_ids:
        start, n = int(runs.at[rid, "latency_offset"]), int(runs.at[rid, "latency_samples"])
        lat.append(values[start : start + n])
    thr_by_run = dict(tuple(agg_thr.groupby("run_id", observed=True, sort=False)))
    thr = [thr_by_run[r]["samples_per_s"].to_numpy() for r in run_ids if r in thr_by_run]
    per_sub, per_run = [], []
    raw = campaign.throughput
    sel = raw[raw["run_id"].isin(run_ids)].sort_values(["run_id", "subscriber", "second"])
    for _, run in sel.groupby("run_id", sort=False, observed=True):
        series = [g["samples_per_s"].to_numpy()
                  for _, g in run.groupby("subscriber", sort=False, observed=True)]
        per_sub += series
        per_run.append(np.concatenate(series))
    return {
        "latency": stats.Sample.from_runs(lat),
        "throughput": stats.Sample.from_runs(thr),
        # one segment per subscriber (blocks inside one run), and one per run: the
        # subscribers of a run share its conditions, so runs are the clusters
        "per_subscriber": stats.Sample.from_runs(per_sub),
        "per_subscriber_runs": stats.Sample.from_runs(per_run),
    }


def _pairs(runs: pd.DataFrame) -> list[Pair]:
    out = []
    for (group, pubs, subs), sub in runs.groupby(["group", "publishers", "subscribers"], sort=True):
        variants = {m: sorted(sub.loc[sub["mode"] == m, "discovery"].unique()) for m in MODES}
        several = any(len(v) > 1 for v in variants.values())
        keys = variants["unicast"] or variants["multicast"]
        for dv in keys if several else [None]:
            ids = {}
            for m in MODES:
                sel = sub["mode"] == m
                if several and (dv in variants[m] or len(variants[m]) != 1):
                    sel &= sub["discovery"] == dv
                ids[m] = sub.loc[sel].sort_values("repetition")["run_id"].tolist()
            agents = sub["agent"].unique() if "agent" in sub else []
            agent = str(agents[0]) if len(agents) == 1 else ""
            out.append(Pair(str(group), int(pubs), int(subs), dv or "", ids, agent=agent))
    return out


def _why_not_compared(pair: Pair, samples: dict, metric: str) -> str:
    """Why one metric of a pair has no comparison: a mode without runs, or too few samples."""
    absent = [m for m in MODES if not pair.runs.get(m)]
    if absent:
        return f"no complete {' or '.join(absent)} run"
    counts = ", ".join(f"{m} {samples[m][metric].n}" for m in MODES)
    why = f"too few samples: {counts}, at least 2 per mode needed"
    if metric == "latency":
        why += "; publisher 0 pings once every latencyCount samples, so run longer"
    return why


def analyse(
    campaign: Campaign,
    *,
    alpha: float = stats.ALPHA,
    n_boot: int = stats.N_BOOT,
    seed: int = 20261121,
    margin: float = modes.EQUIVALENCE_MARGIN,
) -> Analysis:
    """Compare unicast and multicast for every participant count of every group."""
    rng = np.random.default_rng(seed)
    agg = aggregate_throughput(campaign)
    wire_cols = [
        c for c in campaign.runs.columns if c.startswith("wire_") and c != "wire_available"
    ]
    pairs = _pairs(campaign.runs)
    for pair in pairs:
        samples = {m: _samples(campaign, agg, ids) for m, ids in pair.runs.items() if ids}
        for m, ids in pair.runs.items():
            sel = campaign.runs[campaign.runs["run_id"].isin(ids)]
            bounds = sel["fidelity_bound"]
            pair.fidelity[m] = [str(b) for b in bounds]
            pair.host_bound_reasons += [
                Reason(f"{rid}: {why}", cause) for rid, b, why, cause in zip(
                    sel["run_id"], bounds, sel["fidelity_reasons"], sel["fidelity_cause"],
                    strict=True)
                if no_verdict(b)]
            # without a capture, the hosts' kernel counters (which every run records) are
            # the pair's only evidence of this kind; the capture's columns stay NaN
            counted = any(np.isfinite(sel[c].to_numpy(float)).any() for c in KERNEL_COUNTERS
                          if c in sel)
            if ids and (sel["wire_available"].any() or counted):
                pair.wire[m] = {c: float(sel[c].mean()) for c in wire_cols}
                pair.wire_runs[m] = {c: [float(v) for v in sel[c] if np.isfinite(v)]
                                     for c in wire_cols}
            if ids and samples[m]["per_subscriber"].n >= 2:
                clustered = samples[m]["per_subscriber_runs"].run_lengths.size >= 2
                # ≥ 2 runs: runs as clusters (t intervals); one run: blocks inside each
                # subscriber's series, an interval conditional on this run
                pair.per_subscriber[m] = dominance.describe_single(
                    samples[m]["per_subscriber_runs" if clustered else "per_subscriber"],
                    alpha=alpha, n_boot=n_boot, rng=rng, repetitions_as_units=clustered,
                    min_repetitions=2,
                )
        ids = [r for rs in pair.runs.values() for r in rs]
        rtt = set(campaign.runs.loc[campaign.runs["run_id"].isin(ids), "test"]) == {"latency"}
        for metric, (_, _, lower) in METRICS.items():
            if rtt and metric == "throughput":
                continue  # the RTT test measures round trips; its subscribers only echo
            have = {m: samples[m][metric] for m in samples if samples[m][metric].n >= 2}
            if len(have) == 2:
                pair.comparisons[metric] = dominance.compare(
                    have["unicast"], have["multicast"], metric=metric, lower_is_better=lower,
                    names=MODES, alpha=alpha, n_boot=n_boot, rng=rng,
                )
                verdict = modes.judge(have, metric=metric, alpha=alpha, margin=margin)
                shortest = min(int(s.run_lengths.min()) for s in have.values())
                tail = (modes.judge(have, metric=metric, statistic="p99", alpha=alpha,
                                    margin=margin)
                        if shortest >= modes.MIN_SAMPLES_FOR_TAIL else None)
                if pair.testbed_bound:
                    pair.comparisons[metric].mark_testbed_bound(pair.host_bound_reasons)
                    for v in (verdict, tail):
                        if v is not None:
                            modes.mark_testbed_bound(v, pair.host_bound_reasons)
                pair.verdicts[metric] = verdict
                if tail is not None:
                    pair.tails[metric] = tail
            else:
                pair.not_compared[metric] = _why_not_compared(pair, samples, metric)
                for m, s in have.items():
                    pair.singles.setdefault(m, {})[metric] = dominance.describe_single(
                        s, alpha=alpha, n_boot=n_boot, rng=rng
                    )
    lower = {m: low for m, (_, _, low) in METRICS.items()}
    modes.decide([v for p in pairs for v in p.verdicts.values()], lower)
    modes.decide([v for p in pairs for v in p.tails.values()], lower)
    return Analysis(campaign=campaign, pairs=pairs, alpha=alpha, n_boot=n_boot, margin=margin)
