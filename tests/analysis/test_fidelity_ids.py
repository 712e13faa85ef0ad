"""Analysis decides by the ids of the fidelity checks a run failed, never by their words.

A stored campaign whose host-bound runs failed an emulator check (25x25: a CPU-limited host
short of its allocation, the record made by experiments/fidelity.py's own judge) and a
host check (10x10: socket drops of unlimited hosts) is analysed twice: as written, and with
every check's sentence in every manifest renamed. Every verdict, its cause and its advice
must be the same.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

from analysis import load, report, testbed
from analysis.analyse import analyse
from analysis.synthetic import write_campaign
from experiments.fidelity import Thresholds, failed_checks, judge_limited


def _emulator_failure() -> dict:
    """A CPU-limited run's record in which the emulator failed, as the monitor writes it."""
    metrics = {"shortfall_share": 0.2, "throttled_share": 0.9, "socket_drop_share": 0.0}
    bound, emulator, saturation = judge_limited(metrics, Thresholds())
    ids = failed_checks(metrics, Thresholds(), limited=True)
    return {"bound": bound, "reasons": emulator, "saturation": saturation, **ids,
            "emulator": {"faithful": False, "reasons": emulator, "failed": ids["failed"]},
            "metrics": metrics, "per_host": {}, "window_s": 30.0, "warnings": [],
            "thresholds": {}}


def _rewrite(campaign: Path, edit: Callable[[str, dict], None]) -> None:
    for manifest in campaign.glob("*/manifest.json"):
        m = json.loads(manifest.read_text())
        edit(manifest.parent.name, m["fidelity"])
        manifest.write_text(json.dumps(m))


def _signature(campaign: Path, out: Path) -> tuple[list[tuple], str]:
    a = analyse(load.load_campaign(campaign), n_boot=100)
    cells = []
    for p in sorted(a.pairs, key=lambda p: p.publishers):
        for metric, v in sorted(p.verdicts.items()):
            reasons = v.testbed_reasons
            cells.append((p.publishers, metric, v.outcome,
                          testbed.testbed_cause(reasons) if reasons else "",
                          testbed.advice(reasons) if reasons else ""))
    text = report.write_report(a, out).report.read_text()
    paragraph = text.split("## Fidelity")[1].split("\n## ")[0]
    return cells, "emulator did not keep its promise" in paragraph


def test_renamed_check_sentences_leave_every_verdict_unchanged(tmp_path: Path) -> None:
    stored = write_campaign(tmp_path / "stored", counts=(3, 10, 25),
                            designs=("multicast-better",) * 3, seconds=20, campaign="ids",
                            host_bound=(10, 25), repetitions=2)

    def emulator_at_25(run: str, fid: dict) -> None:
        if "-25x25-" in run:
            fid.clear()
            fid.update(_emulator_failure())

    _rewrite(stored, emulator_at_25)
    renamed = tmp_path / "renamed"
    shutil.copytree(stored, renamed)

    def rename(_run: str, fid: dict) -> None:
        for rec in (fid, fid.get("emulator") or {}):
            rec["reasons"] = [f"renamed check {i}" for i in range(len(rec.get("reasons") or []))]

    _rewrite(renamed, rename)
    before, emulator_before = _signature(stored, tmp_path / "r1")
    after, emulator_after = _signature(renamed, tmp_path / "r2")
    assert before == after
    assert emulator_before and emulator_after
    causes = {c[0]: c[3] for c in before}
    assert causes[25].startswith("the emulator did not keep its promise"), causes
    assert causes[10] == "the hosts' CPUs, not the network, limited a run", causes
    assert causes[3] == ""


def test_records_without_ids_are_read_from_their_words() -> None:
    """Campaigns stored before the ids existed keep their verdicts' causes."""
    legacy = {"bound": "host", "reasons": ["a busy host got less than its allocation while "
                                           "it had work: 20.0% less (limit 10.0% less)"]}
    assert load.fidelity_row(legacy)["fidelity_cause"] == "emulator"
    legacy["reasons"] = ["datagrams dropped at full socket buffers: 20.0% (limit 1.0%)"]
    assert load.fidelity_row(legacy)["fidelity_cause"] == "host"
    with_ids = {"bound": "host", "reasons": ["renamed"], "failed": ["emulator.router_drop_share"],
                "emulator": {"faithful": False}}
    row = load.fidelity_row(with_ids)
    assert row["fidelity_cause"] == "emulator" and row["fidelity_faithful"] is False
