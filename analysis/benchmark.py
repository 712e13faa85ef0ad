"""Benchmark: analysis of 10 M latency samples over 12 configurations.

    .venv/bin/python -m analysis.benchmark [--samples 10000000] [--keep DIR]

Writes a synthetic campaign of the study's matrix (1, 3, 10, 25, 50, 75 participants,
unicast and multicast: 12 configurations) with autocorrelated latency, then times, in
one invocation: loading it, the full statistical analysis (grids, block bootstrap of
every summary, permutation and per-mode bootstrap tests, crossovers, effect sizes), and
the figures and tables. The reference is a plain ``np.sort`` of the same 10 M samples,
measured in the same process, so the ratio says how the analysis compares with the
cheapest thing one can do with every sample on this machine today.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np

from analysis.analyse import analyse
from analysis.load import load_campaign
from analysis.report import write_report
from analysis.synthetic import write_campaign

COUNTS = (1, 3, 10, 25, 50, 75)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=10_000_000, help="latency samples in all")
    parser.add_argument("--keep", type=Path, default=None,
                        help="write the campaign here and keep it (reused when it exists)")
    parser.add_argument("--no-report", action="store_true", help="skip figures and tables")
    args = parser.parse_args()
    configs = 2 * len(COUNTS)
    per_run = args.samples // configs
    root = args.keep or Path(tempfile.mkdtemp(prefix="mcastlab-bench-"))
    try:
        t0 = time.perf_counter()
        if not (root / "campaign.json").exists():  # --keep DIR reuses an earlier campaign
            write_campaign(root, counts=COUNTS, seconds=60, latency_samples=per_run,
                           phi=0.8, campaign="bench")
        t_write = time.perf_counter() - t0

        t0, c0 = time.perf_counter(), time.process_time()
        campaign = load_campaign(root)
        t_load, c_load = time.perf_counter() - t0, time.process_time() - c0
        values = campaign.latency["latency_us"].to_numpy()

        t0, c0 = time.perf_counter(), time.process_time()
        np.sort(values)
        t_sort, c_sort = time.perf_counter() - t0, time.process_time() - c0

        t0, c0 = time.perf_counter(), time.process_time()
        result = analyse(campaign)
        t_analyse, c_analyse = time.perf_counter() - t0, time.process_time() - c0

        t_report = float("nan")
        if not args.no_report:
            t0 = time.perf_counter()
            write_report(result, root / "report")
            t_report = time.perf_counter() - t0
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)

    n = values.size
    blocks = {p.label: p.comparisons["latency"].summaries["unicast"].block_len
              for p in result.pairs if "latency" in p.comparisons}
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}")
    print(f"latency samples: {n:,} in {configs} configurations ({per_run:,} each)")
    print(f"block length per pair (samples): {blocks}")
    print(f"write synthetic campaign: {t_write:6.2f} s (not part of the analysis)")
    print("                          wall      CPU (all threads)")
    print(f"load campaign:            {t_load:6.2f} s  {c_load:6.2f} s")
    print(f"analyse (stats + tests):  {t_analyse:6.2f} s  {c_analyse:6.2f} s")
    print(f"figures + tables + report:{t_report:6.2f} s")
    total = t_load + t_analyse
    print(f"load + analyse:           {total:6.2f} s  {c_load + c_analyse:6.2f} s"
          "   (goal < 20 s on 2 cores)")
    print(f"reference np.sort of all samples: {t_sort:.2f} s wall, {c_sort:.2f} s CPU; "
          f"analyse / sort = {t_analyse / t_sort:.1f}x wall, {c_analyse / c_sort:.1f}x CPU")


if __name__ == "__main__":
    main()
