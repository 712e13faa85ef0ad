"""Build figures: lan build+teardown time (4 and 150 hosts, both switch kinds) and routed
convergence time (run as root).

    .venv/bin/python tests/bench/bench_build.py [--repeat 3]

Prints, per measurement, the median over the repetitions and, as the reference run in the
same invocation, the time to start and stop the same number of bare Mininet nodes (no
links, no switch): the ratio shows what the topology adds on top of namespace creation.
"""

from __future__ import annotations

import argparse
import statistics
import time

import topologies


def lan_build_teardown() -> float:
    spec = topologies.resolve("lan", {"hosts": 4, "snooping": "off"})
    t = time.monotonic()
    with topologies.build(spec):
        pass
    return time.monotonic() - t


def big_lan(switch: str, hosts: int = 150) -> tuple[float, float]:
    """(build, teardown) seconds of a `hosts`-host LAN, snooping and querier on."""
    spec = topologies.resolve("lan", {"hosts": hosts, "switch": switch, "snooping": "on",
                                      "querier": "on"})
    t0 = time.monotonic()
    ctx = topologies.build(spec)
    ctx.__enter__()
    t1 = time.monotonic()
    ctx.__exit__(None, None, None)
    return t1 - t0, time.monotonic() - t1


def bare_nodes(n: int) -> float:
    """Reference: start and stop `n` Mininet node shells, recorded in a ledger."""
    from mininet.node import Node

    from mcastlab.ledger import Ledger

    led = Ledger.create()
    t = time.monotonic()
    nodes = []
    for i in range(n):
        node = Node(f"{led.tag}b{i}", inNamespace=True)
        led.record_proc(node.pid, node.name, "shell")
        nodes.append(node)
    led.release()
    for node in nodes:
        node.shell.wait(timeout=5)
    return time.monotonic() - t


def routed_converge() -> tuple[float, float, float]:
    """4 routers in a line, 5 hosts each (20 hosts), pimd: (build, converge, teardown) s."""
    spec = topologies.resolve("routed", {"routers": 4, "hosts": 5})
    t0 = time.monotonic()
    ctx = topologies.build(spec)
    net = ctx.__enter__()
    try:
        t1 = time.monotonic()
        net.wait_converged(120)
        t2 = time.monotonic()
    finally:
        ctx.__exit__(None, None, None)
    return t1 - t0, t2 - t1, time.monotonic() - t2


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    lan = [lan_build_teardown() for _ in range(args.repeat)]
    ref = [bare_nodes(5) for _ in range(args.repeat)]
    m_lan, m_ref = statistics.median(lan), statistics.median(ref)
    print(f"lan 4 hosts build+teardown: median {m_lan:.2f} s "
          f"(runs {', '.join(f'{x:.2f}' for x in lan)}); reference 5 bare nodes "
          f"{m_ref:.2f} s; ratio {m_lan / m_ref:.1f}")
    ref150 = [bare_nodes(151) for _ in range(args.repeat)]  # 150 hosts + the switch
    m_ref150 = statistics.median(ref150)
    for switch in ("linuxbridge", "ovs"):
        runs = [big_lan(switch) for _ in range(args.repeat)]
        b = statistics.median(r[0] for r in runs)
        d = statistics.median(r[1] for r in runs)
        print(f"lan 150 hosts on {switch} (snooping, querier): build median {b:.2f} s, "
              f"teardown {d:.2f} s (builds {', '.join(f'{r[0]:.2f}' for r in runs)}); "
              f"reference 151 bare nodes {m_ref150:.2f} s; ratio {(b + d) / m_ref150:.1f}")
    build, conv, down = routed_converge()
    print(f"routed 4 routers x 20 hosts (pimd, static RP): build {build:.2f} s, "
          f"converged after {conv:.2f} s more, teardown {down:.2f} s")


if __name__ == "__main__":
    main()
