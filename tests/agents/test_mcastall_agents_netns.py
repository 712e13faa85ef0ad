"""The agents under the IP_MULTICAST_ALL=0 shim (perftest-wrappers/mcastall), once per agent.

::

    ns h0: pub0, sub1                ns h1: sub0, pub1
       |                                |
       +------------ bridge ------------+        (-multicast: Throughput to 239.255.1.1)

Two publishers and two subscribers, ``-multicast``, reliable, 3 s (Cyclone sends to a
single reader by unicast even in ``-multicast`` mode: with one subscriber h1's factor was
1.001 without the shim); run twice, without and with the shim. Both runs must exchange
every sample (no loss). The shim run's agents each
log that the shim was active on their sockets and none failed. h1's kernel counters give
the host fan-out factor (experiments.sockstats.fanout): pub1 binds the data port but reads
no Throughput. The native agent (Cyclone: one data multicast port for all topics) then
takes a copy of every Throughput datagram, from pub0 and its own looped back, unless the
shim is there; the Fast DDS agent puts each topic on its own port (its config.cpp), so
pub1 never binds the Throughput port and its factor stays near 1 either way.
"""

from __future__ import annotations

import os
import re

import pytest

from experiments import sockstats
from experiments.perftest_output import parse_perftest_output
from mcastlab import paths
from tests.helpers.agentkinds import AgentKind
from tests.helpers.agentrun import describe, run_agents
from tests.helpers.netlab import NetLab

AGENT_KINDS = ("native", "fastdds")
EXEC_S = 3


def _snmp(lab: NetLab, i: int) -> dict[str, dict[str, int]]:
    p = lab.run(i, ["cat", "/proc/net/snmp"])
    assert p.returncode == 0, p.stderr
    return sockstats.parse_snmp(p.stdout)


def test_multicast_exchange_with_the_shim_and_its_fanout(lab2: NetLab, agent: str,
                                                         agent_kind: AgentKind) -> None:
    if not paths.MCASTALL_SHIM.is_file():
        pytest.fail(f"{paths.MCASTALL_SHIM} is missing: run ./setup.sh")
    factors = {}
    for shim in (False, True):
        env = dict(os.environ)
        if shim:
            env |= {"LD_PRELOAD": str(paths.MCASTALL_SHIM), "MCASTLAB_MCASTALL_LOG": "1"}
        before = _snmp(lab2, 1)
        res = run_agents(lab2, agent, 2, 2, ["-dataLen", "100", "-multicast"],
                         pub_args=["-executionTime", str(EXEC_S)], timeout=EXEC_S + 30, env=env)
        host = sockstats.fanout(before, _snmp(lab2, 1))
        diag = describe(res)
        assert all(r.rc == 0 for r in res), diag
        sent = sum(r.sent() for r in res if r.role == "pub")
        sub = parse_perftest_output(next(r for r in res if r.role == "sub").stdout)
        assert sub.summary["Lost Samples"] == 0 and sub.summary["Total Samples"] == sent, diag
        for r in res:
            if shim:
                assert "mcastlab-mcastall: active:" in r.stderr, r.stderr[-2000:]
                m = re.search(r"IP_MULTICAST_ALL=0 on (\d+) UDP sockets, (\d+) failed", r.stderr)
                assert m and int(m.group(1)) > 0 and m.group(2) == "0", r.stderr[-2000:]
                print(f"\n{agent_kind.name}: {r.name}: {m.group(0)}")
            else:
                assert "mcastall" not in r.stderr
        factors[shim] = host["factor"]
        print(f"\n{agent_kind.name} {'shim' if shim else 'default'}: h1 fan-out factor "
              f"{host['factor']} ({host['socket_deliveries']} socket deliveries / "
              f"{host['udp_arrived']} UDP datagrams arrived), {sent} samples")
    assert factors[True] is not None and factors[False] is not None
    if agent_kind.name == "fastdds":
        assert factors[True] <= factors[False] + 0.1, factors
    else:
        # With the default pub1 takes a copy of every Throughput datagram too. h1 also gets
        # unicast heartbeats and acknowledgements, one delivery each, more of them the
        # busier the machine (Perftest's 10 ms heartbeats, halved as windows fill): the
        # factor without the shim measured 1.74 on a lightly loaded machine, 1.48 under
        # load, so the bound is relative to the shim's run.
        assert factors[False] >= factors[True] + 0.3 and factors[True] <= 1.25, factors
