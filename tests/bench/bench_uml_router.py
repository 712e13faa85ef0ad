"""Forwarding capacity of a user-mode router against the raw veth path (run as root).

    .venv/bin/python tests/bench/bench_uml_router.py [SECONDS]      (default 3 s per rate)

One network (tests/helpers/router_load.py): h1 sends 100-byte multicast; two user-mode
routers (router_kernel = "uml", topologies/uml.py) forward it by a static (S,G) route to the
far segment, while s1's Linux bridge floods the same datagrams to h2 on the sender's own
segment (the raw veth path, no router: the reference of this invocation). For each offered
rate, paced and then as fast as the sender goes, it prints the packets per second each point
passed on, what r1 forwarded per offered packet, the bridge path's, their ratio, and the
routers' own drop share (taps' tx_dropped plus their kernels' backlog drops, the fidelity
monitor's `router_drop_share`). A user-mode router forwards one outgoing interface here;
its capacity is the highest rate it forwarded with a drop share of at most 0.1%.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import topologies
from mcastlab import paths

sys.path.insert(0, str(paths.REPO_ROOT))  # run as a script: tests/ importable
from tests.helpers import router_load

RATES = (5_000, 10_000, 20_000, 30_000, 40_000, 0)  # 0: as fast as the sender goes


def main() -> None:
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0
    spec = topologies.resolve("routed", router_load.PARAMS)
    with tempfile.TemporaryDirectory(prefix="bench-uml-") as tmp, \
            topologies.build(spec, workdir=Path(tmp)) as net:
        net.wait_converged(90)
        booted = ", ".join(f"{r} booted in {u.booted_s} s" for r, u in net.uml.items())
        print(f"user-mode routers: {booted}")
        print(f"{'offered/s':>10} {'sent/s':>8} {'via r1/s':>9} {'via r2/s':>9} {'bridge/s':>9} "
              f"{'r1/sent':>8} {'bridge/sent':>11} {'r1/bridge':>9} {'r1 drops':>9}")
        capacity = 0
        for rate in RATES:
            load = router_load.blast(net, rate, seconds)
            pps, pk = load["pps"], load["packets"]
            r1 = load["routers"]["r1"]
            share = r1["drop_share"]
            if share is not None and share <= 0.001:
                capacity = max(capacity, pps["via_r1"])
            print(f"{rate or 'unpaced':>10} {pps['sent']:>8} {pps['via_r1']:>9} "
                  f"{pps['via_r2']:>9} {pps['bridge_only']:>9} {pk['via_r1'] / pk['sent']:>8.3f} "
                  f"{pk['bridge_only'] / pk['sent']:>11.3f} "
                  f"{pk['via_r1'] / max(1, pk['bridge_only']):>9.3f} "
                  f"{'?' if share is None else f'{share:.2%}':>9}")
        print(f"capacity of one user-mode router (drop share <= 0.1%): {capacity} packets/s "
              "of 100-byte multicast, one outgoing interface")


if __name__ == "__main__":
    main()
