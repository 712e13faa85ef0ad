"""The fidelity verdict's logic on known counters (no root): hosts of fixed capacity are
judged on the emulator, their saturation is reported; unlimited hosts keep their criteria.

The counters below are shaped like the ones measured here (cgroup v1 CPU controller with
cgroup v2 beside it): a saturated 0.4-core host is throttled in nearly every 10 ms period
and used its quota; three 0.9-core hosts on 2 CPUs were never throttled and got 0.72 of
their quota, their tasks waiting for a CPU 28% of the time.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from types import SimpleNamespace

import pytest

import topologies
from experiments import fidelity
from experiments.scenario import ScenarioError, from_dict
from topologies import cpulimit
from topologies.cpulimit import Counters, window_shares

ZERO = Counters(0, 0, 0.0, 0.0, 0.0, 0.0)


def test_a_saturated_host_that_got_its_quota_is_not_starved() -> None:
    # 10 s, 1000 periods, throttled in 990; 0.4 core used; none of its tasks ran 62% of
    # the time, nearly all of it throttled
    end = Counters(1000, 990, 6.0e6, 4.0e6, 9.0e6, 6.2e6)
    s = window_shares(ZERO, end, 0.4, 10.0)
    assert s["allocation_share"] == pytest.approx(1.0)
    assert s["throttled_share"] == pytest.approx(0.99)
    assert s["starved_share"] is not None and s["starved_share"] < 0.01
    assert s["shortfall_share"] == 0.0


def test_an_oversubscribed_host_is_starved() -> None:
    # idle 7.2% of the window (1 - 0.648 core - 0.28 waiting): over the other 92.8% it
    # got 0.72 / 0.928 of its allocation
    end = Counters(1000, 0, 0.0, 0.72 * 0.9 * 10e6, 2.8e6, 2.8e6)
    s = window_shares(ZERO, end, 0.9, 10.0)
    assert s["allocation_share"] == pytest.approx(0.72)
    assert s["starved_share"] == pytest.approx(0.28)
    assert s["idle_share"] == pytest.approx(0.072)
    assert s["shortfall_share"] == pytest.approx(1 - 0.72 / 0.928, abs=1e-4)


def test_a_busy_host_is_judged_over_the_time_it_had_work() -> None:
    # measured at 10x10 on 4 x 0.4 core: idle 11% of the window, throttled in most periods,
    # waiting for a CPU outside them ~2%; 90% of the allocation over the whole window is
    # all of it over the 89% in which the host had work
    end = Counters(1000, 900, 5.0e6, 0.36 * 10e6, 5.3e6, 5.3e6)
    s = window_shares(ZERO, end, 0.4, 10.0)
    assert s["allocation_share"] == pytest.approx(0.9)
    assert s["idle_share"] == pytest.approx(0.11)
    assert s["shortfall_share"] == 0.0
    # the same idle time with a host that waited for a CPU instead of running: short
    starved = Counters(1000, 100, 0.5e6, 0.28 * 10e6, 6.2e6, 6.2e6)
    s = window_shares(ZERO, starved, 0.4, 10.0)
    assert s["idle_share"] == pytest.approx(0.1)
    assert s["shortfall_share"] == pytest.approx(1 - 0.7 / 0.9, abs=1e-4)


def test_a_lightly_loaded_host_that_waits_at_wake_ups_is_not_short() -> None:
    # measured: a host with one subscriber beside saturated ones, 0.05 core used, waiting
    # for a CPU at its wake-ups 5% of the time, idle the rest
    end = Counters(1000, 5, 1e4, 0.05 * 10e6, 0.5e6, 0.5e6)
    s = window_shares(ZERO, end, 0.4, 10.0)
    assert s["starved_share"] == pytest.approx(0.05, abs=0.001)
    assert s["idle_share"] is not None and s["idle_share"] > 0.8
    assert s["shortfall_share"] == 0.0


def test_stolen_time_is_not_the_hosts_idle_time(tmp_path: Path) -> None:
    """A host pinned to CPU 1 used 0.3 of its 0.4 core and waited 54% of the window: with
    nothing to run for the other 16% it is not judged. When the hypervisor took 10% of
    CPU 1, 10 of those 16 points were stolen, not idle: the host is busy and short. Steal
    on the other CPU is not its."""
    end = Counters(1000, 500, 3.0e6, 0.3 * 10e6, 5.4e6, 5.4e6)
    assert window_shares(ZERO, end, 0.4, 10.0)["shortfall_share"] == 0.0
    limits = SimpleNamespace(hosts={"h1": []}, cores={"h1": 0.4}, cpus={"h1": 1})
    mon = fidelity.Monitor(None, ["h1"], tmp_path, fidelity.Thresholds(), cpu=limits,  # type: ignore[arg-type]
                           plane_node="s1")
    mon._cpu0, mon._cpu1 = {"h1": ZERO}, {"h1": end}
    for steal, short in (({"cpu0": 0.1, "cpu1": 0.0}, 0.0),
                         ({"cpu0": 0.0, "cpu1": 0.1}, round(1 - 0.75 / 0.94, 4))):
        metrics: dict[str, float | None] = {}
        per_host: dict[str, dict[str, float | None]] = {}
        mon._limited_metrics(metrics, per_host, 10.0, steal)
        assert metrics["shortfall_share"] == short, steal
        assert per_host["h1"]["idle_share"] == pytest.approx(0.16 - steal["cpu1"])
    # unpinned: the mean over the machine's CPUs
    assert fidelity.host_steal("h2", {"h1": 1}, {"cpu0": 0.1, "cpu1": 0.0}) == 0.05


def test_no_cgroup_v2_means_not_measured() -> None:
    end = Counters(1000, 500, 3.0e6, None, None, None)
    s = window_shares(ZERO, end, 0.4, 10.0)
    assert s["throttled_share"] == pytest.approx(0.5)
    assert s["starved_share"] is None and s["allocation_share"] is None
    assert s["shortfall_share"] is None


def test_saturation_is_reported_not_judged() -> None:
    m = {"throttled_share": 0.98, "socket_drop_share": 0.0104, "wakeup_p99_us": 12000.0,
         "shortfall_share": 0.01, "plane_wakeup_p99_us": 900.0, "softnet_drop_share": 0.0,
         "cpu_pressure_some_share": 1.0}
    bound, emulator, saturation = fidelity.judge_limited(m, fidelity.Thresholds())
    assert bound == "saturated" and emulator == []
    assert len(saturation) == 3  # throttling, socket drops, late timers inside
    # the same metrics on unlimited hosts: the emulator's own machine was overloaded
    assert fidelity.judge(m, fidelity.Thresholds())[0] == "host"
    text = fidelity.saturation_text(0.4, m)
    assert text.startswith("hosts saturated at 0.4 core: throttled in 98% of CFS periods")


@pytest.mark.parametrize(("key", "value", "words"), [
    ("shortfall_share", 0.2, "less than its allocation"),
    ("plane_wakeup_p99_us", 20000.0, "outside the hosts"),
    ("softnet_drop_share", 0.01, "kernel backlogs"),
])
def test_an_unfaithful_emulator_is_host_bound(key: str, value: float, words: str) -> None:
    m = {"throttled_share": 0.2, "shortfall_share": 0.0, "plane_wakeup_p99_us": 500.0,
         "softnet_drop_share": 0.0, key: value}
    bound, emulator, saturation = fidelity.judge_limited(m, fidelity.Thresholds())
    assert bound == "host", emulator
    assert any(words in r for r in emulator), emulator
    assert saturation == []


def test_capacity_is_checked_before_building() -> None:
    assert cpulimit.capacity_problem(["h1", "h2", "h3", "h4"], 0.4, 2, pin=False) is None
    why = cpulimit.capacity_problem(["h1", "h2", "h3"], 0.9, 2, pin=False)
    assert why is not None and "2.7 cores" in why and "0.4" in why
    # pinned: two hosts per CPU of 2, each CPU keeping 0.2 for the emulator
    assert cpulimit.capacity_problem(["h1", "h2", "h3", "h4"], 0.4, 2, pin=True) is None
    assert "pinned" in (cpulimit.capacity_problem(["h1", "h2", "h3", "h4"], 0.45, 2,
                                                   pin=True) or "")
    assert "cpu_pin" in (cpulimit.capacity_problem(["h1"], 1.5, 2, pin=True) or "")
    assert "1000 µs" in (cpulimit.limits_problem(["h1"], 0.05, 10_000, False, 2) or "")
    assert cpulimit.limits_problem(["h1"], 0.05, 100_000, False, 2) is None
    # the last host's period (10 ms + 3 x 400 ms) past the kernel's longest, 1 s
    hosts = ["h1", "h2", "h3", "h4"]
    why = cpulimit.limits_problem(hosts, 0.4, 10_000, False, 2, step_us=400_000) or ""
    assert "h4 a period of 1210000" in why and "at most 330000" in why, why
    assert cpulimit.limits_problem(hosts, 0.4, 10_000, False, 2, step_us=250) is None
    spec = topologies.resolve("lan", {"hosts": 2, "cpu_period_step_us": 250})
    assert "cpu_period_step_us = 250 take effect only on CPU-limited hosts" in (
        cpulimit.spec_problem(spec) or "")


def test_latency_count_by_count() -> None:
    raw = {"campaign": {"name": "x"}, "topology": {"name": "lan"},
           "matrix": {"participants": [1, 75], "latency_count": [1000],
                      "latency_count_by_count": {"75": 13}}}
    m = from_dict(raw).matrix
    assert m.latency_count_of(75, 75, 1000) == 13 and m.latency_count_of(1, 1, 1000) == 1000
    bad = {**raw, "matrix": {**raw["matrix"], "latency_count": [10, 1000]}}
    with pytest.raises(ScenarioError, match="single latency_count"):
        from_dict(bad)
    bad = {**raw, "matrix": {**raw["matrix"], "latency_count_by_count": {"50": 13}}}
    with pytest.raises(ScenarioError, match="no count '50'"):
        from_dict(bad)


def test_a_short_measurement_window_is_a_warning() -> None:
    """CI's 75x75 run of 20 s: discovery spread over 19.2 s, 0.8 s of window."""
    w = fidelity.short_window_warning(0.8, 20)
    assert w is not None
    assert w.startswith("measurement window 0.8 s of a 20 s run")
    assert "completed discovery over 19.2 s" in w and "longer execution_time" in w
    # half the run and more, no run length or no window: nothing to warn about
    for window, secs in ((10.0, 20), (36.8, 40), (None, 20), (5.0, 0), (5.0, None)):
        assert fidelity.short_window_warning(window, secs) is None, (window, secs)


def test_steal_time_per_cpu_and_its_warning() -> None:
    """A 2-vCPU VM's pinned pilot: the hypervisor took 12% of CPU 0 and 1% of CPU 1."""
    a, b = {"cpu0": 1.0, "cpu1": 0.07}, {"cpu0": 2.2, "cpu1": 0.17}  # seconds of steal
    shares = fidelity.steal_shares(a, b, 10.0)
    assert shares == {"cpu0": 0.12, "cpu1": 0.01}
    w = fidelity.steal_warning(shares)
    assert w is not None and w.startswith("the hypervisor kept CPU 0 from this machine 12.0%")
    assert "CPU 1" not in w and "(steal time)" in w
    both = fidelity.steal_warning({"cpu0": 0.12, "cpu1": 0.08})
    assert both is not None and "CPU 0 12.0%, CPU 1 8.0%" in both
    assert fidelity.steal_warning({"cpu0": fidelity.STEAL_WARNING_SHARE, "cpu1": 0.0}) is None
    assert fidelity.steal_warning({}) is None


def test_steal_is_a_bound_only_when_asked() -> None:
    """Off by default (a warning); ``max_steal_share`` below 1 makes it the emulator's
    failure with CPU-limited hosts and a host-bound reason with unlimited ones."""
    limited = {"throttled_share": 0.98, "shortfall_share": 0.0, "steal_share": 0.107}
    assert fidelity.judge_limited(limited, fidelity.Thresholds())[0] == "saturated"
    assert fidelity.judge({"steal_share": 0.107}, fidelity.Thresholds()) == ("network", [])
    th = fidelity.Thresholds.from_dict({"max_steal_share": 0.02})
    bound, emulator, _ = fidelity.judge_limited(limited, th)
    assert bound == "host"
    assert emulator == ["CPU time the hypervisor took from this machine (steal, worst CPU): "
                        "10.7% (limit 2.0%)"]
    assert fidelity.judge({"steal_share": 0.107}, th)[0] == "host"
    assert fidelity.judge({"steal_share": 0.01}, th) == ("network", [])


def test_a_run_host_bound_for_steal_alone_is_told_apart() -> None:
    """What the runner takes again: host-bound with steal over ``max_steal_share`` and
    every other check within its limit, for either kind of host; never with the default
    (steal only a warning), nor when another check failed too."""
    th = fidelity.Thresholds.from_dict({"max_steal_share": 0.02})
    limited = {"throttled_share": 0.98, "shortfall_share": 0.0, "steal_share": 0.107}
    bound, emulator, saturation = fidelity.judge_limited(limited, th)
    fid = {"bound": bound, "metrics": limited, "thresholds": th.model_dump(),
           "emulator": {"reasons": emulator}, "saturation": saturation}
    assert fidelity.stolen_only(fid) == 0.107
    # the same with a starved host: the emulator failed as well, the run is a finding
    starved = limited | {"shortfall_share": 0.28}
    fid_starved = fid | {"metrics": starved}
    assert fidelity.judge_limited(starved, th)[0] == "host"
    assert fidelity.stolen_only(fid_starved) is None
    # unlimited hosts: steal alone, then steal with socket drops
    plain = {"steal_share": 0.05, "socket_drop_share": 0.0}
    assert fidelity.stolen_only({"bound": "host", "metrics": plain,
                                 "thresholds": th.model_dump()}) == 0.05
    dropped = plain | {"socket_drop_share": 0.2}
    assert fidelity.stolen_only({"bound": "host", "metrics": dropped,
                                 "thresholds": th.model_dump()}) is None
    # the default: steal is a warning, the run is not host-bound, nothing is taken again
    default = fidelity.Thresholds().model_dump()
    assert fidelity.stolen_only({"bound": "saturated", "metrics": limited,
                                 "thresholds": default, "emulator": {}}) is None
    assert fidelity.stolen_only({"bound": "network", "metrics": plain,
                                 "thresholds": default}) is None


def test_a_samplers_json_gives_lateness_and_wake_ups(tmp_path: Path) -> None:
    """cyclictest's JSON: p99 from the histogram, the maximum from cyclictest itself (the
    histogram stops at 100 ms), and how many times the timer woke; nothing gives NaN."""
    out = tmp_path / "wakeup_plane.json"
    out.write_text(json.dumps({"thread": {"0": {
        "histogram": {"10": 98, "20": 1, "500": 1}, "cycles": 100, "max": 250000}}}))
    assert fidelity.read_wakeup(out) == (20.0, 250000.0, 100)
    missing = fidelity.read_wakeup(tmp_path / "none.json")
    assert math.isnan(missing.p99_us) and math.isnan(missing.max_us) and missing.cycles == 0
