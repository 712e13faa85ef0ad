"""A ring buffer that wraps is said aloud, end to end.

    h1 (pub0) -- s1 -- h2 (sub0)        capture on h1-eth0, ring of 2 x 1 MB

One paced 1x1 run (2000 samples/s of 1000 bytes, ~2 MB/s, for 10 s) fills the ring within
about a second, so tcpdump overwrites the start: the manifest, the wire summary and
`mcastlab wire` must all say "capture covers the last N s of M s" with N well below M.
A second run with a ring that holds everything says "the whole run".
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mcastlab import paths

pytestmark = pytest.mark.timeout(300)

SCENARIO = """
[campaign]
name = "ring"
[topology]
name = "lan"
params = {{ hosts = 2, querier = false }}
[matrix]
participants = [1]
modes = ["unicast"]
data_len = [1000]
pub_rate = [2000]
execution_time = 10
[capture]
points = ["h1-eth0"]
ring_files = 2
ring_mb = {ring_mb}
window_s = 0
[timing]
run_timeout = 60
"""


@pytest.mark.parametrize("ring_mb", [1, 200])
def test_ring_coverage_in_manifest_summary_and_wire_output(tmp_path: Path, ring_mb: int) -> None:
    if not os.access(paths.NATIVE_AGENT, os.X_OK):
        pytest.fail(f"{paths.NATIVE_AGENT} is not built (run ./setup.sh)")
    scen = tmp_path / "ring.toml"
    scen.write_text(SCENARIO.format(ring_mb=ring_mb))
    root = tmp_path / "results"
    res = subprocess.run([sys.executable, "-m", "mcastlab.cli", "run", str(scen), "--results",
                          str(root)], capture_output=True, text=True,
                         timeout=240, cwd=paths.REPO_ROOT, check=False)
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    run = next(p for p in root.iterdir() if p.is_dir() and (p / "manifest.json").exists())
    man = json.loads((run / "manifest.json").read_text())
    span = man["run_span"]
    assert 9 <= span["end"] - span["start"] <= 60
    cov = man["capture_coverage"]["h1-eth0"]
    summary = json.loads((run / "wire" / "summary.json").read_text())
    wcov = summary["coverage"]["h1-eth0"]
    out = subprocess.run([sys.executable, "-m", "mcastlab.cli", "wire", str(run)],
                         capture_output=True, text=True, timeout=120, cwd=paths.REPO_ROOT,
                         check=False).stdout
    if ring_mb == 1:
        assert len(list((run / "pcaps").glob("h1-eth0.pcap*"))) == 2
        assert cov["text"].startswith("capture covers the last "), cov
        assert cov["missing_start_s"] > 5 and cov["covered_s"] < 5, cov
        assert wcov["text"] == cov["text"]  # tcpdump's files and the dissector agree
        assert f"h1-eth0: {cov['text']}" in out
        assert "capture_coverage" in res.stdout + res.stderr  # said during the run too
    else:
        assert cov["whole"] and cov["text"].startswith("capture covers the whole run"), cov
        assert wcov["whole"]
        assert "capture covers the whole run" in out
