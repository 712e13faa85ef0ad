"""The agents' samples on the wire have RTI Perftest's TestData_t layout (28 octets of
overhead counted in -dataLen), seen by the project's own dissector (captures/dissect.py) in
a capture of a 1 -> 1 run on the publisher's link, once per agent:

    ns h0 (publisher) --[veth: tcpdump]-- Linux bridge --+-- ns h1 (subscriber)

Every DATA submessage of the publisher's Throughput writer (found by its topic in the
captured discovery) carries -dataLen + 4 octets of serialised payload (the 4-octet
encapsulation header), with and without batching, FINISHED included; before this layout
the agents' samples were 16 octets longer (a 44-octet header).
"""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path

import numpy as np
import pytest

from captures.dissect import dissect
from experiments.perftest_output import parse_perftest_output
from tests.helpers.agentkinds import AgentKind
from tests.helpers.agentrun import describe, pub_and_sub, run_agents
from tests.helpers.netlab import NetLab
from topologies.net import wait_for

AGENT_KINDS = ("native", "fastdds")
DATA = 0x15


def _text(p: Path) -> str:
    return p.read_text(errors="replace") if p.exists() else ""


@pytest.mark.parametrize(("data_len", "batching"),
                         [(100, "default"), (100, "off"), (1000, "default")])
def test_sample_size_on_the_wire_is_datalen(lab2: NetLab, agent: str, agent_kind: AgentKind,
                                            tmp_path: Path, data_len: int, batching: str) -> None:
    pcap, log = tmp_path / "pub.pcap", tmp_path / "tcpdump.log"
    with log.open("w") as lf:
        cap = lab2.popen_root(["tcpdump", "-i", f"pt{lab2.tag}v0", "-nn", "-s", "0", "-B", "16384",
                               "-w", str(pcap), "udp"], stdout=subprocess.DEVNULL, stderr=lf)
    assert wait_for(lambda: "listening on" in _text(log) or cap.poll() is not None, 10)
    assert cap.poll() is None, _text(log)
    args = ["-dataLen", str(data_len), "-latencyCount", "1000"]
    if batching == "off":
        args += ["-batchSize", "0"]
    res = run_agents(lab2, agent, 1, 1, args, pub_args=["-executionTime", "1"], timeout=25)
    cap.send_signal(signal.SIGINT)
    cap.wait(timeout=10)
    assert all(r.rc == 0 for r in res), describe(res)
    pub, sub = pub_and_sub(res)
    assert parse_perftest_output(sub.stdout).summary["Lost Samples"] == 0

    d = dissect(pcap)
    writers = [t for t in d.topics if t["topic"] == b"Throughput" and t["is_reader"] == 0]
    assert writers, f"no SEDP announcement of a Throughput writer captured ({d.rtps_counts()})"
    eids = {int.from_bytes(bytes(t["guid"][12:16]), "big") for t in writers}
    subs = d.subs[(d.subs["id"] == DATA) & np.isin(d.subs["writer_eid"], list(eids))
                  & (d.subs["quoted"] == 0)]
    # Every sample the publisher sent, and FINISHED, passed this link at least once (a few of
    # the last may still be in tcpdump's buffer at SIGINT: at least 90% of them).
    assert len(subs) >= 0.9 * (pub.sent() + 1), (len(subs), pub.sent())
    sizes = np.unique(subs["plen"])
    assert sizes.tolist() == [data_len + 4], (
        f"serialised Throughput samples of {sizes.tolist()} octets; expected -dataLen "
        f"{data_len} + the 4-octet encapsulation header")
