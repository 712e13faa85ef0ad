"""Rich rendering of the wire summary and the tables written next to it."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from rich.console import Console
from rich.table import Table


def _table(title: str, df: pd.DataFrame, limit: int = 20) -> Table:
    t = Table(title=title)
    for c in df.columns:
        t.add_column(str(c), justify="right" if pd.api.types.is_numeric_dtype(df[c]) else "left")
    for row in df.head(limit).itertuples(index=False):
        t.add_row(*[f"{v:.4g}" if isinstance(v, float) else str(v) for v in row])
    return t


def coverage_lines(summary: dict) -> list[str]:
    """What part of the run the figures describe: the capture windows ("figures over 5.0
    s inside the measurement window, ..."), else one line per capture point (empty for
    summaries made without the run's span, e.g. a lone pcap)."""
    from captures.coverage import lines

    win = summary.get("windows")
    if isinstance(win, dict):
        return [f"figures over {win.get('text', '')}"]
    cov = summary.get("coverage")
    return lines(cov) if isinstance(cov, dict) else []


def print_wire(summary: dict, tables_dir: Path) -> None:
    con = Console()
    for line in coverage_lines(summary):
        # Above the figures: with a wrapped ring they describe only this part of the run.
        good = "whole run" in line or "inside the measurement window" in line
        con.print(line, style=None if good else "bold yellow", markup=False, highlight=False)
    tot = Table(title="wire totals")
    tot.add_column("metric")
    tot.add_column("value", justify="right")
    for k, v in summary.items():
        if k in ("coverage", "windows"):
            continue
        if isinstance(v, dict):
            v = ", ".join(f"{a}={b}" for a, b in v.items()) or "-"
        elif isinstance(v, list):
            v = ", ".join(map(str, v))
        elif isinstance(v, float):
            v = f"{v:.4g}"
        tot.add_row(k, str(v))
    con.print(tot)

    def load(name: str) -> pd.DataFrame:
        f = tables_dir / f"{name}.parquet"
        return pd.read_parquet(f) if f.exists() else pd.DataFrame()

    sm = load("submessages")
    if not sm.empty:
        g = (sm.groupby(["point", "direction", "kind", "cast", "traffic"])
             [["submessages", "bytes"]].sum().reset_index().sort_values("bytes", ascending=False))
        con.print(_table("RTPS submessages by point, direction, kind, cast, traffic", g, 30))
    rp = load("repairs")
    if not rp.empty:
        con.print(_table("repairs per writer", rp.sort_values("repair_bytes", ascending=False)))
    fl = load("flooding")
    if not fl.empty:
        con.print(_table("multicast user data delivered per point (flooded = no member)", fl))
    ct = load("control")
    if not ct.empty:
        con.print(_table("IGMP / PIM control", ct))
    fg = load("fragments")
    if not fg.empty:
        con.print(_table("IP fragments per datagram", fg))
    con.print(f"tables: {tables_dir}")
