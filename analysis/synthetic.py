"""Write a schema-conformant synthetic campaign (docs/contracts.md §3, §4) with known answers.

Used by the test fixture and the benchmark until real smoke runs replace it. Latency is
an AR(1) process on the log scale (autocorrelated, like queueing delay); each
participant count gets a known relation between the modes, cycling through:

* ``same``: identical distributions (no difference expected),
* ``multicast-better``: multicast latency shifted down and throughput up,
* ``crossing``: multicast faster in the body but with a heavier tail (curves cross),
* ``unicast-better``: the reverse of the second case.

``run_sd`` adds a run effect: every run's latency and throughput are scaled by
``exp(N(0, run_sd))``, as the testbed's state moves a whole run (measured here: unpaced
1×1 medians differing by tens of percent between identical runs).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import numpy as np
import pandas as pd

DESIGNS = ("same", "multicast-better", "crossing", "unicast-better")


def ar1(n: int, phi: float, rng: np.random.Generator) -> np.ndarray:
    """Stationary AR(1) with unit variance."""
    from scipy.signal import lfilter

    e = rng.standard_normal(n) * np.sqrt(1 - phi**2)
    e[0] = rng.standard_normal()
    return lfilter([1.0], [1.0, -phi], e)


def latency_params(design: str, mode: str, participants: int) -> tuple[float, float]:
    """(log-median in µs, log-sd) of the latency of ``mode`` under ``design``."""
    base = np.log(150.0 * participants**0.6)
    if design == "same" or mode == "unicast":
        return base, 0.35
    if design == "multicast-better":
        return base - 0.25, 0.35
    if design == "unicast-better":
        return base + 0.25, 0.35
    return base - 0.15, 0.9  # crossing: faster body, heavier tail


def throughput_factor(design: str, mode: str) -> float:
    if mode == "unicast" or design in ("same", "crossing"):
        return 1.0
    return 1.3 if design == "multicast-better" else 0.7


def _write_json(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    os.replace(tmp, path)


def _wire(design: str, mode: str, participants: int, seconds: float) -> dict:
    """Plausible wire totals: multicast sends once per sample, unicast once per reader."""
    n = participants
    copies = 1 if mode == "multicast" else n
    data_pkts = int(2000 * seconds * n * copies / max(n, 1) ** 0.5)
    acknack = (4.0 if mode == "unicast" else 4.0 + 0.8 * n) * (1.5 if design == "crossing" else 1)
    multicast_repair = 0.01 * n if design != "multicast-better" else 0.001
    repair = 0.002 * n if mode == "unicast" else multicast_repair
    meta_share = min(0.9, 0.05 + (0.004 if mode == "unicast" else 0.012) * n)
    user = data_pkts * 1400
    meta = int(user * meta_share / (1 - meta_share))
    return {
        "packets": data_pkts + int(acknack * n * seconds),
        "rtps_submessages": {"DATA": data_pkts * 10, "HEARTBEAT": int(10 * n * seconds),
                             "ACKNACK": int(acknack * n * seconds), "GAP": n, "INFO_TS": data_pkts},
        "user_data_bytes": user,
        "meta_bytes": meta,
        "meta_share": meta_share,
        "repair_bytes": int(user * repair),
        "repair_ratio": repair,
        "acknack_per_reader_per_s": acknack,
        "heartbeat_per_writer_per_s": 10.0,
        "nack_storms": int(n * 0.2) if mode == "multicast" else 0,
        "flooded_frames": 0,
        "ip_fragments": data_pkts * 9,
        "igmp": {"query": int(seconds / 10) + 1, "report": n if mode == "multicast" else 0,
                 "leave": 0},
        "pim": {"hello": 0},
        "duration_s": seconds,
    }


def write_campaign(
    out: Path,
    *,
    counts: tuple[int, ...] = (1, 3, 10),
    seconds: int = 30,
    pings_per_s: int = 100,
    repetitions: int = 1,
    designs: tuple[str, ...] | None = None,
    latency_samples: int | None = None,
    phi: float = 0.6,
    seed: int = 3,
    campaign: str = "synthetic",
    host_bound: tuple[int, ...] = (),
    run_sd: float = 0.0,
    agents: dict[str, tuple[str, ...]] | None = None,
    host_bound_agents: tuple[str, ...] | None = None,
    config_extra: dict[str, dict] | None = None,
) -> Path:
    """Write the campaign into ``out`` and return it. ``latency_samples`` overrides the count
    per run (for the benchmark); otherwise it is ``seconds * pings_per_s``. Runs of the
    counts in ``host_bound`` carry a host-bound fidelity record, the others network-bound.

    ``agents``: several implementations ({agent: its designs per count}), named in groups
    and run ids as the runner does for ``[matrix] agents``; ``host_bound_agents`` limits
    ``host_bound`` to those agents (default: all). ``config_extra``: per key of ``agents``,
    keys merged into its runs' configurations (e.g. ``{"agent": "fastdds", "same_host":
    "shm"}`` for a second group of one implementation)."""
    rng = np.random.default_rng(seed)
    out.mkdir(parents=True, exist_ok=True)
    designs = designs or tuple(DESIGNS[i % len(DESIGNS)] for i in range(len(counts)))
    index = {"campaign": campaign, "scenario": f"synthetic:{campaign}", "runs": []}
    per_agent = agents or {"synthetic": designs}
    several = agents is not None and len(agents) > 1
    cells = [(i, agent) for i in range(len(counts)) for agent in per_agent]
    for i, agent in cells:
        n, design = counts[i], per_agent[agent][i]
        group = f"lan-rel-100B-{agent}" if several else "lan-rel-100B"
        bound = n in host_bound and (host_bound_agents is None or agent in host_bound_agents)
        for mode in ("unicast", "multicast"):
            for rep in range(repetitions):
                run_id = f"{group}-{n}x{n}-{mode}-r{rep}"
                cfg = {
                    "run_id": run_id, "campaign": campaign, "group": group,
                    "mode": mode, "discovery": "spdp-multicast", "publishers": n,
                    "subscribers": n, "reliable": True, "data_len": 100,
                    "latency_count": 1000, "execution_time": seconds, "repetition": rep,
                    "agent": agent, "topology": "lan", "topology_params": {"hosts": 4},
                    "placement": {f"pub{i}": f"h{i % 4 + 1}" for i in range(n)}
                    | {f"sub{i}": f"h{(i + 2) % 4 + 1}" for i in range(n)},
                    "synthetic_design": design,
                    **(config_extra or {}).get(agent, {}),
                }
                _write_run(out / run_id, cfg, design, rng, seconds, pings_per_s,
                           latency_samples, phi, bound, run_sd)
                index["runs"].append({"id": run_id, "status": "complete", "attempts": 1,
                                      "reason": "", "config": cfg})
    _write_json(out / "campaign.json", index)
    return out


def _write_run(
    run_dir: Path,
    cfg: dict,
    design: str,
    rng: np.random.Generator,
    seconds: int,
    pings_per_s: int,
    latency_samples: int | None,
    phi: float,
    host_bound: bool = False,
    run_sd: float = 0.0,
) -> None:
    mode, n, run_id = cfg["mode"], cfg["subscribers"], cfg["run_id"]
    tables = run_dir / "tables"
    tables.mkdir(parents=True, exist_ok=True)
    count = latency_samples or seconds * pings_per_s
    mu, sd = latency_params(design, mode, n)
    run_effect = float(rng.normal(0.0, run_sd)) if run_sd else 0.0
    lat = np.exp(mu + run_effect + sd * ar1(count, phi, rng))
    pd.DataFrame({"run_id": run_id, "sample": np.arange(count, dtype=np.int64),
                  "latency_us": lat}).to_parquet(tables / "latency.parquet", index=False)
    per_sub = 400_000.0 / n**0.8 * throughput_factor(design, mode) * np.exp(-run_effect)
    secs = np.arange(1, seconds + 1, dtype=np.int32)
    rows = []
    for s in range(n):
        sps = per_sub * (1 + 0.08 * ar1(seconds, 0.5, rng))
        rows.append(pd.DataFrame({
            "run_id": run_id, "subscriber": np.int32(s), "second": secs,
            "samples": np.round(sps).astype(np.int64), "samples_per_s": np.round(sps),
            "mbps": np.round(sps) * 100 * 8 / 1e6,
            "lost": rng.poisson(0.2 if mode == "multicast" else 0.05, seconds).astype(np.int64),
        }))
    pd.concat(rows, ignore_index=True).to_parquet(tables / "throughput.parquet", index=False)
    pd.DataFrame({"run_id": run_id, "process": ["pub0", "sub0"], "host": ["h1", "h3"],
                  "t_s": [1.0, 1.0], "cpu_percent": [50.0, 40.0],
                  "rss_bytes": np.array([30e6, 28e6], dtype=np.int64)}).to_parquet(
        tables / "resources.parquet", index=False)
    _write_json(tables / "summary.json", {"pub0": {"latency_count": int(count)}})
    _write_json(run_dir / "wire" / "summary.json", _wire(design, mode, n, float(seconds)))
    _write_json(run_dir / "config.json", cfg)
    sums = {
        str(p.relative_to(run_dir)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(run_dir.rglob("*")) if p.is_file()
    }
    _write_json(run_dir / "manifest.json", {
        "status": "complete", "git_revision": "synthetic", "git_dirty": False,
        "start": "2026-11-21T00:00:00Z", "end": "2026-11-21T00:00:30Z",
        "exit_codes": {}, "sha256": sums, "fidelity": _fidelity(host_bound),
        "duration_s": float(seconds) + 5.0,  # the run's window and a made-up set-up time
    })


def _fidelity(host_bound: bool) -> dict:
    """A fidelity record as experiments/fidelity.py writes it (figures made up)."""
    drops = 0.2 if host_bound else 0.0
    return {
        "bound": "host" if host_bound else "network",
        "reasons": ["datagrams dropped at full socket buffers: 20.0% (limit 1.0%)"]
        if host_bound else [],
        "failed": ["host.socket_drop_share"] if host_bound else [],
        "metrics": {"socket_drop_share": drops, "capture_drop_share": None,
                    "cpu_pressure_some_share": 0.9 if host_bound else 0.05,
                    "cpu_busy_share": 0.9 if host_bound else 0.05,
                    "wakeup_p99_us": 300.0, "wakeup_max_us": 900.0, "throttled_share": None,
                    "pub_rate_achieved_share": None},
        "per_host": {}, "window_s": 30.0, "warnings": [], "thresholds": {},
    }


def write_views_campaign(
    out: Path,
    *,
    sizes: tuple[int, ...] = (32, 1052, 16412),
    agents: tuple[str, ...] = ("native", "fastdds"),
    placements: tuple[str, ...] = ("",),
    modes: tuple[str, ...] = ("unicast",),
    test: str = "latency",
    subscribers: int = 1,
    repetitions: int = 3,
    effects: dict[str, float] | None = None,
    seconds: int = 10,
    samples: int = 1000,
    seed: int = 5,
    campaign: str = "synthetic-views",
) -> Path:
    """A campaign across message sizes with known answers, named as the runner names one
    (``lan-rtt-rel-1052B-same-host-fastdds-1x1-unicast-r2``), for the views of
    analysis/views.py. The median round trip grows with size as ``40 µs + size / 50 MB/s``
    (the RTT test stores half of it); the stress test's samples/s fall as ``2e5 / (1 +
    size / 2 KB)``. ``effects`` multiplies them per level (``{"fastdds": 1.5}``: its RTT
    1.5×, its samples/s 1/1.5); levels without an effect are identical. CPU and RSS
    samples per process every 0.5 s: the publisher 50%, subscribers 20%, RSS 10 MiB +
    the sample size × 100."""
    rng = np.random.default_rng(seed)
    effects = effects or {}
    index = {"campaign": campaign, "scenario": f"synthetic:{campaign}", "runs": []}
    for size in sizes:
        for placement in placements:
            for rep in range(1, repetitions + 1):
                for agent in agents:
                    for mode in modes:
                        factor = (effects.get(agent, 1.0) * effects.get(placement, 1.0)
                                  * effects.get(mode, 1.0))
                        parts = ["lan", "rtt", "rel", f"{size}B"] if test == "latency" else [
                            "lan", "rel", f"{size}B"]
                        parts += [p for p in (placement,) if p]
                        parts += [agent] if len(agents) > 1 else []
                        group = "-".join(parts)
                        run_id = f"{group}-1x{subscribers}-{mode}-r{rep}"
                        cfg = {"run_id": run_id, "campaign": campaign, "group": group,
                               "mode": mode, "discovery": "spdp-multicast", "publishers": 1,
                               "subscribers": subscribers, "reliable": True,
                               "data_len": size, "latency_count": 1, "execution_time": 0,
                               "repetition": rep, "agent": agent, "topology": "lan",
                               "topology_params": {"hosts": 2}, "test": test,
                               "placement_variant": placement}
                        _write_views_run(out / run_id, cfg, factor, rng, seconds, samples)
                        index["runs"].append({"id": run_id, "status": "complete",
                                              "attempts": 1, "reason": "", "config": cfg})
    _write_json(out / "campaign.json", index)
    return out


def _write_views_run(run_dir: Path, cfg: dict, factor: float, rng: np.random.Generator,
                     seconds: int, samples: int) -> None:
    tables = run_dir / "tables"
    tables.mkdir(parents=True, exist_ok=True)
    size, run_id = cfg["data_len"], cfg["run_id"]
    run_effect = float(rng.normal(0.0, 0.03))
    rtt = (40.0 + size / 50.0) * factor
    one_way = np.exp(np.log(rtt / 2) + run_effect + 0.25 * ar1(samples, 0.3, rng))
    pd.DataFrame({"run_id": run_id, "sample": np.arange(samples, dtype=np.int64),
                  "latency_us": one_way}).to_parquet(tables / "latency.parquet", index=False)
    rows = []
    if cfg["test"] == "throughput":
        rate = 2e5 / (1 + size / 2048) / factor * np.exp(-run_effect) / cfg["subscribers"]
        for s in range(cfg["subscribers"]):
            sps = np.round(rate * (1 + 0.02 * ar1(seconds, 0.3, rng)))
            rows.append(pd.DataFrame({
                "run_id": run_id, "subscriber": np.int32(s),
                "second": np.arange(1, seconds + 1, dtype=np.int32),
                "samples": sps.astype(np.int64), "samples_per_s": sps,
                "mbps": sps * size * 8 / 1e6, "lost": np.zeros(seconds, dtype=np.int64)}))
    thr = (pd.concat(rows, ignore_index=True) if rows else pd.DataFrame({
        "run_id": pd.Series(dtype=str), "subscriber": pd.Series(dtype=np.int32),
        "second": pd.Series(dtype=np.int32), "samples": pd.Series(dtype=np.int64),
        "samples_per_s": pd.Series(dtype=float), "mbps": pd.Series(dtype=float),
        "lost": pd.Series(dtype=np.int64)}))
    thr.to_parquet(tables / "throughput.parquet", index=False)
    procs = ["pub0", *[f"sub{i}" for i in range(cfg["subscribers"])]]
    t = np.arange(0.0, 3.0, 0.5)
    pd.DataFrame({
        "run_id": run_id, "process": np.repeat(procs, t.size), "host": "h1",
        "t_s": np.tile(t, len(procs)),
        "cpu_percent": np.repeat([50.0 if p == "pub0" else 20.0 for p in procs], t.size),
        "rss_bytes": np.repeat([int(10 * 2**20 + 100 * size)] * len(procs), t.size),
    }).to_parquet(tables / "resources.parquet", index=False)
    _write_json(tables / "summary.json", {"pub0": {"latency_count": samples}})
    _write_json(run_dir / "config.json", cfg)
    _write_json(run_dir / "manifest.json", {
        "status": "complete", "git_revision": "synthetic", "git_dirty": False,
        "start": "2026-11-21T00:00:00Z", "end": "2026-11-21T00:00:30Z", "exit_codes": {},
        "fidelity": _fidelity(False)})
