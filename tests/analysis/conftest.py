"""Fixtures of the analysis tests; the campaign paths live in
tests/helpers/analysis_testlib.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.analysis_testlib import FIXTURE_CAMPAIGN, SYNTHETIC_CAMPAIGN


def _check(path: Path) -> Path:
    if not (path / "campaign.json").exists():
        pytest.fail(f"{path}: fixture campaign missing (see tests/helpers/analysis_testlib.py)")
    return path


@pytest.fixture(scope="session")
def campaign_dir() -> Path:
    """The fixture campaign (a real smoke run) read by the report and notebook tests."""
    return _check(FIXTURE_CAMPAIGN)


@pytest.fixture(scope="session", params=["smoke", "synthetic"])
def any_campaign(request) -> Path:
    return _check(FIXTURE_CAMPAIGN if request.param == "smoke" else SYNTHETIC_CAMPAIGN)
