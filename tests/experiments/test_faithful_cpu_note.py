"""`mcastlab run --check` names what a scenario with CPU-limited hosts leaves out of the host
measured faithful (issue: a scenario of only `cpu = 0.4` was unfaithful at 75x75)."""

from __future__ import annotations

from pathlib import Path

import pytest

from experiments.commands import _check_only
from mcastlab.paths import EXPERIMENTS_DIR

ONLY_CPU = """\
[campaign]
name = "only-cpu"
[topology]
name = "lan"
params = { hosts = 4, cpu = 0.4 }
[agent]
kind = "ddsperf"
[matrix]
participants = [1]
modes = ["unicast"]
execution_time = 5
"""


def test_only_cpu_is_told_the_settings_it_lacks(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "only-cpu.toml"
    path.write_text(ONLY_CPU)
    assert _check_only(path) == 0
    out = capsys.readouterr().out
    (note,) = [line for line in out.splitlines() if line.startswith("note:")]
    for words in ("cpu_pin = true (here: false)", "cpu_period_step_us = 250 (here: 0)",
                  'cpu_from = "measurement" (here: "start")', "10.6 and 11.9 ms"):
        assert words in note, note
    assert "cpu_period_us" not in note  # the default period is the faithful one


@pytest.mark.parametrize("preset", ["seed003-scaled.toml", "seed003-explain-scaled.toml"])
def test_the_shipped_scaled_presets_get_no_note(preset: str,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    assert _check_only(EXPERIMENTS_DIR / preset) == 0
    assert "note:" not in capsys.readouterr().out
