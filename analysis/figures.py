"""Figures (matplotlib, Agg): ECDF grids with DKW bands, wire metrics and summaries vs
participant count. Every figure is written as PDF and PNG."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from analysis import stats
from analysis.analyse import METRICS, MODES, Analysis, Pair
from analysis.verdicts import CAPTURE_DROP_WARNING, WIRE_EVIDENCE, capture_lossy

COLORS = {"unicast": "#0072B2", "multicast": "#D55E00"}  # colour-blind safe pair
STYLES = {"unicast": "-", "multicast": "--"}
WIRE_PANELS = (
    "wire_meta_share",
    "wire_repair_ratio",
    "wire_acknack_per_reader_per_s",
    "wire_nack_storms_per_s",
    "wire_flooded_frames_per_s",
    "wire_ip_fragments_per_s",
    "wire_packets_per_s",
    "wire_socket_drop_share",
    "wire_host_fanout",
)
HOST_PANELS = ("wire_socket_drop_share", "wire_host_fanout")  # kernel counters, not captures
SHARE_PANELS = ("wire_meta_share", "wire_socket_drop_share")
LOG_SPAN = 30.0  # use a log axis when the visible range spans more than this factor
X_RANGE = (0.0005, 0.9995)  # percentiles shown on the x axis


TESTBED_COLOR = "#b00000"


def mark_testbed_bound(ax: Any) -> None:
    """Grey a panel whose comparison rests on a host-bound run: what it shows is the
    testbed's limit, not a verdict on the modes."""
    ax.set_facecolor("#f3f3f3")
    ax.text(0.99, 0.02, "testbed-bound: no verdict", transform=ax.transAxes, ha="right",
            va="bottom", fontsize=8, color=TESTBED_COLOR,
            bbox={"facecolor": "white", "edgecolor": TESTBED_COLOR, "alpha": 0.85})

def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update({"figure.dpi": 110, "savefig.dpi": 150, "font.size": 9,
                         "axes.titlesize": 9, "legend.fontsize": 8})
    return plt


def _short_number(v: float) -> str:
    """Tick label: 12k, 3.5M for large values, plain digits below 1000 (no milli prefix)."""
    for div, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(v) >= div:
            return f"{v / div:g}{suffix}"
    return f"{v:g}"


def time_label(us: float) -> str:
    """Tick label of a time given in µs, in the unit a person reads at that size.

    >>> [time_label(v) for v in (250, 2000, 1.5e6)]
    ['250 µs', '2 ms', '1.5 s']
    """
    for div, unit in ((1e6, "s"), (1e3, "ms")):
        if abs(us) >= div:
            return f"{us / div:g} {unit}"
    return f"{us:g} µs"


def log_axis(ax: Any, which: str, times: bool) -> None:
    """Readable log ticks on the x or y axis of ``ax`` (call after plotting): major ticks
    only, at 1-2-5, 1-3 or whole decades as the span allows, labelled as times (µs, ms, s;
    the data in µs) or as short numbers (12k, 3.5M); minor ticks unlabelled, so labels
    never crowd one another."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    axis = ax.yaxis if which == "y" else ax.xaxis
    lo, hi = ax.get_ylim() if which == "y" else ax.get_xlim()
    decades = float(np.log10(hi / lo)) if lo > 0 and hi > lo else 1.0
    subs = (1.0, 2.0, 5.0) if decades <= 1.5 else (1.0, 3.0) if decades <= 3 else (1.0,)
    axis.set_major_locator(LogLocator(subs=subs))
    label = time_label if times else _short_number
    axis.set_major_formatter(FuncFormatter(lambda v, _: label(v)))
    axis.set_minor_formatter(NullFormatter())


def _save(fig, out_dir: Path, stem: str) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for ext in ("pdf", "png"):
        path = out_dir / f"{stem}.{ext}"
        fig.savefig(path, bbox_inches="tight")
        paths.append(path)
    return paths


def _suffix(analysis: Analysis, group: str) -> str:
    return "" if len(analysis.groups) == 1 else f"-{group}"


def _x_range(curves: dict) -> tuple[float, float, str]:
    """Visible range (0.05th to 99.95th percentile over both modes) and 'log' or 'linear'."""
    def q(p: float) -> list[float]:
        return [float(stats.quantile_from_cdf(c, g, p)) for _, g, c in curves.values()]

    lo, hi = min(q(X_RANGE[0])), max(q(X_RANGE[1]))
    log = lo > 0 and hi / lo > LOG_SPAN
    if log:
        return lo / 1.15, hi * 1.15, "log"
    pad = 0.03 * (hi - lo) if hi > lo else max(abs(hi), 1.0) * 0.05
    return lo - pad, hi + pad, "linear"


def _axis_unit(unit: str, values: list[np.ndarray]) -> tuple[str, float]:
    """Pick ms over µs and k/M samples/s so tick labels stay short."""
    body = np.concatenate(values) if values else np.array([1.0])
    med = float(np.median(body)) if body.size else 1.0
    if unit == "µs":
        return ("ms", 1e3) if med >= 2e3 else ("µs", 1.0)
    if med >= 2e6:
        return (f"M{unit}", 1e6)
    if med >= 2e3:
        return (f"k{unit}", 1e3)
    return unit, 1.0


def _set_x(ax, lo: float, hi: float, scale: str) -> None:
    """x limits and scale; on a log axis, plain tick labels (30, 100, 300) not 10^k."""
    ax.set_xscale(scale)
    ax.set_xlim(lo, hi)
    if scale == "log":
        from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

        decades = np.log10(hi / lo)
        subs = (1.0, 2.0, 5.0) if decades <= 2.5 else (1.0, 3.0) if decades <= 4 else (1.0,)
        ax.xaxis.set_major_locator(LogLocator(subs=subs))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.xaxis.set_minor_formatter(NullFormatter())


def _panel(ax, pair: Pair, metric: str, unit: str, curves: dict) -> None:
    values = [grid for (_, grid, _) in curves.values()]
    x_lo, x_hi, scale = _x_range(curves)
    shown_unit, div = _axis_unit(unit, values)
    for mode, (summary, grid, cdf) in curves.items():
        x = grid / div
        eps = summary.dkw_eps
        ax.fill_between(x, np.clip(cdf - eps, 0, 1), np.clip(cdf + eps, 0, 1), step="post",
                        color=COLORS[mode], alpha=0.18, linewidth=0)
        ax.step(x, cdf, where="post", color=COLORS[mode], linestyle=STYLES[mode], linewidth=1.3,
                label=f"{mode} (n={summary.n:,}; band ±{eps:.2g})")
    comp = pair.comparisons.get(metric)
    title = pair.label
    if comp is None and metric != "per_subscriber":
        title += ": not compared"
        missing = [m for m in MODES if m not in curves]
        if missing:
            title += f" ({' and '.join(missing)}: fewer than 2 samples)"
    if comp is not None:
        verdict = pair.verdicts.get(metric)
        title += f": {verdict.outcome if verdict else comp.verdict}"
        for c in comp.crossovers:
            ax.axvspan(c.lo / div, c.hi / div, color="0.85", zorder=0)
            if c.located:  # a point only where the estimate changes sign once
                ax.axvline(c.x / div, color="0.3", linestyle=":", linewidth=1)
    ax.set_title(title, color=TESTBED_COLOR if pair.testbed_bound else "black")
    if pair.testbed_bound:
        mark_testbed_bound(ax)
    _set_x(ax, x_lo / div, x_hi / div, scale)
    ax.set_ylim(0, 1.0)
    ax.grid(True, which="major", alpha=0.3)
    ax.set_xlabel(f"{METRICS[metric][0] if metric in METRICS else metric} ({shown_unit}"
                  + (", log scale)" if scale == "log" else ")"))
    ax.legend(loc="upper left", frameon=True)  # an ECDF never reaches the upper left


def ecdf_grid(analysis: Analysis, group: str, metric: str, out_dir: Path) -> list[Path]:
    """One panel per participant count; both modes with their simultaneous DKW bands."""
    plt = _plt()
    pairs = analysis.pairs_of(group)
    unit = METRICS[metric][1] if metric in METRICS else "samples/s"
    ncols = min(3, len(pairs))
    nrows = math.ceil(len(pairs) / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.2 * ncols, 3.3 * nrows), squeeze=False)
    for ax, pair in zip(axes.flat, pairs, strict=False):
        if metric == "per_subscriber":
            curves = dict(pair.per_subscriber)
        else:
            curves = {m: c for m in MODES if (c := pair.curve(metric, m)) is not None}
        if not curves:
            ax.set_axis_off()
            continue
        _panel(ax, pair, metric, unit, curves)
        if metric == "per_subscriber":
            ax.set_xlabel(ax.get_xlabel().replace("per_subscriber", "throughput per subscriber"))
    for ax in list(axes.flat)[len(pairs):]:
        ax.set_axis_off()
    for ax in axes[:, 0]:
        ax.set_ylabel("ECDF (fraction of samples ≤ x)")
    names = {"latency": "One-way latency of publisher 0",
             "throughput": "Per-second throughput summed over all subscribers",
             "per_subscriber": "Per-second throughput of each subscriber"}
    fig.suptitle(f"{names[metric]}: unicast vs multicast ({group})\nshaded: "
                 f"{100 * (1 - analysis.alpha):.0f}% simultaneous DKW band; "
                 "dotted/grey: crossover and its interval; x axis: 0.05th to 99.95th percentile",
                 fontsize=9)
    fig.tight_layout()
    stem = {"per_subscriber": "ecdf_throughput_per_subscriber"}.get(metric, f"ecdf_{metric}")
    paths = _save(fig, out_dir, stem + _suffix(analysis, group))
    plt.close(fig)
    return paths


def wire_figure(analysis: Analysis, group: str, out_dir: Path) -> list[Path]:
    """Wire metrics (from the captures) vs participant count, one line per mode."""
    plt = _plt()
    pairs = [p for p in analysis.pairs_of(group) if p.wire]
    if not pairs:  # one clear message instead of six empty panels
        fig, ax = plt.subplots(figsize=(6, 1.6))
        ax.set_axis_off()
        ax.text(0.5, 0.5, f"No wire evidence for {group}: no run of this campaign has\n"
                "wire/summary.json (the scenario declares no capture points).",
                ha="center", va="center", fontsize=10)
        paths = _save(fig, out_dir, "wire_metrics" + _suffix(analysis, group))
        plt.close(fig)
        return paths
    fig, axes = plt.subplots(3, 3, figsize=(12.5, 8.4), squeeze=False)
    any_lossy = False
    for ax, key in zip(axes.flat, WIRE_PANELS, strict=True):
        label = WIRE_EVIDENCE[key][0]
        for mode in MODES:
            pts = sorted((p.subscribers, p.wire[mode].get(key, np.nan), capture_lossy(p.wire[mode]))
                         for p in pairs if mode in p.wire)
            pts = [pt for pt in pts if math.isfinite(pt[1])]
            if pts:
                xs, ys, _ = zip(*pts, strict=True)
                ax.plot(xs, ys, marker="o", color=COLORS[mode], linestyle=STYLES[mode], label=mode,
                        clip_on=False)
            # Hollow markers: tcpdump lost packets there, so the capture figure undercounts
            # (socket drops and fan-out come from the UDP counters, not the capture).
            lossy = [(n, v) for n, v, bad in pts if bad and key not in HOST_PANELS]
            if lossy:
                any_lossy = True
                xs, ys = zip(*lossy, strict=True)
                ax.plot(xs, ys, marker="o", markerfacecolor="white", color=COLORS[mode],
                        linestyle="none", clip_on=False, zorder=3)
        ax.set_title(label)
        if not ax.get_lines():  # a capture figure of a campaign without capture
            ax.text(0.5, 0.5, "no capture" if key not in HOST_PANELS else "no data",
                    ha="center", va="center", transform=ax.transAxes, color="grey")
        ax.set_xscale("log")
        counts = sorted({p.subscribers for p in pairs})
        if counts:
            ax.set_xticks(counts, [str(c) for c in counts])
            ax.minorticks_off()
        ax.set_xlabel("participants (publishers = subscribers)")
        top = max((float(np.nanmax(line.get_ydata())) for line in ax.get_lines()), default=0.0)
        ax.set_ylim(0, top * 1.15 if top > 0 else 1.0)
        if key in SHARE_PANELS:
            ax.yaxis.set_major_formatter(plt.FuncFormatter(lambda v, _: f"{v:.0%}"))
        else:
            ax.yaxis.set_major_formatter(plt.FuncFormatter(lambda v, _: _short_number(v)))
        ax.grid(True, alpha=0.3)
    # the modes' lines from the first panel that has any (a campaign without capture has
    # only the kernel counters' panels)
    handles, labels = next((hl for ax in axes.flat if (hl := ax.get_legend_handles_labels())[0]),
                           ([], []))
    if any_lossy:
        handles.append(plt.Line2D([], [], marker="o", markerfacecolor="white", color="grey",
                                  linestyle="none"))
        labels.append(f"capture lost > {CAPTURE_DROP_WARNING:.0%} of packets (undercounts)")
    if handles:
        fig.legend(handles, labels, loc="lower center", ncol=len(handles), fontsize=8)
    fig.suptitle(f"Wire evidence vs participant count ({group}): captures (counts per second "
                 "of capture) and the hosts' UDP counters (socket drops, fan-out); mean over "
                 "repetitions",
                 fontsize=9)
    fig.tight_layout(rect=(0, 0.04, 1, 0.97))
    paths = _save(fig, out_dir, "wire_metrics" + _suffix(analysis, group))
    plt.close(fig)
    return paths


def summary_figure(analysis: Analysis, group: str, out_dir: Path) -> list[Path]:
    """Median and p99 latency, mean throughput, with 95% intervals, vs participant count."""
    plt = _plt()
    pairs = analysis.pairs_of(group)
    panels = (("latency", "median"), ("latency", "p99"), ("throughput", "mean"))
    fig, axes = plt.subplots(1, 3, figsize=(11, 3.3), squeeze=False)
    counts = sorted({p.subscribers for p in pairs})
    for ax, (metric, stat) in zip(axes.flat, panels, strict=True):
        unit = METRICS[metric][1]
        for k, mode in enumerate(MODES):
            pts = []
            for p in pairs:
                c = p.curve(metric, mode)
                if c is not None:
                    pts.append((p.subscribers, *c[0].estimates[stat]))
            if not pts:
                continue
            pts.sort()
            n, est, lo, hi = (np.array(v, dtype=float) for v in zip(*pts, strict=True))
            xs = n * (1.0 + (0.04 if k else -0.04))  # dodge so the bars do not overlap
            ax.errorbar(xs, est, yerr=[est - lo, hi - est], marker="o", capsize=3,
                        color=COLORS[mode], linestyle=STYLES[mode], label=mode)
        ax.set_xscale("log")
        if counts:
            ax.set_xticks(counts, [str(c) for c in counts])
            ax.minorticks_off()
        ax.set_xlabel("participants (publishers = subscribers)")
        # latency ticks carry their unit (µs, ms, s); throughput's is in the label
        ax.set_ylabel(f"{stat} {metric}" if unit == "µs" else f"{stat} {metric} ({unit})")
        ax.set_title(f"{stat} {metric}, 95% block-bootstrap interval")
        lows = [line.get_ydata().min() for line in ax.get_lines() if len(line.get_ydata())]
        highs = [line.get_ydata().max() for line in ax.get_lines() if len(line.get_ydata())]
        if metric == "latency" and lows and min(lows) > 0 and max(highs) / min(lows) > LOG_SPAN:
            ax.set_yscale("log")
            log_axis(ax, "y", times=unit == "µs")
        else:
            label = time_label if unit == "µs" else _short_number
            ax.yaxis.set_major_formatter(plt.FuncFormatter(lambda v, _, f=label: f(v)))
        ax.grid(True, alpha=0.3, which="both")
        if ax.get_lines():
            ax.legend()
        else:  # say so, rather than leave a blank panel with an empty legend
            ax.text(0.5, 0.5, f"no run measured {metric}", transform=ax.transAxes,
                    ha="center", va="center", color="grey")
    fig.tight_layout()
    paths = _save(fig, out_dir, "summary" + _suffix(analysis, group))
    plt.close(fig)
    return paths


def difference_grid(analysis: Analysis, group: str, metric: str, out_dir: Path) -> list[Path]:
    """The test behind each verdict: ΔF(x) = F_unicast − F_multicast with the critical value
    ±c; where the curve leaves the grey band, that mode is significantly better there."""
    plt = _plt()
    pairs = [p for p in analysis.pairs_of(group) if metric in p.comparisons]
    ncols = max(1, min(3, len(pairs)))
    nrows = max(1, math.ceil(len(pairs) / ncols))
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.2 * ncols, 3.0 * nrows), squeeze=False)
    unit = METRICS[metric][1]
    up, down = ("unicast", "multicast") if METRICS[metric][2] else ("multicast", "unicast")
    for ax, pair in zip(axes.flat, pairs, strict=False):
        comp = pair.comparisons[metric]
        curves = {m: (comp.summaries[m], comp.grid, comp.cdfs[m]) for m in MODES}
        x_lo, x_hi, scale = _x_range(curves)
        shown_unit, div = _axis_unit(unit, [comp.grid])
        x = comp.grid / div
        ax.axhspan(-comp.critical, comp.critical, color="0.88", zorder=0)
        ax.axhline(0.0, color="0.5", linewidth=0.8)
        ax.step(x, comp.diff, where="post", color="black", linewidth=1.1)
        for sign, mode in ((1, up), (-1, down)):  # fill in the colour of the better mode
            mask = sign * comp.diff > comp.critical
            ax.fill_between(x, 0, comp.diff, where=mask, step="post", color=COLORS[mode],
                            alpha=0.5, linewidth=0)
        for c in comp.crossovers:
            ax.axvspan(c.lo / div, c.hi / div, color="0.93", zorder=0)
            if c.located:
                ax.axvline(c.x / div, color="0.3", linestyle=":", linewidth=1)
        _set_x(ax, x_lo / div, x_hi / div, scale)
        lim = max(0.05, 1.15 * max(float(np.abs(comp.diff).max()), comp.critical))
        ax.set_ylim(-lim, lim)
        p_text = comp.qualifier().split(", ")[-2]
        label = (comp.verdict if comp.testbed_bound  # never the test's own outcome then
                 else f"within these runs, {comp.verdict}")
        ax.set_title(f"{pair.label}: {label} ({p_text}, c={comp.critical:.3f})",
                     color=TESTBED_COLOR if comp.testbed_bound else "black")
        if comp.testbed_bound:
            mark_testbed_bound(ax)
        ax.set_xlabel(f"{METRICS[metric][0]} ({shown_unit}" + (", log)" if scale == "log" else ")"))
        ax.grid(True, alpha=0.3)
    for ax in list(axes.flat)[len(pairs):]:
        ax.set_axis_off()
    for ax in axes[:, 0]:
        ax.set_ylabel("ΔF = F_unicast − F_multicast")
    fig.suptitle(f"The test behind the {metric} verdicts ({group}); grey: ±c, the family-wise "
                 f"critical value (α = {analysis.alpha:g})\nΔF above +c: {up} significantly "
                 f"better there (filled in its colour); below −c: {down}; dotted: crossover",
                 fontsize=9)
    fig.tight_layout()
    paths = _save(fig, out_dir, f"difference_{metric}" + _suffix(analysis, group))
    plt.close(fig)
    return paths


def all_figures(analysis: Analysis, out_dir: Path) -> list[Path]:
    paths: list[Path] = []
    for group in analysis.groups:
        for metric in ("latency", "throughput", "per_subscriber"):
            paths += ecdf_grid(analysis, group, metric, out_dir)
        for metric in ("latency", "throughput"):
            paths += difference_grid(analysis, group, metric, out_dir)
        paths += wire_figure(analysis, group, out_dir)
        paths += summary_figure(analysis, group, out_dir)
    return paths


# ---- views against message size (analysis/views.py) -----------------------------------

CURVE_COLORS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000",
                "#F0E442")
CURVE_MARKERS = "osD^vP*X"


def _size_axis(ax: Any, sizes: list[float]) -> None:
    """Log-scaled sizes with byte labels; the UDP-datagram boundary where the range
    reaches it (larger samples are fragmented: DATA_FRAG over several datagrams)."""
    from analysis.views import UDP_DATAGRAM, size_label

    ax.set_xscale("log", base=2)
    ax.set_xticks(sizes, [size_label(s) for s in sizes], rotation=45 if len(sizes) > 6 else 0)
    ax.minorticks_off()
    lo, hi = min(sizes) / 1.5, max(sizes) * 1.5
    ax.set_xlim(lo, hi)
    if lo <= UDP_DATAGRAM <= hi:
        ax.axvline(UDP_DATAGRAM, color="0.4", linestyle=":", linewidth=1)
        ax.text(UDP_DATAGRAM, 0.98, " 64 KB datagram", transform=ax.get_xaxis_transform(),
                fontsize=7, color="0.3", va="top")
    ax.set_xlabel("message size (-dataLen, bytes; log scale)")


def size_figure(curves: Any, panels: list[tuple[str, str]], title: str, out_dir: Path,
                stem: str) -> list[Path]:
    """One panel per column of ``curves`` (views.curves of one test): each curve's mean over
    runs against message size with its 95% t interval over runs; hollow markers where a
    run was host-bound."""
    plt = _plt()
    panels = [(c, label) for c, label in panels
              if c in curves and np.isfinite(curves[c].astype(float)).any()]
    ncols = min(2, len(panels))
    nrows = math.ceil(len(panels) / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(5.6 * ncols, 3.6 * nrows), squeeze=False)
    sizes = sorted({float(s) for s in curves["data_len"]})
    names = list(dict.fromkeys(curves["curve"]))
    any_host = False
    for ax, (col, label) in zip(axes.flat, panels, strict=False):
        for k, name in enumerate(names):
            g = curves[curves["curve"] == name].sort_values("data_len")
            g = g[np.isfinite(g[col].astype(float))]
            if g.empty:
                continue
            x = g["data_len"].to_numpy(float) * 2 ** (0.06 * (k - (len(names) - 1) / 2))
            est = g[col].to_numpy(float)
            lo, hi = g[f"{col}_lo"].to_numpy(float), g[f"{col}_hi"].to_numpy(float)
            err = [np.nan_to_num(est - lo), np.nan_to_num(hi - est)]
            color, marker = CURVE_COLORS[k % len(CURVE_COLORS)], CURVE_MARKERS[k % 8]
            ax.errorbar(x, est, yerr=err, marker=marker, capsize=3, color=color, label=name)
            host = g["host-bound runs"].to_numpy() > 0
            if host.any():
                any_host = True
                ax.plot(x[host], est[host], marker=marker, markerfacecolor="white",
                        color=color, linestyle="none", zorder=3)
        _size_axis(ax, sizes)
        vals = curves[col].astype(float)
        vals = vals[np.isfinite(vals) & (vals > 0)]
        times = label.endswith(" (µs)")  # ticks then carry the unit: µs, ms, s
        if len(vals) and vals.max() / vals.min() > LOG_SPAN:
            ax.set_yscale("log")
            log_axis(ax, "y", times=times)
        else:
            fmt = time_label if times else _short_number
            ax.yaxis.set_major_formatter(plt.FuncFormatter(lambda v, _, f=fmt: f(v)))
        ax.set_title(label.removesuffix(" (µs)"))
        ax.grid(True, alpha=0.3, which="both")
    for ax in list(axes.flat)[len(panels):]:
        ax.set_axis_off()
    handles, labels = axes.flat[0].get_legend_handles_labels()
    if any_host:
        handles.append(plt.Line2D([], [], marker="o", markerfacecolor="white", color="grey",
                                  linestyle="none"))
        labels.append("a run there was host-bound (testbed-bound)")
    fig.legend(handles, labels, loc="lower center", ncol=min(len(handles), 4), fontsize=8)
    runs = int(curves["runs"].min()) if len(curves) else 0
    fig.suptitle(f"{title}\nmean over runs (geometric, except CPU and memory), bars: 95% t "
                 "interval over runs"
                 + (" (one run: no interval)" if runs < 2 else ""), fontsize=9)
    fig.tight_layout(rect=(0, 0.06 + 0.02 * math.ceil(len(handles) / 4), 1, 0.96))
    paths = _save(fig, out_dir, stem)
    plt.close(fig)
    return paths


SIZE_PANELS = {
    "latency": [("latency_mean", "mean RTT (µs)"), ("latency_median", "median RTT (µs)"),
                ("latency_p99", "p99 RTT (µs)"),
                ("latency_std", "jitter: standard deviation of the RTT (µs)")],
    "throughput": [("samples_per_s", "samples/s (median second, summed over subscribers)"),
                   ("mbps", "Mbit/s (median second, summed over subscribers)"),
                   ("latency_mean", "mean one-way latency (µs)"),
                   ("latency_median", "median one-way latency (µs)"),
                   ("latency_p99", "p99 one-way latency (µs)"),
                   ("latency_std", "jitter: standard deviation of the one-way latency (µs)")],
}
SIZE_TITLES = {"latency": "RTT test: round-trip latency and jitter against message size",
               "throughput": "Stress test: throughput (and the pings' one-way latency) "
                             "against message size"}


def view_figures(tables: dict, out_dir: Path) -> list[Path]:
    """The figures against message size (analysis/views.py): per test its metrics, and the
    CPU and memory per role where the runs sampled them."""
    from analysis.views import RESOURCE_COLUMNS

    curves = tables.get("curves")
    if curves is None or curves.empty:
        return []
    paths: list[Path] = []
    for test in dict.fromkeys(curves["test"]):
        c = curves[curves["test"] == test]
        name = "rtt" if test == "latency" else "throughput"
        paths += size_figure(c, SIZE_PANELS.get(test, []), SIZE_TITLES.get(test, test),
                             out_dir, f"{name}_vs_size")
        res = [(col, f"{'CPU, % of one core' if col.startswith('cpu') else 'peak RSS, MiB'}"
                     f": {col.split(' ', 1)[1]}") for col in RESOURCE_COLUMNS if col in c]
        if res:
            kind = "RTT test" if test == "latency" else "stress test"
            paths += size_figure(c, res, f"{kind}: CPU (mean over the run's samples) and peak "
                                 "memory per role against message size", out_dir,
                                 f"resources_{name}_vs_size")
    return paths
