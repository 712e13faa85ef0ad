"""Shared fixtures of the analysis tests.

FIXTURE_CAMPAIGN is the one place that names the campaign every report and notebook test
reads. It is a synthetic campaign (tests/fixtures/make_synthetic_campaign.py) until a real
smoke run (``mcastlab run experiments/smoke.toml``), kept small, replaces it: point this
constant at that directory and the known-answer checks that rely on the synthetic design
skip themselves (they look for ``synthetic_design`` in each run's config.json).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FIXTURE_CAMPAIGN = REPO / "tests" / "fixtures" / "campaign-synthetic"


@pytest.fixture(scope="session")
def campaign_dir() -> Path:
    if not (FIXTURE_CAMPAIGN / "campaign.json").exists():
        pytest.fail(f"{FIXTURE_CAMPAIGN}: fixture campaign missing; regenerate it with "
                    "tests/fixtures/make_synthetic_campaign.py")
    return FIXTURE_CAMPAIGN


@pytest.fixture(scope="session")
def synthetic_designs(campaign_dir: Path) -> dict[int, str]:
    """participants -> known design, or skip when the fixture is a real run."""
    index = json.loads((campaign_dir / "campaign.json").read_text())
    designs = {}
    for run in index["runs"]:
        cfg = json.loads((campaign_dir / run["id"] / "config.json").read_text())
        if "synthetic_design" not in cfg:
            pytest.skip("fixture is a real campaign: no known answers to check")
        designs[cfg["subscribers"]] = cfg["synthetic_design"]
    return designs
