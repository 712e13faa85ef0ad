"""A user-mode router that cannot keep up makes the run unfaithful, with that reason; one that
keeps up does not. The fidelity monitor the runner uses, around real load.

   h1 (sender) h2                 h3 h4
     |         |                   |  |
    [     s1     ]                [ s2 ]          smcroute (S,G) h1 -> 239.1.2.3
           |                         |
          r1 (uml) -------------- r2 (uml)        router_kernel = "uml"

Paced at 500 datagrams/s for 3 s every one of the 1,500 crosses both routers and
`router_drop_share` is 0. Unpaced, h1's sender (100-byte datagrams, as fast as Python sends
them on 2 cores) offers r1 more than its kernel takes in: its taps' queues overflow and
the run is host-bound on `router_drop_share`.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

import topologies
from experiments import fidelity
from tests.helpers import kernel_features, router_load

pytestmark = [pytest.mark.timeout(400), kernel_features.needs("uml")]


def _judged(net: object, tmp_path: Path, rate: float, seconds: float) -> tuple[dict, dict]:
    mon = fidelity.Monitor(net, [], tmp_path, fidelity.Thresholds())  # type: ignore[arg-type]
    t0 = time.monotonic()
    mon.open_window()
    load = router_load.blast(net, rate, seconds)
    mon.close_window()
    fid = mon.result([], t0, {"publishers": 1, "pub_rate": 0, "execution_time": seconds},
                     tmp_path, None)
    return load, fid


def test_a_router_past_its_capacity_makes_the_run_unfaithful(tmp_path: Path) -> None:
    spec = topologies.resolve("routed", router_load.PARAMS)
    with topologies.build(spec, workdir=tmp_path) as net:
        net.wait_converged(90)
        calm, calm_fid = _judged(net, tmp_path, 500, 3)
        busy, busy_fid = _judged(net, tmp_path, 0, 3)

    # Paced: everything sent crossed both routers (and the bridge to h2), nothing dropped.
    sent = calm["packets"]["sent"]
    assert sent >= 1500, calm
    assert calm["packets"]["via_r2"] >= 1500, calm
    assert calm_fid["metrics"]["router_drop_share"] == 0, calm_fid["routers"]
    assert calm_fid["bound"] == "network", calm_fid["reasons"]

    # Unpaced: r1 could not take in all it was offered, and the monitor says so.
    r1 = busy_fid["routers"]["r1"]
    assert r1["drop_share"] > 0.001, (busy, r1)
    assert busy["packets"]["via_r1"] < busy["packets"]["sent"], busy
    assert busy_fid["bound"] == "host"
    (reason,) = [r for r in busy_fid["reasons"] if "user-mode router" in r]
    assert reason.startswith("packets a user-mode router could not take in"), reason
    # the record names the check by its id: analysis reads it as the emulator's failure
    assert "emulator.router_drop_share" in busy_fid["failed"], busy_fid["failed"]
    assert calm_fid["failed"] == [], calm_fid["failed"]
