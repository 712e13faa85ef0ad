"""Per-CPU figures of the fidelity record, from /proc and /sys texts (no root)."""

from __future__ import annotations

from pathlib import Path

from experiments import cpustats

INTERRUPTS = """\
           CPU0       CPU1       CPU2       CPU3
  0:         35          0          0          0  IR-IO-APIC    2-edge      timer
NMI:          0          0          0          0   Non-maskable interrupts
LOC:     860500     650448         12          0   Local timer interrupts
SPU:          0          0          0          0   Spurious interrupts
"""


def test_timer_interrupts_per_cpu_from_the_loc_row() -> None:
    assert cpustats.parse_timer_interrupts(INTERRUPTS) == {
        "cpu0": 860500, "cpu1": 650448, "cpu2": 12, "cpu3": 0}
    assert cpustats.parse_timer_interrupts("           CPU0\n  0:  35  timer\n") == {}
    assert cpustats.parse_timer_interrupts("") == {}


def _state(root: Path, cpu: str, n: int, name: str, usage: str) -> None:
    d = root / cpu / "cpuidle" / f"state{n}"
    d.mkdir(parents=True)
    (d / "name").write_text(name + "\n")
    (d / "usage").write_text(usage + "\n")


def test_idle_entries_count_stopping_states_not_polling(tmp_path: Path) -> None:
    _state(tmp_path, "cpu0", 0, "POLL", "999")
    _state(tmp_path, "cpu0", 1, "haltpoll idle", "195958")
    _state(tmp_path, "cpu1", 0, "POLL", "5")  # a CPU that only polled: no stopping state
    assert cpustats.idle_entries("cpu0", tmp_path) == 195958
    assert cpustats.idle_entries("cpu1", tmp_path) is None
    assert cpustats.idle_entries("cpu7", tmp_path) is None  # no cpuidle driver


def test_window_per_cpu_with_pinned_hosts() -> None:
    a = {"cpu0": {"idle_s": 1.0, "steal_s": 4.0, "timer_irqs": 0, "idle_entries": 0},
         "cpu1": {"idle_s": 1.0, "interrupt_s": 7.0}}
    b = {"cpu0": {"idle_s": 3.0, "steal_s": 4.1, "timer_irqs": 4600, "idle_entries": 820},
         "cpu1": {"idle_s": 6.0, "interrupt_s": 7.5}}
    udp = {"h1": {"InDatagrams": 860, "RcvbufErrors": 140},
           "h3": {"InDatagrams": 1000, "RcvbufErrors": 0},
           "h2": {"InDatagrams": 2000, "RcvbufErrors": 2}}
    pins = {"h1": 0, "h2": 1, "h3": 0, "h4": 1}  # h4 has no agents: no counters
    per_cpu = cpustats.window(a, b, 2.0, pins, udp)
    assert per_cpu["cpu0"] == {"idle_share": 1.0, "steal_share": 0.05, "timer_irq_per_s": 2300.0,
                               "idle_entries_per_s": 410.0, "hosts": ["h1", "h3"],
                               "socket_drop_share": 0.07}
    assert per_cpu["cpu1"] == {"idle_share": 1.0, "interrupt_share": 0.25,
                               "hosts": ["h2", "h4"],
                               "socket_drop_share": 0.001}  # idle clipped to the window
    assert cpustats.interrupt_cores(per_cpu) == 0.25
    assert cpustats.most_dropping_cpu(per_cpu) == "cpu0"
    assert cpustats.drops_text(per_cpu) == (
        "CPU 0 (h1, h3) 7.00% (2300 timer interrupts/s, 410 idle entries/s), "
        "CPU 1 (h2, h4) 0.10%")
    # unpinned hosts: the CPUs only, nothing to tell drops by
    plain = cpustats.window(a, b, 2.0, {}, udp)
    assert "hosts" not in plain["cpu0"] and cpustats.most_dropping_cpu(plain) is None
    assert cpustats.drops_text(plain) == ""
