"""Known answers for hosts of fixed capacity (``cpu = C``) and for the fidelity monitor.

    h1 (publisher) --+
    h2 (subscriber) -+-- s1 (Linux bridge)
    h3 ------------- +      each host a cgroup of C cores (10 ms CFS period,
    h4 ------------- +      + 250 µs per host when stepped)

- **Isolation.** A CPU-bound host whose work stays in it, a 1 -> 1 from h1 to itself (the
  native agent, best effort, 100 B, unpaced) at 0.4 core, keeps its throughput within 5%
  when h2, h3 and h4 go from idle to saturated (busy loops beyond their quota): each host
  is a machine of its own. Measured: 0.995-1.015 in six runs. A 1 -> 1 across hosts
  (h1 -> h2, h3 and h4 the neighbours) is held to 15%: its sender's host pays for
  delivering to the reader (``test_a_sender_across_hosts_pays_for_waking_its_reader``).
- **Proportionality.** A CPU-bound 1 -> 1's throughput (h1 -> h2, best effort, both hosts
  given C) scales with C over 0.2-0.5: throughput per core stays within 10% of the mean.
  Measured: at most 2.9% off in six runs.
- **Oversubscription caught.** Quotas the machine cannot honour (3 hosts x 0.9 cores pinned
  on 2 CPUs: measured, the two sharing a CPU got 0.55 of their quota), and
  unlimited load beside honourable quotas (4 x 0.4 with two busy loops outside every
  host), are judged unfaithful: the monitor names the starved host; with the quotas
  honoured and the hosts saturated the run is faithful and ``saturated``.
- **Drops told by CPU.** Two hosts pinned to two CPUs, one of which never reads its
  socket: the fidelity record names the second CPU as the one whose hosts dropped.
- The wake-up sampler (cyclictest) reports inside every CPU-limited host.

How isolation and proportionality are measured: one continuous 1 -> 1 per comparison,
its condition changed every 0.5 s (each host's quota written in place, or the
neighbours' busy loops stopped and continued), the bytes the receiving host receives
counted over the last 0.4 s of each, each condition compared with the others of its
cycle, then the median over the cycles. Isolation is decided by the median's 95%
interval (order statistics), not by its value: cycles go on until the interval lies
inside the bound or wholly outside it, and one that still straddles it after 120 cycles
is a skip naming the noise. Runs built seconds apart on this machine differ
by more than what is compared: single 4 s runs spread by 7-14% with no steal, and within
one run the rate moved between levels 25-35% apart from one second to the next. Built a
network per run, the same known answers read up to 10.2% off (proportionality, 12 rounds
of 4 s runs) and 0.77-1.15 (isolation, 3 rounds). The hosts are pinned and their CFS
periods stepped by 250 µs, as the scaled presets make them. Best effort, because a
reliable 1 -> 1's rate follows its acknowledgements, not its CPU: per-cycle ratios
0.68-1.77 across hosts.

Every measurement is taken again while the hypervisor kept a CPU from this machine over
2% of its time (steal time); a test that gets no measurement under that in 3 attempts
is skipped, naming the steal: the known answers are about the emulator, not about
another tenant's load.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import pytest

import topologies
from experiments import fidelity
from mcastlab import paths, testbed
from tests.helpers import scaled_hosts as scaled
from topologies import cpulimit

pytestmark = [
    pytest.mark.timeout(600),
    pytest.mark.skipif(cpulimit.version() is None, reason="no cgroup CPU controller here"),
]

ISOLATION_CYCLES = 20  # of idle / saturated neighbours, 0.5 s each, before the first look
ISOLATION_LOOK_EVERY = 10  # cycles between looks at the median's interval after that
ISOLATION_MAX_CYCLES = 120  # 2 minutes: then an interval straddling the bound is a skip
PROPORTIONALITY_CYCLES = 24  # of 0.2 / 0.3 / 0.5 core, 0.5 s each
T = TypeVar("T")


def _lan(cores: float, hosts: int = 4, pin: bool = False, step_us: int = 0) -> Any:
    return topologies.resolve("lan", {"hosts": hosts, "cpu": cores, "cpu_pin": pin,
                                      "cpu_period_step_us": step_us})


def _ready(net: testbed.Testbed) -> Any:
    """The network once its ports forward: agents started the moment it is built lose their
    first discovery announcements and wait 28 s for the next ones (Cyclone's SPDP interval)."""
    net.wait_converged(timeout=30)
    return net


def _unstolen(measure: Callable[[], T], what: str) -> T:
    try:
        return scaled.unstolen(measure, what)
    except scaled.HypervisorBusy as e:
        pytest.skip(str(e))


def _agent() -> None:
    if not os.access(paths.NATIVE_AGENT, os.X_OK):
        pytest.fail(f"{paths.NATIVE_AGENT} is not built (run ./setup.sh)")


def _isolation(workdir: Path, sender: str, receiver: str, neighbours: list[str],
               bound: float) -> tuple[float, list[dict[str, float]]]:
    """Saturated over idle neighbours: the median over cycles of a 1 -> 1's throughput
    with the neighbours saturated over the same cycle's throughput with them idle.

    Cycles go on (20, then a look every 10, at most 120) until the median's 95% interval
    lies inside ``1 +- bound`` or wholly outside it; one that still straddles a side
    after 120 cycles is a skip naming the machine's noise, not a verdict either way."""
    def decided(cycles: list[dict[str, float]]) -> bool:
        return scaled.within(cycles, bound, ISOLATION_CYCLES, ISOLATION_LOOK_EVERY) is not None

    with topologies.build(_lan(0.4, pin=True, step_us=250), workdir=workdir) as net:
        _ready(net)
        cycles = _unstolen(partial(scaled.against_neighbours, net, workdir, sender, receiver,
                                   neighbours, ISOLATION_MAX_CYCLES, decided),
                           f"{sender} -> {receiver}, {', '.join(neighbours)} idle / saturated")
    ratios = [c["saturated"] / c["idle"] for c in cycles]
    ratio = scaled.saturated_over_idle(cycles)
    low, high = scaled.median_interval(ratios)
    print(f"isolation, {sender} -> {receiver} at 0.4 core: saturated / idle neighbours "
          f"({', '.join(neighbours)}), median of {len(cycles)} cycles {ratio:.3f} "
          f"(95% interval {low:.3f}-{high:.3f}); per cycle "
          + ", ".join(f"{r:.2f}" for r in ratios))
    if not decided(cycles):
        pytest.skip(f"{sender} -> {receiver}: after {len(cycles)} cycles the median "
                    f"saturated / idle ratio {ratio:.3f} has the 95% interval {low:.3f}-"
                    f"{high:.3f}, which straddles the {bound:.0%} bound: this machine's rate "
                    f"wanders too much from second to second (per-cycle ratios "
                    f"{min(ratios):.2f}-{max(ratios):.2f}, no steal) to tell")
    return ratio, cycles


def test_isolation_from_saturated_neighbours(workdir: Path) -> None:
    """A CPU-bound host whose work stays in it (a 1 -> 1 from h1 to itself) keeps its
    throughput within 5% when the three other hosts go from idle to saturated."""
    _agent()
    ratio, cycles = _isolation(workdir, "h1", "h1", ["h2", "h3", "h4"], 0.05)
    # Measured: 0.995-1.015 in six runs. On unpinned hosts, whose threads move between
    # the CPUs the busy loops take, 0.954 with cycles from 0.68 to 1.43. A CI machine's
    # 20 cycles once read 1.079 with per-cycle ratios 0.70-1.40 (interval 0.89-1.28).
    assert scaled.within(cycles, 0.05, ISOLATION_CYCLES, ISOLATION_LOOK_EVERY), (ratio, cycles)


def test_a_sender_across_hosts_pays_for_waking_its_reader(workdir: Path) -> None:
    """A 1 -> 1 across hosts (h1 -> h2) is not isolated as well: the kernel delivers each
    datagram to the reader in the sender's context, charged to the sender's host, and
    waking a reader that has drained its socket is part of that work. A reader whose CPU
    a neighbour keeps busy is woken less often (683 against 2,648 times a second, with
    h3 and h4 saturated and idle), so the sender's cost per datagram depends on its
    reader's neighbours. Measured: 1.009-1.030 in six runs, 0.97-1.07 in four trials
    before them (unpinned hosts 1.05-1.09); a real receiver's kernel pays for its own
    deliveries. The bound says how far a host's neighbours may move a sender: 15%."""
    _agent()
    ratio, cycles = _isolation(workdir, "h1", "h2", ["h3", "h4"], 0.15)
    assert scaled.within(cycles, 0.15, ISOLATION_CYCLES, ISOLATION_LOOK_EVERY), (ratio, cycles)


def test_throughput_proportional_to_cores(workdir: Path) -> None:
    _agent()
    cores_tried = (0.2, 0.3, 0.5)
    with topologies.build(_lan(max(cores_tried), hosts=2, pin=True, step_us=250),
                          workdir=workdir) as net:
        _ready(net)
        per_core = _unstolen(partial(scaled.per_core, net, workdir, cores_tried,
                                     PROPORTIONALITY_CYCLES), "0.2 / 0.3 / 0.5 core")
    relative = scaled.relative(per_core)
    print("proportionality: bytes/s per core by cycle " + "; ".join(
        ", ".join(f"{c:g}: {r[c] / 1e6:.1f} M" for c in cores_tried) for r in per_core))
    print(f"proportionality: per core over the cycle's mean, median of {len(per_core)} "
          "cycles: " + ", ".join(f"{c:g}: {v:.3f}" for c, v in relative.items()))
    # Measured in six runs: at most 2.9% off the mean (0.988, 0.998, 1.029).
    for v in relative.values():
        assert abs(v - 1) <= 0.10, (relative, per_core)


def test_saturated_hosts_with_honoured_quotas_are_faithful(workdir: Path) -> None:
    with topologies.build(_lan(0.4), workdir=workdir) as net:
        fid = _unstolen(lambda: scaled.monitor_under_load(
            net, workdir, {h: 2 for h in ("h1", "h2", "h3", "h4")}), "4 saturated hosts")
    m = fid["metrics"]
    print("honoured:", {k: m[k] for k in ("shortfall_share", "allocation_share",
                                          "throttled_share", "plane_wakeup_p99_us",
                                          "steal_share")})
    assert fid["bound"] == "saturated", fid
    assert m["throttled_share"] > 0.9
    assert m["allocation_share"] > 0.9
    # every CPU-limited host's wake-up sampler reported, inside its cgroup
    assert all(fid["per_host"][h]["wakeup_p99_us"] is not None for h in net.hosts), fid
    assert not [w for w in fid["warnings"] if "sampler" in w], fid["warnings"]
    # every busy loop ran in a host: none is counted outside them
    print("outside the hosts:", fid["outside_hosts"])
    assert "sh" not in dict(fid["outside_hosts"]["top"]), fid["outside_hosts"]
    # the monitor's own timer outside the hosts woke about 100 times a second, not 1,000:
    # at 1 ms its wake-ups alone made the hosts on its CPU drop a fifth of their datagrams
    # at 75x75 multicast (experiments/fidelity.py, PLANE_PERIOD_US)
    logs = max(workdir.glob("logs-*"), key=lambda d: int(d.name.removeprefix("logs-")))
    cycles = fidelity.read_wakeup(logs / "wakeup_plane.json").cycles
    rate = cycles / fid["window_s"]
    print(f"timer outside the hosts: {cycles} wake-ups in {fid['window_s']:.1f} s")
    assert 50 <= rate <= 110, (cycles, fid["window_s"])


def test_quotas_beyond_the_machine_are_unfaithful(workdir: Path) -> None:
    cpus = cpulimit.machine_cpus()
    hosts = cpus + 1  # each 0.9 core: more than the machine has
    # Pinned: unpinned, a busy loop that migrates between CPUs showed 8-19% of the window
    # neither in its CPU time nor in its pressure (the kernel weights each CPU's stall by
    # that CPU's busy time), so a starved host could read as one with idle time; pinned,
    # under 0.3%, and the two hosts sharing a CPU got 0.55 of their quota.
    spec = _lan(0.9, hosts=hosts, pin=True)
    assert cpulimit.spec_problem(spec)  # what a scenario would refuse at --check
    with topologies.build(spec, workdir=workdir) as net:
        fid = scaled.monitor_under_load(net, workdir, dict.fromkeys(net.hosts, 1))
    print("oversubscribed:", fid["metrics"]["shortfall_share"], fid["reasons"])
    assert fid["bound"] == "host", fid
    assert any("less than its allocation" in r for r in fid["reasons"]), fid


def test_unlimited_load_beside_the_hosts_is_unfaithful(workdir: Path) -> None:
    with topologies.build(_lan(0.4), workdir=workdir) as net:
        # s1: outside every host, in the switch's namespace, no CPU limit
        fid = scaled.monitor_under_load(net, workdir, {"h1": 2, "h2": 2, "h3": 2, "h4": 2,
                                                       "s1": cpulimit.machine_cpus()})
    print("unlimited beside:", fid["metrics"]["shortfall_share"], fid["reasons"])
    assert fid["bound"] == "host", fid
    # the record names what took the time: the loops outside the hosts, first
    (comm, cores), *_ = fid["outside_hosts"]["top"]
    assert comm == "sh" and cores > 0.5, fid["outside_hosts"]
    assert any("meanwhile" in r and "outside the hosts (sh " in r for r in fid["reasons"]), fid


def _cores_used(cpu: Any, host: str, seconds: float) -> float:
    a = cpu.snapshot()[host]
    time.sleep(seconds)
    b = cpu.snapshot()[host]
    assert a.usage_us is not None, "no cgroup v2 usage counter here"
    return (b.usage_us - a.usage_us) / 1e6 / seconds


def test_limits_from_the_measurement_take_effect_when_engaged(workdir: Path) -> None:
    """cpu_from = "measurement": a pinned 0.3-core host runs free (both CPUs) until the
    runner engages its limits, then gets 0.3 of one CPU."""
    if cpulimit.machine_cpus() < 2:
        pytest.skip("needs 2 CPUs to tell unpinned from pinned")
    spec = topologies.resolve("lan", {"hosts": 2, "cpu": 0.3, "cpu_pin": True,
                                      "cpu_from": "measurement"})
    with topologies.build(spec, workdir=workdir) as net:
        cpu = net.cpu_limits()
        assert cpu.deferred and not cpu.engaged
        busy = scaled.busy(net, ["h1"], 2)
        try:
            time.sleep(0.3)
            free = _cores_used(cpu, "h1", 1.5)
            assert cpu.engage() and not cpu.engage()  # once
            time.sleep(0.3)
            capped = _cores_used(cpu, "h1", 1.5)
        finally:
            scaled.stop(busy)
        described = net.describe()["cpu_limits"]
    print(f"deferred limits: h1 used {free:.2f} cores before engage, {capped:.2f} after")
    assert free > 1.2, free  # two busy loops on two CPUs, no quota
    assert 0.2 < capped <= 0.3 * 1.05, capped
    assert described["from"] == "measurement"


def test_socket_drops_are_told_by_the_cpu_of_their_host(workdir: Path) -> None:
    """Pinned hosts: the fidelity record names the CPU whose hosts dropped datagrams at
    full socket buffers. The host that never reads is the one on the second CPU, so the
    answer is not "CPU 0" by default."""
    if cpulimit.machine_cpus() < 2:
        pytest.skip("needs 2 CPUs to pin two hosts apart")
    with topologies.build(_lan(0.4, hosts=2, pin=True), workdir=workdir) as net:
        _ready(net)
        pins = dict(net.cpu_limits().cpus)
        assert pins["h1"] != pins["h2"], pins
        procs = [scaled.exchange(net, "h1", "h2", 4, read=True),
                 scaled.exchange(net, "h2", "h1", 4, read=False)]
        try:
            time.sleep(1)
            fid = scaled.monitor(net, workdir, 2)
        finally:
            scaled.stop(procs)
    per_cpu = fid["per_cpu"]
    print("per CPU:", per_cpu, fid.get("drops_by_cpu_text"))
    reader, deaf = per_cpu[f"cpu{pins['h1']}"], per_cpu[f"cpu{pins['h2']}"]
    assert reader["hosts"] == ["h1"] and deaf["hosts"] == ["h2"], per_cpu
    assert reader["socket_drop_share"] == 0.0, per_cpu
    assert deaf["socket_drop_share"] > 0.5, per_cpu  # 1,000/s into a buffer of a few
    assert fid["most_drops_cpu"] == f"cpu{pins['h2']}", fid
    assert f"CPU {pins['h2']} (h2)" in fid["drops_by_cpu_text"], fid
    for rec in per_cpu.values():
        assert 0 <= rec["idle_share"] <= 1, per_cpu


def test_a_host_process_that_ended_in_the_window_is_not_counted_outside(workdir: Path) -> None:
    """An agent that exits as the window closes is out of its host's cgroup but still in
    /proc until it is reaped: its CPU time is the host's, not time taken from it."""
    with topologies.build(_lan(0.4, hosts=2, pin=True), workdir=workdir) as net:
        _ready(net)
        # busy for 2 s in one process (no child does the work), then it exits
        ends = net.popen("h1", ["bash", "-c", "while (( SECONDS < 2 )); do :; done"])
        try:
            fid = scaled.monitor(net, workdir, 3)  # not reaped before the window closes
        finally:
            ends.wait(timeout=10)
    rec = fid["outside_hosts"]
    print("outside the hosts:", rec)
    assert dict(rec["top"]).get("bash", 0.0) < 0.05, rec  # counted it would be ~0.25
    assert rec["interrupt_cores"] is not None, rec


def test_a_period_step_makes_the_hosts_periods_drift_through_one_another(workdir: Path
                                                                          ) -> None:
    """Hosts of equal periods keep the offset between their periods for as long as they
    run: each gets its quota back at one phase of the cycle, a phase that differs from
    host to host and build to build (measured: h1 at 9.5 ms, h2 at 5.4 ms of the 10 ms
    cycle; 2.6 and 0.4 ms in the next build), so a run keeps whatever offset it began
    with. ``cpu_period_step_us`` gives each host its own period,
    and one host's refills then fall all over the other's cycle within a run."""
    if cpulimit.machine_cpus() < 2:
        pytest.skip("needs 2 CPUs for two spinning hosts at once")
    period = cpulimit.PERIOD_US
    found = {}
    for step in (0, 2_500):
        spec = topologies.resolve("lan", {"hosts": 2, "cpu": 0.3, "cpu_pin": True,
                                          "cpu_period_step_us": step})
        with topologies.build(spec, workdir=workdir) as net:
            assert net.cpu_limits().periods == {"h1": period, "h2": period + step}
            # Steal jitters the refills (a fresh clone read concentrations of 0.91 and
            # 0.75 beside tests that measured 24-35% steal): taken again, as the others.
            found[step] = _unstolen(partial(scaled.resumes, net, ["h1", "h2"], 2.0),
                                    f"period step {step} us")
    phases = {step: {h: scaled.phase_concentration(t, period) for h, t in ends.items()}
              for step, ends in found.items()}
    print("refill phase in a 10 ms cycle (µs), concentration:", phases)
    for step, ends in found.items():
        assert all(len(t) >= 50 for t in ends.values()), (step, {h: len(t) for h, t in
                                                                ends.items()})
    # equal periods: each host resumes at one phase of the 10 ms cycle, all run long
    assert all(c > 0.9 for _, c in phases[0].values()), phases[0]
    # h2 on a 12.5 ms period: at one phase of its own cycle, all over h1's
    staggered = phases[2_500]
    assert staggered["h1"][1] > 0.9, staggered
    assert staggered["h2"][1] < 0.5, staggered
    assert scaled.phase_concentration(found[2_500]["h2"], period + 2_500)[1] > 0.9
