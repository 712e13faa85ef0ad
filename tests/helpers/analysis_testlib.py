"""Fixture campaigns of the analysis tests: the one place that names them.

FIXTURE_CAMPAIGN is the campaign the report and notebook tests read: a real smoke run
(``mcastlab run experiments/smoke.toml``), trimmed to its tables
(tests/fixtures/campaign-smoke/README.md). To use a newer run, replace that directory or
point this constant elsewhere. SYNTHETIC_CAMPAIGN (tests/fixtures/make_synthetic_campaign.py)
has known answers and wire summaries; the report tests run on both.
"""

from __future__ import annotations

import json
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FIXTURE_CAMPAIGN = REPO / "tests" / "fixtures" / "campaign-smoke"
SYNTHETIC_CAMPAIGN = REPO / "tests" / "fixtures" / "campaign-synthetic"


def synthetic_designs(path: Path) -> dict[int, str] | None:
    """participants -> known design of a synthetic campaign; None for a real one."""
    index = json.loads((path / "campaign.json").read_text())
    designs = {}
    for run in index["runs"]:
        cfg = json.loads((path / run["id"] / "config.json").read_text())
        if "synthetic_design" not in cfg:
            return None
        designs[cfg["subscribers"]] = cfg["synthetic_design"]
    return designs


def has_wire(path: Path) -> bool:
    return any(path.glob("*/wire/summary.json"))
