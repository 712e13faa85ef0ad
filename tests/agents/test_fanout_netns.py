"""Host socket fan-out, measured and removed.

::

    ns h0 (sender)                     ns h1 (N = 8 receivers, all bound to PORT)
      K datagrams to G:PORT  --->  bridge  --->  r0 joined G
                                                 r1..r7 joined G2 (like DDS publishers: on
                                                 the port, but not in the topic's group)
                                                 r7 also has a tiny receive buffer (drops)

With the kernel's default ``IP_MULTICAST_ALL = 1`` every socket bound to PORT gets a copy of
each datagram to G, because some socket of h1 joined G: N socket deliveries per datagram
(r7 drops most of its copies at its full buffer: deliveries = read + dropped). With the
preload shim (perftest-wrappers/mcastall, ``IP_MULTICAST_ALL = 0``) only r0, the socket
that joined G, gets them: 1 per datagram. Counted three ways: h1's kernel UDP counters
(``InDatagrams + RcvbufErrors`` delta / K), the receivers' own reads plus their sockets'
``drops`` in ``/proc/net/udp``, and the fan-out factor the runner records
(experiments.sockstats.fanout, per datagram arriving at the host).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from experiments import sockstats
from mcastlab import paths
from tests.helpers.netlab import NetLab
from topologies.net import wait_for

N = 8
K = 200
PORT = 7401  # Cyclone's default data multicast port, domain 0
GROUP = "239.255.1.1"  # Perftest's Throughput group
OTHER = "239.255.1.100"  # Perftest's Announcement group (what a publisher reads)
TINY_RCVBUF = 1  # the kernel raises it to its minimum (~2.3 KB): a few datagrams fit
RECEIVER = str(Path(__file__).resolve().parents[1] / "helpers" / "fanout_receiver.py")


def _snmp(lab: NetLab, i: int) -> dict[str, dict[str, int]]:
    p = lab.run(i, ["cat", "/proc/net/snmp"])
    assert p.returncode == 0, p.stderr
    return sockstats.parse_snmp(p.stdout)


def _ask(proc: subprocess.Popen[Any], line: str, expect: str) -> int:
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(line + "\n")
    proc.stdin.flush()
    got = proc.stdout.readline().split()
    assert got[:1] == [expect], (line, got, proc.stderr.read() if proc.poll() is not None
                                 and proc.stderr else "")
    return int(got[1])


def _measure(lab: NetLab, shim: bool) -> dict[str, Any]:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    if shim:
        env |= {"LD_PRELOAD": str(paths.MCASTALL_SHIM), "MCASTLAB_MCASTALL_LOG": "1"}
    procs = []
    for i in range(N):
        group = GROUP if i == 0 else OTHER
        rcvbuf = TINY_RCVBUF if i == N - 1 else 0
        procs.append(lab.popen(1, [sys.executable, RECEIVER, str(PORT), group, lab.ip(1),
                                   str(rcvbuf)], stdin=subprocess.PIPE, env=env))
    inode_of: dict[int, int] = {}
    for i, p in enumerate(procs):
        assert p.stdout is not None
        line = p.stdout.readline().split()
        assert line[:1] == ["ready"], (line, p.stderr.read() if p.stderr else "")
        inode_of[int(line[1])] = i
        assert int(line[1]) in sockstats.socket_inodes(p.pid), "inode -> pid map"
    before = _snmp(lab, 1)
    send = (f"import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); "
            f"s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, "
            f"socket.inet_aton('{lab.ip(0)}'))\n"
            f"for k in range({K}): s.sendto(b'x' * 64, ('{GROUP}', {PORT}))")
    sent = lab.run(0, [sys.executable, "-c", send])
    assert sent.returncode == 0, sent.stderr
    # r0 reading all K means h1 handled all K; Ip InDelivers is counted after UDP queued
    # a datagram on every socket, so once it reached K every copy is queued or dropped.
    assert _ask(procs[0], f"wait {K}", "got") == K
    assert wait_for(lambda: sockstats.fanout(before, _snmp(lab, 1))["udp_arrived"] >= K, 10)
    # Per-socket evidence before anything is read: queued bytes and drops per socket.
    udp = sockstats.parse_proc_net_udp(Path(f"/proc/{procs[1].pid}/net/udp").read_text())
    mine = {s.inode: s for s in udp if s.inode in inode_of}
    assert len(mine) == N, (mine, inode_of)
    reads = [K] + [_ask(p, "drain", "count") for p in procs[1:]]
    after = _snmp(lab, 1)
    for p in procs:
        assert p.stdin is not None
        p.stdin.close()
        p.wait(timeout=10)
    logs = [p.stderr.read() if p.stderr else "" for p in procs]
    drops = [mine[ino].drops for ino in sorted(mine, key=inode_of.__getitem__)]
    return {"reads": reads, "drops": drops, "before": before, "after": after, "logs": logs,
            "queued": [mine[ino].rx_queue for ino in sorted(mine, key=inode_of.__getitem__)]}


def test_fanout_is_n_by_default_and_1_with_the_shim(lab2: NetLab) -> None:
    if not paths.MCASTALL_SHIM.is_file():
        pytest.fail(f"{paths.MCASTALL_SHIM} is missing: run ./setup.sh")
    figures = {}
    for shim in (False, True):
        m = _measure(lab2, shim)
        d = {k: m["after"]["Udp"][k] - m["before"]["Udp"][k]
             for k in ("InDatagrams", "RcvbufErrors")}
        kernel = (d["InDatagrams"] + d["RcvbufErrors"]) / K
        own = (sum(m["reads"]) + sum(m["drops"])) / K
        host = sockstats.fanout(m["before"], m["after"])
        figures["shim" if shim else "default"] = (kernel, own, host["factor"])
        print(f"\nfan-out, N={N} K={K}, {'shim (IP_MULTICAST_ALL=0)' if shim else 'default'}: "
              f"kernel (InDatagrams+RcvbufErrors)/K = {kernel:g}, receivers (reads+drops)/K "
              f"= {own:g}, host factor {host['factor']} ({host['socket_deliveries']} "
              f"deliveries / {host['udp_arrived']} arrived); reads {m['reads']}, "
              f"per-socket drops {m['drops']}")
        if shim:
            assert kernel == 1 and own == 1, figures
            assert m["reads"] == [K] + [0] * (N - 1) and sum(m["drops"]) == 0, m
            assert all("mcastlab-mcastall: active" in log for log in m["logs"]), m["logs"]
        else:
            assert kernel == N and own == N, figures
            assert m["reads"][1:-1] == [K] * (N - 2), m
            # the tiny buffer: a few datagrams queued, the rest dropped, counted per socket
            assert m["drops"][-1] > 0 and m["reads"][-1] + m["drops"][-1] == K, m
            assert d["RcvbufErrors"] == m["drops"][-1], (d, m["drops"])
            assert not any("mcastall" in log for log in m["logs"]), m["logs"]
        # IGMP reports reaching h1 are counted as arrivals (sockstats.fanout): at most a
        # few per measurement, so the host factor is the per-datagram figure or just below.
        assert host["udp_arrived"] <= K + 4, host
        assert kernel * K / (K + 4) <= host["factor"] <= kernel, (host, figures)
