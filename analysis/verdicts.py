"""The verdict table: one row per participant count, each verdict qualified by its test,
the wire evidence beside it, and one generated sentence naming the dominant difference."""

from __future__ import annotations

import math

import pandas as pd

from analysis import dominance, modes
from analysis.analyse import METRICS, Analysis, Pair
from analysis.load import KERNEL_COUNTERS  # comparable whatever the capture windows were
from analysis.testbed import advice_sentence, bound_cell, testbed_cause, unverified_only

# wire_* column -> (label, format, floor added before taking ratios)
WIRE_EVIDENCE = {
    "wire_meta_share": ("meta-traffic share", "{:.1%}", 0.001),
    "wire_repair_ratio": ("repair-byte ratio", "{:.3f}", 0.0005),
    "wire_acknack_per_reader_per_s": ("ACKNACKs per reader per s", "{:.1f}", 0.1),
    "wire_heartbeat_per_writer_per_s": ("HEARTBEATs per writer per s", "{:.1f}", 0.1),
    "wire_nack_storms_per_s": ("NACK storms per s", "{:.2f}", 0.1),
    "wire_flooded_frames_per_s": ("flooded frames per s", "count", 1.0),
    "wire_ip_fragments_per_s": ("IP fragments per s", "count", 1.0),
    "wire_packets_per_s": ("packets per s", "count", 1.0),
    # Not from the capture: the hosts' kernel UDP counters (manifest "udp").
    "wire_socket_drop_share": ("datagrams dropped at full sockets", "{:.2%}", 0.001),
    # the hosts' /proc/net/snmp (manifest "host_fanout"): copies per arriving datagram
    "wire_host_fanout": ("socket deliveries per arriving datagram", "{:.2f}", 0.01),
}
SIMILAR = 1.25  # below this ratio the wire metrics are called alike
# Metrics that differ between the modes by construction: unicast sends one copy of every
# datagram per reader, so its packet and fragment rates are higher whatever the network
# does. They are listed apart and never singled out as "the" difference.
BY_DESIGN = ("wire_packets_per_s", "wire_ip_fragments_per_s")
# Above this share of packets lost by tcpdump, the wire evidence carries a warning.
CAPTURE_DROP_WARNING = 0.01


def capture_lossy(wire: dict[str, float]) -> bool:
    """Whether one mode's capture lost enough packets that its wire figures undercount."""
    share = wire.get("wire_capture_drop_share", math.nan)
    return math.isfinite(share) and share > CAPTURE_DROP_WARNING


def fmt_wire(key: str, value: float) -> str:
    """Format one wire metric; counts become 1.7M, 935k, 12."""
    if not math.isfinite(value):
        return "n/a"
    fmt = WIRE_EVIDENCE[key][1]
    if fmt != "count":
        return fmt.format(value)
    for div, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= div:
            return f"{value / div:.3g}{suffix}"
    return f"{value:.0f}" if value == int(value) else f"{value:.1f}"
TABLE_EVIDENCE = (
    "wire_meta_share",
    "wire_repair_ratio",
    "wire_acknack_per_reader_per_s",
    "wire_flooded_frames_per_s",
    "wire_ip_fragments_per_s",
    "wire_socket_drop_share",
    "wire_host_fanout",
)


def fmt_value(value: float, unit: str) -> str:
    """Human number with its unit: 1234.5 µs -> '1.23 ms', 2.5e5 samples/s -> '250k samples/s'."""
    if not math.isfinite(value):
        return "n/a"
    if unit == "µs":
        if abs(value) >= 1e6:
            return f"{value / 1e6:.3g} s"
        if abs(value) >= 1e3:
            return f"{value / 1e3:.3g} ms"
        return f"{value:.3g} µs"
    if abs(value) >= 1e6:
        return f"{value / 1e6:.3g}M {unit}"
    if abs(value) >= 1e3:
        return f"{value / 1e3:.3g}k {unit}"
    return f"{value:.3g} {unit}"


def fmt_pct(effect: tuple[float, float, float]) -> str:
    est, lo, hi = effect
    if not math.isfinite(est):
        return "n/a"
    return f"{est:+.1f}% [{lo:+.1f}, {hi:+.1f}]"


def test_cell(pair: Pair, metric: str, unit: str) -> str:
    """The verdict's test (runs as the unit), then the within-run distribution test."""
    comp, verdict = pair.comparisons.get(metric), pair.verdicts.get(metric)
    within = verdict_cell(comp, unit, pair.not_compared.get(metric, ""))
    if verdict is None:
        return within
    if verdict.outcome == modes.TESTBED_BOUND:
        return within
    text = f"{to_decide(verdict)}{verdict.qualifier()}."
    tail = pair.tails.get(metric)
    if tail is not None and tail.testable:
        text += f" Tail: {tail.outcome} ({tail.qualifier()})."
    return f"{text} Within the runs, conditional on them: {within}"


def verdict_cell(comp: dominance.Comparison | None, unit: str, why_not: str = "") -> str:
    """'multicast dominates (sup-band test, p<0.001; median −12.0% [...])' and crossings;
    without a comparison, 'not compared (<why_not>)'."""
    if comp is None:
        return f"not compared ({why_not or 'one mode missing'})"
    if comp.testbed_bound:
        if unverified_only(comp.testbed_reasons):
            return (f"{dominance.TESTBED_BOUND}, no verdict: the fidelity checks did not all "
                    f"run ({'; '.join(comp.testbed_reasons)}); multicast vs unicast median "
                    f"{fmt_pct(comp.effects['median'])} as measured on an unverified testbed")
        return (f"{dominance.TESTBED_BOUND}, no verdict: the emulator could not keep up "
                f"({'; '.join(comp.testbed_reasons)}); multicast vs unicast median "
                f"{fmt_pct(comp.effects['median'])} as measured on the overloaded testbed")
    text = comp.verdict if not comp.body_better else body_phrase(comp)
    if comp.crossovers:
        text += " " + "; ".join(crossover_phrase(c, unit) for c in comp.crossovers)
    median = fmt_pct(comp.effects["median"])
    return f"{text} ({comp.qualifier()}; multicast vs unicast median {median})"


def body_phrase(comp: dominance.Comparison) -> str:
    """A one-sign outcome whose worse tail disagrees: 'tail reversal: multicast better in
    the body, unicast in the tail (p99 +232% [...] ...), so neither dominates' or
    'multicast better in the body, not shown in the tail (...): no dominance shown'."""
    good = comp.body_better
    other = next(n for n in comp.names if n != good)
    if comp.verdict == dominance.TAIL_REVERSAL:
        return (f"{dominance.TAIL_REVERSAL}: {good} better in the body, {other} in the tail "
                f"({comp.tail_phrase()}), so neither dominates")
    return (f"{comp.verdict}, its tail worse but not significantly ({comp.tail_phrase()}): "
            "no dominance shown")


def crossover_phrase(c: dominance.Crossover, unit: str) -> str:
    """'between 1.2 ms and 1.5 ms (estimate 1.3 ms): multicast better below (F 40%–48%),
    unicast above' — the interval, a point only where the estimate changes sign once, and
    the ECDF of the mode better below at both ends of the interval."""
    where = f"between {fmt_value(c.lo, unit)} and {fmt_value(c.hi, unit)}"
    if c.located:
        where += f" (estimate {fmt_value(c.x, unit)})"
    f_lo, f_hi = c.ends[c.below]
    return (f"{where}: {c.below} better below ({f_lo:.0%}–{f_hi:.0%} of its samples lie "
            f"below the crossover), {c.above} above")


def window_runs(pair: Pair) -> dict[str, list]:
    """Each mode's runs' capture windows (captures/windows.WindowSummary, None for a run
    without one); {} when no run of the pair was captured in windows (a capture over the
    whole run: :func:`coverage_texts` says what it covers)."""
    from captures.windows import WindowSummary

    out: dict[str, list] = {}
    for m in ("unicast", "multicast"):
        runs = pair.wire_runs.get(m, {})
        cols = [runs.get(f"wire_window_{k}", []) for k in
                ("s", "length_s", "count", "offset_s", "inside", "every_s")]
        n = len(pair.runs.get(m, []))
        whole = [WindowSummary(t, ln, int(c), o, bool(i), e)
                 for t, ln, c, o, i, e in zip(*cols, strict=False)]
        out[m] = whole + [None] * (n - len(whole))
    if not any(w is not None for ws in out.values() for w in ws):
        return {}
    return out


def window_differences(pair: Pair) -> list[str]:
    """Why this pair's capture figures are not compared mode against mode (their windows
    differ in length or phase, or one mode has none); [] when they are."""
    from captures.windows import differences

    runs = window_runs(pair)
    return differences(runs) if runs else []


def window_note(pair: Pair) -> str:
    """What the capture figures of this pair describe, e.g. '5.0 s inside the measurement
    window, from 2.0 s after full discovery, both modes', or why the modes are not
    compared; '' for whole-run captures."""
    runs = window_runs(pair)
    if not runs:
        return ""
    why = window_differences(pair)
    if why:
        return ("capture windows differ (" + "; ".join(why) + "): no multicast/unicast ratio "
                "of a capture figure is given")
    w = next(w for ws in runs.values() for w in ws if w is not None)
    return w.text() + ", both modes"


def window_notes(pairs: list[Pair]) -> str:
    """The lines under a wire table naming the capture windows its figures come from,
    one per participant count ('' when no pair was captured in windows)."""
    lines = [f"- {p.label}: {note}" for p in pairs if (note := window_note(p))]
    if not lines:
        return ""
    return ("\nCapture figures are per second of these capture windows (manifest "
            "`capture_windows`; the socket-drop and fan-out figures come from the hosts' "
            "kernel counters over the agents' lives):\n\n" + "\n".join(lines) + "\n")


def wire_ratio(pair: Pair, key: str) -> float | None:
    """multicast / unicast for one wire metric (with a floor so zeros stay finite); None
    for a capture figure when the modes' capture windows differ."""
    if set(pair.wire) != {"unicast", "multicast"}:
        return None
    if key not in KERNEL_COUNTERS and window_differences(pair):
        return None
    u, m = pair.wire["unicast"].get(key), pair.wire["multicast"].get(key)
    if u is None or m is None or not (math.isfinite(u) and math.isfinite(m)):
        return None
    floor = WIRE_EVIDENCE[key][2]
    if max(u, m) < floor:
        return None  # both negligible: the ratio would be mostly the floor (0.00% vs 0.08%)
    return (m + floor) / (u + floor)


def coverage_texts(pair: Pair) -> dict[str, str]:
    """{mode: 'capture covers the last 41 s of 240 s'} for the modes whose capture (its
    least-covered point, mean over repetitions) misses part of the run; the wire
    figures of such a mode describe only that part."""
    from captures.coverage import describe

    out = {}
    for m in ("unicast", "multicast"):
        w = pair.wire.get(m, {})
        nums = [w.get(f"wire_capture_{k}", math.nan) for k in
                ("covered_s", "run_s", "missing_start_s", "missing_end_s")]
        if all(math.isfinite(v) for v in nums):
            whole, text = describe(*nums)
            if not whole:
                out[m] = text
    return out


def kernel_only(pair: Pair) -> bool:
    """Whether this pair's wire evidence is only the hosts' kernel counters (no run of it
    was captured: every capture figure is NaN)."""
    return bool(pair.wire) and not any(
        math.isfinite(v) for w in pair.wire.values() for k, v in w.items()
        if k in WIRE_EVIDENCE and k not in KERNEL_COUNTERS)


def wire_cell(pair: Pair) -> str:
    if not pair.wire:
        return "no capture"
    parts = []
    for key in TABLE_EVIDENCE:
        label = WIRE_EVIDENCE[key][0]
        vals = [pair.wire.get(m, {}).get(key, float("nan")) for m in ("unicast", "multicast")]
        if all(not math.isfinite(v) for v in vals):
            continue
        shown = [fmt_wire(key, v) for v in vals]
        parts.append(f"{label} {shown[0]} → {shown[1]}")
    text = "; ".join(parts) + " (unicast → multicast)"
    if kernel_only(pair):
        return "no capture; the hosts' kernel counters: " + text
    text += "".join(f"; {m}: {t}" for m, t in coverage_texts(pair).items())
    if window_differences(pair):
        text += f"; {window_note(pair)}"
    if any(capture_lossy(w) for w in pair.wire.values()):
        lost = [pair.wire.get(m, {}).get("wire_capture_drop_share", math.nan)
                for m in ("unicast", "multicast")]
        shown = [f"{v:.0%}" if math.isfinite(v) else "n/a" for v in lost]
        text += (f"; the capture lost {shown[0]} → {shown[1]} of its packets in the kernel, "
                 "so the capture-based figures undercount (manifest capture_drops)")
    return text


def wire_change(pair: Pair, key: str, alpha: float = 0.05
                ) -> tuple[float, float, float] | None:
    """multicast / unicast ratio of one wire metric with a (1 − alpha) interval.

    With ≥ 2 runs per mode the interval is the Welch t interval on the log of each run's
    value (plus the metric's floor), as for the verdicts (runs as the unit); with one run
    per mode it is (ratio, NaN, NaN): no uncertainty can be stated.
    """
    ratio = wire_ratio(pair, key)
    if ratio is None or ratio <= 0:
        return None
    floor = WIRE_EVIDENCE[key][2]
    runs = [[v + floor for v in pair.wire_runs.get(m, {}).get(key, [])]
            for m in ("unicast", "multicast")]
    if min(len(r) for r in runs) < modes.MIN_RUNS or not all(v > 0 for r in runs for v in r):
        return ratio, math.nan, math.nan
    est, lo, hi, *_ = modes.welch(runs[0], runs[1], alpha, modes.EQUIVALENCE_MARGIN)
    return 1.0 + est / 100.0, 1.0 + lo / 100.0, 1.0 + hi / 100.0


def wire_differences(pair: Pair) -> list[tuple[str, tuple[float, float, float]]]:
    """Wire metrics whose multicast/unicast ratio is at least SIMILAR from 1 (and, when runs
    repeat, whose interval excludes 1), largest first; metrics that differ by design last.
    A metric below its floor in both modes has no ratio (:func:`wire_ratio`)."""
    out = []
    for key in WIRE_EVIDENCE:
        ch = wire_change(pair, key)
        if ch is None:
            continue
        r, lo, hi = ch
        if max(r, 1 / r) < SIMILAR:
            continue
        if math.isfinite(lo) and lo <= 1.0 <= hi:
            continue  # the runs do not show a difference
        out.append((key, ch))
    out.sort(key=lambda kc: (kc[0] in BY_DESIGN, -abs(math.log(kc[1][0]))))
    return out


def _ratio_text(ratio: float) -> str:
    if ratio >= 1:
        return f"{ratio:.1f}× higher" if ratio < 100 else "orders of magnitude higher"
    return f"{1 / ratio:.1f}× lower" if ratio > 0.01 else "orders of magnitude lower"


def wire_phrase(pair: Pair, key: str, change: tuple[float, float, float]) -> str:
    """'meta-traffic share (3.1× higher with multicast: 10% vs 31%; 95% interval of the
    ratio 2.2–4.4× over 3+3 runs)'."""
    r, lo, hi = change
    u, m = pair.wire["unicast"][key], pair.wire["multicast"][key]
    text = (f"{WIRE_EVIDENCE[key][0]} ({_ratio_text(r)} with multicast: {fmt_wire(key, u)} "
            f"vs {fmt_wire(key, m)}")
    if math.isfinite(lo):
        runs = "+".join(str(len(pair.wire_runs[md][key])) for md in ("unicast", "multicast"))
        if hi - lo <= 1e-9 * abs(r):
            text += f"; the same value in each of {runs} runs"
        else:
            text += f"; 95% interval of the ratio {lo:.2g}–{hi:.2g}× over {runs} runs"
    else:
        text += "; one run per mode, no interval"
    return text + ")"


def _distribution_phrase(comp: dominance.Comparison) -> str:
    """What the within-run distribution test saw (conditional on the compared runs)."""
    test = comp.test_outcome or comp.verdict
    if comp.body_better:
        return f"the ECDF test within these runs finds {body_phrase(comp)}"
    if test.endswith("dominates"):
        return f"the ECDF test within these runs finds {test.replace(' dominates', '')} better"
    if test == dominance.CROSSING:
        unit = METRICS[comp.metric][1] if comp.metric in METRICS else ""
        return ("the ECDFs of these runs cross "
                + "; ".join(crossover_phrase(c, unit) for c in comp.crossovers))
    return "the ECDF test within these runs finds no significant difference"


def _metric_phrase(pair: Pair, metric: str, unit: str) -> str:
    word = {
        "latency": ("lower latency", "latency"),
        "throughput": ("higher throughput", "throughput"),
    }
    good, noun = word[metric]
    comp = pair.comparisons.get(metric)
    verdict = pair.verdicts.get(metric)
    why_not = pair.not_compared.get(metric, "")
    if comp is None or verdict is None:
        return f"{noun} was not compared ({why_not})" if why_not else f"{noun} was not compared"
    if verdict.outcome == modes.TESTBED_BOUND:
        return (f"{noun} is testbed-bound: {testbed_cause(pair.host_bound_reasons)}, so the "
                "data give no verdict on the modes")
    est, lo, hi = verdict.change
    runs = f"{verdict.runs['unicast']}+{verdict.runs['multicast']} runs"
    if verdict.winner:
        other = next(n for n in verdict.runs if n != verdict.winner)
        text = (f"{verdict.winner} has {good} than {other} (run medians: multicast "
                f"{est:+.0f}% [{lo:+.0f}, {hi:+.0f}] over {runs}, Holm-adjusted "
                f"p={verdict.p_difference_adj:.3f})")
        tail = pair.tails.get(metric)
        if modes.tail_reversal(verdict, tail) and tail is not None:
            t_est, t_lo, t_hi = tail.change
            text += (f", but its tail is worse — a tail reversal: run p99s multicast "
                     f"{t_est:+.0f}% [{t_lo:+.0f}, {t_hi:+.0f}], {tail.winner} better there "
                     f"(Holm-adjusted p={tail.p_difference_adj:.3f})")
        return text
    if verdict.outcome == modes.EQUAL:
        return (f"{noun} is practically equal in the two modes (run medians: multicast "
                f"{est:+.1f}% [{lo:+.1f}, {hi:+.1f}] over {runs}, inside the "
                f"±{verdict.margin:.0%} margin)")
    if verdict.testable:
        return (f"{noun} is undecided between the modes (run medians: multicast {est:+.0f}% "
                f"[{lo:+.0f}, {hi:+.0f}] over {runs}: neither a difference nor equivalence "
                f"within ±{verdict.margin:.0%} is shown)")
    return (f"{noun} is undecided between the modes: one run per mode, so run-to-run "
            f"variation is unknown; conditional on these two runs, {_distribution_phrase(comp)}"
            f" (median {est:+.0f}% for multicast)")


def sentence(pair: Pair) -> str:
    """One sentence naming the dominant difference between the two modes at this count."""
    phrases = [_metric_phrase(pair, m, unit) for m, (_, unit, _) in METRICS.items()]
    text = f"At {pair.label}, " + phrases[0] + "; " + phrases[1] + "."
    if pair.testbed_bound:
        text += " " + testbed_note(pair)
    if not pair.wire or set(pair.wire) != {"unicast", "multicast"}:
        return text + (" No capture, so no wire evidence." if not pair.wire else "")
    diffs = wire_differences(pair)
    chosen = [d for d in diffs if d[0] not in BY_DESIGN]
    design = [d for d in diffs if d[0] in BY_DESIGN]
    listed = "; ".join(wire_phrase(pair, k, c) for k, c in chosen)
    beside = ". These are differences measured beside the verdict, not a shown cause."
    kernel = "in the hosts' kernel counters the modes differ"
    if kernel_only(pair):
        if not chosen:
            return (text + f" No capture; {kernel} by {SIMILAR:g}× or more in neither socket "
                    "drops nor fan-out.")
        return text + f" No capture; {kernel} in: {listed}{beside}"
    windows_differ = window_differences(pair)
    if windows_differ:
        text += (" The capture windows of the two modes differ ("
                 + "; ".join(windows_differ) + "), so no capture figure is compared")
        return text + (f"; {kernel} in: {listed}." if chosen else ".")
    if not chosen:
        text += (f" On the wire the modes differ by {SIMILAR:g}× or more in no metric other "
                 "than those that differ by design")
    else:
        text += " On the wire the modes differ in: " + listed
    if design:
        text += ("; " + " and ".join(WIRE_EVIDENCE[k][0] for k, _ in design)
                 + " differ by design (unicast sends one copy per reader)")
    return text + (beside if chosen else ".")


def testbed_note(pair: Pair) -> str:
    """Why a pair is testbed-bound, and what would make it network-bound (or faithful)."""
    what = ("Unverified runs" if unverified_only(pair.host_bound_reasons)
            else "Host-bound runs")
    return (f"{what}: {' | '.join(pair.host_bound_reasons)}. "
            f"{advice_sentence(pair.host_bound_reasons)}")


def fidelity_cell(pair: Pair) -> str:
    """'network-bound', 'faithful, hosts saturated (k of n runs)', 'testbed-bound (k of n
    runs host-bound)' or 'unknown'."""
    bounds = [b for bs in pair.fidelity.values() for b in bs]
    withheld = bound_cell(bounds)
    if withheld:
        return withheld
    if any(b == "unknown" for b in bounds):
        return "fidelity unknown (runs made without the monitor)"
    saturated = sum(b == "saturated" for b in bounds)
    if saturated:
        return f"faithful, hosts saturated ({saturated} of {len(bounds)} runs)"
    return "network-bound"


def to_decide(verdict: modes.ModeVerdict | None) -> str:
    """For an undecided cell, how many runs per mode would decide it at the spread its runs
    showed (:func:`analysis.modes.runs_to_decide`); empty otherwise."""
    if verdict is None or verdict.outcome != modes.UNDECIDED:
        return ""
    n = modes.runs_to_decide(verdict)
    if n is not None:
        return f"About {n} runs per mode would decide it at the spread its runs showed. "
    if min(verdict.runs.values(), default=0) < modes.MIN_RUNS:
        return f"At least {modes.MIN_RUNS} runs per mode are needed to decide it. "
    return (f"No run count up to {modes.MAX_RUNS_ESTIMATE} per mode would decide it at this "
            "spread: the change sits at the equivalence margin. ")


def verdict_table(analysis: Analysis) -> pd.DataFrame:
    """One row per (group, participant count): qualified verdicts, wire evidence, sentence."""
    rows = []
    for pair in analysis.pairs:
        row = {"group": pair.group, "participants": pair.label,
               "fidelity": fidelity_cell(pair),
               "runs per mode": "/".join(str(pair.repetitions.get(m, 0))
                                         for m in ("unicast", "multicast"))}
        for metric, (_, unit, _) in METRICS.items():
            verdict = pair.verdicts.get(metric)
            row[f"{metric} verdict"] = verdict.outcome if verdict else "not compared"
            row[f"{metric} test"] = test_cell(pair, metric, unit)
        row["wire evidence"] = wire_cell(pair)
        row["explanation"] = sentence(pair)
        rows.append(row)
    return pd.DataFrame(rows)


def short_verdict(verdict: modes.ModeVerdict) -> str:
    """'multicast better (−40% [−52, −25])', 'testbed-bound' or 'undecided (+3%)'."""
    if verdict.outcome == modes.TESTBED_BOUND:
        return verdict.outcome
    est, lo, hi = verdict.change
    if not math.isfinite(est):
        return verdict.outcome
    if math.isfinite(lo):
        return f"{verdict.outcome} ({est:+.0f}% [{lo:+.0f}, {hi:+.0f}])"
    return f"{verdict.outcome} ({est:+.0f}%)"


def _short_verdict(pair: Pair | None, metric: str) -> str:
    """:func:`short_verdict` of a pair's metric, 'not compared' or 'no runs'."""
    if pair is None:
        return "no runs"
    verdict = pair.verdicts.get(metric)
    return "not compared" if verdict is None else short_verdict(verdict)


def implementation_table(analysis: Analysis) -> pd.DataFrame:
    """The verdict tables of a campaign's implementations side by side: one row per matrix
    point, per implementation its fidelity ('testbed-bound (k of n runs host-bound)' as in
    :func:`verdict_table`), runs per mode and verdicts (multicast's change of the run
    medians), then per metric whether the implementations' verdicts agree
    (:func:`analysis.compare.agreement`). Empty with one implementation."""
    from analysis.compare import implementations

    cells = implementations(analysis)
    if not cells:
        return pd.DataFrame()
    agents = analysis.agents
    pairs = {(analysis.base_group(p), p.label, p.agent): p for p in analysis.pairs}
    rows: dict[tuple[str, str], dict[str, str]] = {}
    for c in cells:
        row = rows.setdefault((c.group, c.participants),
                              {"group": c.group, "participants": c.participants})
        for agent in agents:
            pair = pairs.get((c.group, c.participants, agent))
            row[f"{agent} fidelity"] = fidelity_cell(pair) if pair else "no runs"
            row[f"{agent} runs per mode"] = ("/".join(str(pair.repetitions.get(m, 0))
                                                      for m in ("unicast", "multicast"))
                                             if pair else "0/0")
        for agent in agents:
            row[f"{agent} {c.metric}"] = _short_verdict(
                pairs.get((c.group, c.participants, agent)), c.metric)
        row[f"{c.metric} across implementations"] = c.agreement
    return pd.DataFrame(list(rows.values()))
