"""Unit checks of the agents' shared measure.c (perftest-wrappers/native/measure_test.c), no
root needed: TestData_t's 32-bit sequence number unwrapped by serial arithmetic, including a
subscriber whose publisher's numbers run across 2^32 with samples lost on both sides of it
and at the tail (FINISHED); the timestamp split and the key octets. Release and ASan builds.
"""

from __future__ import annotations

import os
import subprocess

import pytest

from mcastlab import paths

BUILDS = {"release": paths.REPO_ROOT / "build" / "perftest-wrappers_native" / "measure_test",
          "asan": paths.REPO_ROOT / "build" / "perftest-wrappers_native-asan" / "measure_test"}


@pytest.mark.parametrize("build", sorted(BUILDS))
def test_sequence_numbers_cross_2_32(build: str) -> None:
    exe = BUILDS[build]
    if not os.access(exe, os.X_OK):
        pytest.fail(f"{exe} is missing: run ./setup.sh (it builds perftest-wrappers/native)")
    r = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "checks passed" in r.stdout and "runtime error" not in r.stderr, r.stdout + r.stderr
