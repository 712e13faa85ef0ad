"""Reference figures computed by tshark (``-T fields``) on a capture file."""

from __future__ import annotations

import subprocess
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from captures import dissect as dz

FIELDS = ["rtps.sm.id", "ip.flags.mf", "ip.frag_offset", "igmp.type", "pim.type"]
IGMP_TYPE_NAMES = {0x11: "query", 0x12: "report_v1", 0x16: "report_v2", 0x17: "leave",
                   0x22: "report_v3"}


@dataclass
class Figures:
    packets: int = 0
    rtps: Counter = field(default_factory=Counter)  # spec name -> count
    fragments: int = 0  # frames that are IPv4 fragments (outer header)
    igmp: Counter = field(default_factory=Counter)
    pim: Counter = field(default_factory=Counter)


def tshark_figures(pcap: Path) -> Figures:
    argv = ["tshark", "-n", "-r", str(pcap), "-T", "fields", "-E", "separator=\t",
            "-E", "occurrence=a", "-E", "aggregator=,"]
    for f in FIELDS:
        argv += ["-e", f]
    out = subprocess.run(argv, check=True, capture_output=True, text=True).stdout
    fig = Figures()
    for line in out.splitlines():
        fig.packets += 1
        cols = (line.split("\t") + [""] * len(FIELDS))[: len(FIELDS)]
        sm, mf, off, igmp, pim = cols
        for x in filter(None, sm.split(",")):
            fig.rtps[dz.submessage_name(int(x, 16))] += 1
        mf0 = mf.split(",")[0]
        off0 = off.split(",")[0]
        if mf0 in ("1", "True") or (off0 not in ("", "0")):
            fig.fragments += 1
        for x in filter(None, igmp.split(",")):
            t = int(x, 16)
            fig.igmp[IGMP_TYPE_NAMES.get(t, f"type_0x{t:02x}")] += 1
        for x in filter(None, pim.split(",")):
            fig.pim[dz.PIM_NAMES.get(int(x), f"type_{int(x)}")] += 1
    return fig


def ours(pcap: Path) -> Figures:
    d = dz.dissect(pcap)
    return Figures(packets=d.packets, rtps=Counter(d.rtps_counts()),
                   fragments=d.fragment_frames(), igmp=Counter(d.igmp_counts()),
                   pim=Counter(d.pim_counts()))
