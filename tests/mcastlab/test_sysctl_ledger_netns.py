"""A machine-wide sysctl the testbed raises (the ARP table's gc_thresh limits, see
topologies/net.py) is put back when the testbed goes, by teardown or by `mcastlab clean`
after a crash, and never while another testbed still relies on the raise.

    ledger A raises K: 1024 -> 1031        ledger B raises K: 1031 -> 1040
    B released: K = 1031 (A still needs it)    A released: K = 1024 (the original)

Real writes to /proc/sys/net/ipv4/neigh/default/gc_thresh3 (root); the original value is
put back by the test in any case.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from mcastlab import ledger

pytestmark = pytest.mark.timeout(60)

KEY = Path("/proc/sys/net/ipv4/neigh/default/gc_thresh3")


def value() -> int:
    return int(KEY.read_text())


@pytest.fixture
def original() -> Iterator[int]:
    before = value()
    yield before
    KEY.write_text(f"{before}\n")


def test_one_testbed_puts_back_what_it_raised(tmp_path: Path, original: int) -> None:
    a = ledger.Ledger.create(tmp_path)
    assert a.raise_sysctl(KEY, original + 7) == original + 7 == value()
    assert a.raise_sysctl(KEY, original) == original + 7  # never lowered
    a.release()
    assert value() == original


@pytest.mark.parametrize("first_out", ["A", "B"])
def test_two_testbeds_restore_in_either_order(tmp_path: Path, original: int,
                                              first_out: str) -> None:
    a = ledger.Ledger.create(tmp_path)
    a.raise_sysctl(KEY, original + 7)
    b = ledger.Ledger.create(tmp_path)
    b.raise_sysctl(KEY, original + 16)
    assert value() == original + 16
    if first_out == "B":
        b.release()
        assert value() == original + 7  # A still holds its raise
        a.release()
    else:
        a.release()
        assert value() == original + 16  # B still holds its raise
        b.release()
    assert value() == original


def test_a_value_changed_by_someone_else_is_left_alone(tmp_path: Path, original: int) -> None:
    a = ledger.Ledger.create(tmp_path)
    a.raise_sysctl(KEY, original + 7)
    KEY.write_text(f"{original + 3}\n")  # an administrator's change after the raise
    a.release()
    assert value() == original + 3


def test_clean_of_a_crashed_testbed_puts_it_back(tmp_path: Path, original: int) -> None:
    a = ledger.Ledger.create(tmp_path)
    a.raise_sysctl(KEY, original + 7)
    # As if the owner had died: `mcastlab clean` reads the ledger file, not this object.
    report = ledger.clean_ledger(a.path, include_live=True)
    assert value() == original
    assert any(f"restored gc_thresh3 to {original}" in line for line in report), report
    assert not a.path.exists()


def test_only_proc_sys_is_written(tmp_path: Path) -> None:
    a = ledger.Ledger.create(tmp_path)
    with pytest.raises(ValueError, match="not a sysctl"):
        a.raise_sysctl(tmp_path / "x", 5)
    a.release()
