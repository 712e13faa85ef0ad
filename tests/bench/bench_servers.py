"""What crossing emulated servers costs an agent (run as root).

    .venv/bin/python tests/bench/bench_servers.py [SECONDS [REPEAT]] [--cluster]
                                                      (default 10 s, 3)

One network, built by topologies/ as a scenario would build it: `lan`, 3 hosts,
`emulated_servers = 2` (topologies/servers.py), so h1 (publisher) and h3 are on srv1 with
the switch, h2 on srv2 behind a VXLAN tunnel; every interface has the tunnels' MTU (1450),
so both paths carry the same datagrams. The native agent (Cyclone DDS), 1 -> 1, reliable,
100 B, as perftest-wrappers/bench.sh: the subscriber's throughput and the publisher's
median one-way latency (-latencyTest), h1 -> h3 (within srv1, the reference run of this
invocation) and h1 -> h2 (across the tunnel), REPEAT times each, alternating (1 -> 1 runs
on 2 cores vary by up to 2x from run to run with where the scheduler puts the two
processes); prints the medians, their across/within ratios and what the
underlay carried. Both servers are namespaces of this machine: this is the encapsulation
and its extra hop, not a physical network between machines. Run it on a quiet machine.

With ``--cluster`` the same network is built over two servers controlled over ssh
(``[cluster]``, topologies/cluster.py): this machine and a second server in its own
namespaces with its own sshd (tests/helpers/second_server.py); h2 and its agent run there,
its output comes back over ssh, the tunnel's ends are in the two servers' root namespaces.
"""

from __future__ import annotations

import contextlib
import functools
import statistics
import subprocess
import sys

import topologies
from experiments import perftest_output
from mcastlab import paths, testbed

BASE = ["-dataLen", "100", "-noPrintConfig"]


def _pair(net: testbed.Testbed, pub: str, sub: str, secs: int, latency: bool) -> float:
    """One measurement: the subscriber's Avg Samples/s, or the publisher's median latency."""
    agent = str(paths.NATIVE_AGENT)
    s = net.popen(sub, [agent, "-sub", "-nic", net.host_ip(sub), *BASE],
                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    extra = ["-latencyTest", "-noPrintIntervals"] if latency else []
    p = net.run(pub, [agent, "-pub", "-nic", net.host_ip(pub), *BASE, *extra,
                      "-executionTime", str(secs)], timeout=secs + 60)
    sub_out, _ = s.communicate(timeout=60)
    if p.returncode != 0:
        raise RuntimeError(f"publisher on {pub} exited {p.returncode}: {p.stderr[-500:]}")
    out = perftest_output.parse_perftest_output(p.stdout if latency else sub_out)
    return float(out.summary["50% (us)" if latency else "Ave Samples/s"])


def _link_counters(link: str) -> dict[str, dict[str, int]]:
    """The second server's underlay link, seen from this machine's root namespace."""
    base = f"/sys/class/net/{link}/statistics"
    return {"srv1": {k: int(open(f"{base}/{k}").read()) for k in ("tx_packets", "rx_packets")}}


def main() -> None:
    args = [a for a in sys.argv[1:] if a != "--cluster"]
    secs = int(args[0]) if args else 10
    repeat = int(args[1]) if len(args) > 1 else 3
    with contextlib.ExitStack() as stack:
        if "--cluster" in sys.argv:
            sys.path.insert(0, str(paths.REPO_ROOT))  # run as a script: tests/ importable
            from tests.helpers.second_server import SecondServer

            srv = stack.enter_context(SecondServer())
            spec = topologies.resolve("lan", {"hosts": 3, "snooping": "off"})
            net = stack.enter_context(topologies.build(spec, cluster=srv.config()))
            placed = net.describe()["cluster"]["placement"]
            counters = functools.partial(_link_counters, srv.link)
        else:
            spec = topologies.resolve("lan", {"hosts": 3, "snooping": "off",
                                              "emulated_servers": 2})
            net = stack.enter_context(topologies.build(spec))
            placed = net.describe()["emulated_servers"]["placement"]
            counters = net.servers.underlay_counters
        net.wait_converged(60)
        print(f"bench_servers: {secs} s per measurement; placement {placed}", file=sys.stderr)
        before = counters()
        got: dict[tuple[str, str], list[float]] = {}
        for _ in range(repeat):
            for kind in ("throughput", "latency"):
                for path, sub in (("within", "h3"), ("across", "h2")):
                    got.setdefault((path, kind), []).append(
                        _pair(net, "h1", sub, secs, kind == "latency"))
        after = counters()
    med = {k: statistics.median(v) for k, v in got.items()}
    tp_in, tp_out = med[("within", "throughput")], med[("across", "throughput")]
    lat_in, lat_out = med[("within", "latency")], med[("across", "latency")]
    runs = {k: ", ".join(f"{x:,.0f}" for x in v) for k, v in got.items()}
    print(f"throughput 1->1 reliable 100 B, median of {repeat}:  within {tp_in:,.0f} "
          f"samples/s ({runs[('within', 'throughput')]})  across {tp_out:,.0f} samples/s "
          f"({runs[('across', 'throughput')]})  ratio across/within {tp_out / tp_in:.2f}")
    print(f"latency one-way median 100 B, median of {repeat}:    within {lat_in:g} us "
          f"({runs[('within', 'latency')]})  across {lat_out:g} us "
          f"({runs[('across', 'latency')]})  ratio across/within {lat_out / lat_in:.2f}")
    sent = {k: after["srv1"][k] - before["srv1"][k] for k in ("tx_packets", "rx_packets")}
    print(f"underlay of srv1 during the measurements: {sent['tx_packets']:,} packets sent, "
          f"{sent['rx_packets']:,} received")


if __name__ == "__main__":
    main()
