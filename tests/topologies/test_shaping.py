"""Link shaping: requested vs read back (pure logic), and the refusal where netem is missing."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

import topologies
from mcastlab import capabilities
from topologies import routed, shaping

ROOT = Path(__file__).resolve().parents[2]

# `tc -j qdisc show` as iproute2 6.x prints netem under HTB (q_netem.c: delay in seconds,
# loss as a fraction), and `tc class show` for the HTB class.
QDISC_JSON = json.dumps([
    {"kind": "htb", "handle": "5:", "dev": "h1-eth0", "root": True,
     "options": {"r2q": 10, "default": "0x1"}},
    {"kind": "netem", "handle": "10:", "dev": "h1-eth0", "parent": "5:1",
     "options": {"limit": 1000, "delay": {"delay": 0.01, "jitter": 0},
                 "loss-random": {"loss": 0.05}, "ecn": False, "gap": 0}},
    {"kind": "noqueue", "handle": "0:", "dev": "lo", "root": True, "options": {}},
])
CLASS_TEXT = "h1-eth0:\nclass htb 5:1 root leaf 10: prio 0 rate 100Mbit ceil 100Mbit burst 15337b\n"


def test_requested_and_link_params() -> None:
    params = {"bw": 100.0, "delay": "200us", "loss": 1.5}
    assert shaping.requested(params) == {"bw_mbit": 100.0, "delay_ms": 0.2, "loss_pct": 1.5}
    assert shaping.link_params(params) == {"bw": 100.0, "delay": "200us", "loss": 1.5}
    assert shaping.requested({"bw": None, "delay": None, "loss": None}) == {}


def test_parse_tc_reads_netem_and_htb() -> None:
    applied = shaping.parse_tc(QDISC_JSON, CLASS_TEXT)
    assert applied["h1-eth0"] == {"qdiscs": ["htb", "netem"], "delay_ms": 10.0,
                                  "loss_pct": 5.0, "bw_mbit": 100.0}
    want = {"bw_mbit": 100.0, "delay_ms": 10.0, "loss_pct": 5.0}
    assert shaping.mismatches(want, applied, ["h1-eth0"]) == []


def test_mismatch_names_device_key_and_qdiscs() -> None:
    """The bug this check catches: bw applied, delay and loss silently not."""
    htb_only = json.dumps([{"kind": "htb", "handle": "5:", "dev": "s1-eth1", "options": {}}])
    applied = shaping.parse_tc(htb_only, CLASS_TEXT.replace("h1-eth0", "s1-eth1"))
    bad = shaping.mismatches({"bw_mbit": 100.0, "delay_ms": 10.0, "loss_pct": 5.0}, applied,
                             ["s1-eth1", "h2-eth0"])
    assert bad[0] == "s1-eth1: delay_ms None applied, 10 asked for (qdiscs: htb)"
    assert len(bad) == 5  # s1-eth1: delay, loss; h2-eth0 (nothing read): bw, delay, loss


def test_rates_in_other_units() -> None:
    text = "a:\nclass htb 5:1 root prio 0 rate 100Kbit ceil 100Kbit\nb:\n" \
           "class htb 5:1 root prio 0 rate 1Gbit ceil 1Gbit\n"
    applied = shaping.parse_tc("[]", text)
    assert applied["a"]["bw_mbit"] == pytest.approx(0.1)
    assert applied["b"]["bw_mbit"] == 1000.0


def test_bw_above_what_mininet_applies_is_refused() -> None:
    import topologies

    with pytest.raises(topologies.TopologyParamError, match=r"'bw' = 5000 .*\[0.1, 1000\]"):
        topologies.resolve("lan", {"bw": 5000})


@pytest.mark.skipif(capabilities.detect()["netem"], reason="this machine has sch_netem")
def test_scenario_with_delay_is_refused_before_building(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Where netem is missing, --check exits 2 naming file, key and the kernel feature,
    and nothing is built (no ledger, no run directory)."""
    import os

    from experiments import scenario
    from mcastlab import paths

    if not os.access(paths.NATIVE_AGENT, os.X_OK):
        pytest.skip("the native agent is not built (its check comes first): run ./setup.sh")
    scen = tmp_path / "delay.toml"
    scen.write_text('[campaign]\nname = "d"\n[topology]\nname = "lan"\n'
                    'params = { hosts = 2, delay = "10ms", loss = 5 }\n'
                    '[matrix]\nparticipants = [1]\n')
    res = subprocess.run([str(ROOT / ".venv/bin/mcastlab"), "run", str(scen), "--check",
                          "--results", str(tmp_path / "results")],
                         capture_output=True, text=True, cwd=ROOT, check=False)
    assert res.returncode == 2, res.stderr
    assert f"{scen}: topology.params.delay:" in res.stderr
    assert "sch_netem module missing" in res.stderr
    assert not (tmp_path / "results").exists()
    # Same refusal without --check: the runner validates before building anything.
    monkeypatch.setattr(scenario, "agent_missing", lambda kind: None)
    with pytest.raises(scenario.ScenarioError) as err:
        scenario.validate(scen)
    assert err.value.key == "topology.params.delay"


def test_delay_is_bounded() -> None:
    import topologies

    assert topologies.resolve("lan", {"delay": "10s"}).params["delay"] == "10s"
    with pytest.raises(topologies.TopologyParamError, match="at most 10000 ms"):
        topologies.resolve("lan", {"delay": "100000s"})


def test_router_shaping_and_link_shaping_are_refused_together() -> None:
    with pytest.raises(topologies.TopologyParamError,
                       match="'router_delay'/'router_loss' and 'bw'/'delay'/'loss' are not "
                             "allowed together"):
        topologies.resolve("routed", {"routers": 2, "router_delay": "5ms", "bw": 10})


def test_host_routers_need_the_hosts_netem(monkeypatch: pytest.MonkeyPatch) -> None:
    """router_kernel = "host" with router_delay: the host kernel's netem is a need, so a
    machine without it refuses the network before building, naming sch_netem; auto takes
    the user-mode routers there."""
    spec = topologies.resolve("routed", {"routers": 2, "mrouting": "none",
                                         "router_kernel": "host", "router_delay": "5ms"})
    assert "netem" in spec.needs
    have = {**capabilities.detect(), "netem": False, "uml": True}
    monkeypatch.setattr(capabilities, "detect", lambda: have)
    assert routed.router_kernel("auto", None, netem=True) == "uml"
    assert routed.router_kernel("auto", None, netem=False) == "host"
