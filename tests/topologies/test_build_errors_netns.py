"""A build failure reaches the user as one line, exits non-zero and leaves nothing behind.

   h1 --+
   h2 --[ s1 ]     `mcastlab probe --fail-on <node>` (hidden from --help) adds one real
   h3 --+          command that fails to that node's configuration: bringing up a device
                   that does not exist

The probe is run as a user runs it (the CLI in a subprocess), so what is checked is what
a user sees: stderr, the exit status, the log it names, and the machine afterwards.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from mcastlab.paths import REPO_ROOT, STATE_DIR

pytestmark = pytest.mark.timeout(180)


@pytest.mark.parametrize(("node", "switch", "step"), [
    ("h2", "linuxbridge", "configuring host"),
    ("s1", "linuxbridge", "starting the Linux bridge"),
    ("s1", "ovs", "preparing the OVS ports"),
])
def test_injected_failure_is_one_line_naming_node_and_log(node: str, switch: str,
                                                          step: str) -> None:
    res = subprocess.run([sys.executable, "-m", "mcastlab.cli", "probe", "lan",
                          "--param", "hosts=3", "--param", f"switch={switch}",
                          "--sender", "h1", "--members", "h2", "--fail-on", node],
                         cwd=REPO_ROOT, capture_output=True, text=True, timeout=150)
    assert res.returncode == 1, res
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, res.stderr  # one line, no traceback
    m = re.fullmatch(rf"mcastlab probe: {step} failed on {node}: (.*) \(log: (\S+)\)", lines[0])
    assert m, lines[0]
    assert "mcl-injected" in m.group(1) or "Cannot find device" in m.group(1), lines[0]
    log = Path(m.group(2))
    try:
        assert log.is_file()
        text = log.read_text()
        assert "ip link set dev mcl-injected up" in text and "build failed" in text
        tag = re.search(r"build-(m[0-9a-z]{3})\.log$", log.name)
        assert tag, log
        tag_s = tag.group(1)
        # Nothing of that testbed remains: ledger, state, links, switch shell (its own
        # tag only: another testbed may be running on the machine).
        assert not (STATE_DIR / f"{tag_s}.ledger").exists()
        assert not (STATE_DIR / tag_s).exists()
        links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
        assert tag_s not in links
        ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
        assert f"mininet:{tag_s}" not in ps
        assert not list(Path("/tmp").glob(f"mcastlab-{tag_s}-*"))
    finally:
        log.unlink(missing_ok=True)
