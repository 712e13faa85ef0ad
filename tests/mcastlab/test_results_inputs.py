"""Results folders given as inputs (issue 67, items 4 and 7): a folder from elsewhere names
nothing outside itself, and no run counts twice.

Every command that reads a campaign directory (``status`` and its checksum ``verify``,
``report``, ``compare``, ``wire``) refuses, in one line naming the file and the entry, a
run id that is not a plain directory name (``/etc``, ``../x``) or is listed twice, a
manifest member outside its run, and symbolic links it would read or write through.
``report`` and ``compare`` refuse a campaign given twice and a run found in two campaigns
(a copied folder, resumed under another name), naming both.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from analysis.load import ResultsError
from analysis.pool import pool
from analysis.synthetic import write_campaign
from experiments import results
from mcastlab.cli import main
from mcastlab.errors import UnsafeResults
from tests.helpers import craft as c

BAD_IDS = ("/etc", "../x", "../../etc/ssl")


@pytest.fixture()
def campaign(tmp_path: Path) -> Path:
    """A small synthetic campaign: 1×1 and 3×3, two runs per mode."""
    return write_campaign(tmp_path / "camp", counts=(1, 3), seconds=5, repetitions=2,
                          campaign="inputs")


def _index(root: Path) -> dict:
    return json.loads((root / "campaign.json").read_text())


def _set_first_id(root: Path, run_id: str) -> None:
    idx = _index(root)
    idx["runs"][0]["id"] = run_id
    (root / "campaign.json").write_text(json.dumps(idx))


def _one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


def _commands(root: Path, tmp_path: Path, run: str) -> dict[str, list[str]]:
    """Each reading command's arguments on the campaign ``root`` (``run``: one run's id)."""
    other = tmp_path / "other"
    if not other.exists():
        write_campaign(other, counts=(1, 3), seconds=5, repetitions=2, campaign="inputs",
                       seed=11)
    return {"status": ["status", str(root)],
            "report": ["report", str(root), "--out", str(tmp_path / "out"), "--bootstrap", "99"],
            "compare": ["compare", str(other), str(root), "--bootstrap", "99"],
            "wire": ["wire", str(root / run)]}


@pytest.mark.parametrize("bad", BAD_IDS)
def test_a_run_id_outside_the_folder_is_refused_by_every_command(
        campaign: Path, tmp_path: Path, bad: str, capsys: pytest.CaptureFixture[str]) -> None:
    run = _index(campaign)["runs"][1]["id"]
    _set_first_id(campaign, bad)
    for name, argv in _commands(campaign, tmp_path, run).items():
        assert main(argv) == 2, name
        line = _one_line(capsys.readouterr().err)
        assert f"{campaign / 'campaign.json'}: runs[0] id {bad!r} is not a plain directory " \
               "name" in line, (name, line)
    assert not (tmp_path / "out").exists()


def test_a_run_listed_twice_is_refused_not_a_crash(
        campaign: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    idx = _index(campaign)
    rid = idx["runs"][0]["id"]
    idx["runs"].append(dict(idx["runs"][0]))
    (campaign / "campaign.json").write_text(json.dumps(idx))
    n = len(idx["runs"]) - 1
    for name, argv in _commands(campaign, tmp_path, rid).items():
        assert main(argv) == 2, name
        line = _one_line(capsys.readouterr().err)
        assert f"runs[{n}] id {rid!r} is listed already as runs[0]" in line, (name, line)


@pytest.mark.parametrize("member", ["/etc/hostname", "../config.json", "tables/../../x", ""])
def test_a_manifest_member_outside_the_run_is_refused(
        campaign: Path, tmp_path: Path, member: str, capsys: pytest.CaptureFixture[str]) -> None:
    rid = _index(campaign)["runs"][0]["id"]
    manifest = campaign / rid / "manifest.json"
    man = json.loads(manifest.read_text())
    man["files"] = {"config.json": results.sha256_file(campaign / rid / "config.json"),
                    member: "0" * 64}
    manifest.write_text(json.dumps(man))
    with pytest.raises(UnsafeResults, match="files entry"):
        results.verify(campaign / rid)  # nothing outside the run is opened, let alone hashed
    for name, argv in _commands(campaign, tmp_path, rid).items():
        assert main(argv) == 2, name
        line = _one_line(capsys.readouterr().err)
        assert f"{manifest}: files entry {member!r} is not a relative name inside the run" \
               in line, (name, line)


def test_verify_reads_no_member_through_a_symbolic_link(campaign: Path, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    secret = tmp_path / "secret"
    secret.write_text("root's only\n")
    rid = _index(campaign)["runs"][0]["id"]
    run = campaign / rid
    (run / "tables" / "leak").symlink_to(secret)
    results.write_manifest(run, {"status": "complete"})  # lists tables/leak, as a copy could
    with pytest.raises(UnsafeResults, match="tables/leak is a symbolic link"):
        results.verify(run)
    for name, argv in _commands(campaign, tmp_path, rid).items():
        if name == "wire":
            continue  # reads only pcaps/ and the manifest (a member's name is checked)
        assert main(argv) == 2, name
        assert "symbolic link" in _one_line(capsys.readouterr().err), name
    # a manifest that is itself a link is not read either
    (run / "manifest.json").rename(tmp_path / "manifest.json")
    (run / "manifest.json").symlink_to(tmp_path / "manifest.json")
    with pytest.raises(UnsafeResults, match=r"manifest\.json is a symbolic link"):
        results.verify(run)


def test_report_and_wire_do_not_write_through_links_in_the_folder(
        campaign: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (campaign / "report").symlink_to(elsewhere)
    assert main(["report", str(campaign), "--bootstrap", "99"]) == 2
    assert f"{campaign / 'report'}: a symbolic link where the report is written" in _one_line(
        capsys.readouterr().err)
    run = campaign / _index(campaign)["runs"][0]["id"]
    (run / "pcaps").mkdir()
    c.write_pcap(run / "pcaps" / "h1-eth0.pcap",
                 [c.udp_frame(c.rtps_header() + c.heartbeat(1, 10, 3))])
    (run / "wire").rename(tmp_path / "old-wire")
    (run / "wire").symlink_to(elsewhere)
    assert main(["wire", str(run)]) == 2
    assert f"{run / 'wire'}: a symbolic link inside the run directory" in _one_line(
        capsys.readouterr().err)
    assert list(elsewhere.iterdir()) == []


def test_status_still_reads_a_sound_folder(campaign: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["status", str(campaign), "--json"]) == 0
    st = json.loads(capsys.readouterr().out)
    assert {r["status"] for r in st["runs"]} == {"complete"} and len(st["runs"]) == 8


# ---- item 4: no run counts twice -------------------------------------------------------

def _stamp(root: Path, started: str, host: str = "vm") -> None:
    """Give every run's manifest the start time and host the runner records."""
    for i, m in enumerate(sorted(root.glob("*/manifest.json"))):
        man = json.loads(m.read_text())
        man.update(started=f"{started}:{i:02d}+00:00", hostname=host)
        m.write_text(json.dumps(man))


@pytest.mark.parametrize("spelling", ["same", "trailing dot", "symlink"])
def test_one_folder_twice_is_refused_naming_both(
        campaign: Path, tmp_path: Path, spelling: str, capsys: pytest.CaptureFixture[str]) -> None:
    again = {"same": campaign, "trailing dot": campaign / ".",
             "symlink": tmp_path / "alias"}[spelling]
    if spelling == "symlink":
        again.symlink_to(campaign)
    for argv in (["report", str(campaign), str(again), "--out", str(tmp_path / "d")],
                 ["compare", str(campaign), str(again)]):
        assert main(argv) == 2, argv
        line = _one_line(capsys.readouterr().err)
        assert f"{campaign} and {again} are the same campaign directory" in line, line
    assert not (tmp_path / "d").exists()


def test_a_copied_and_resumed_folder_is_refused_with_its_original(
        campaign: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _stamp(campaign, "2026-12-01T10:00")
    copy = tmp_path / "copy"
    shutil.copytree(campaign, copy)
    # resumed under another name: a run redone there, the others kept as they were
    idx = _index(copy)
    redone = idx["runs"][0]["id"]
    man = json.loads((copy / redone / "manifest.json").read_text())
    man["started"] = "2026-12-05T09:00:00+00:00"
    (copy / redone / "manifest.json").write_text(json.dumps(man))
    kept = idx["runs"][1]["id"]
    for argv in (["report", str(campaign), str(copy), "--out", str(tmp_path / "d")],
                 ["compare", str(campaign), str(copy)]):
        assert main(argv) == 2, argv
        line = _one_line(capsys.readouterr().err)
        assert f"{campaign / kept} and {copy / kept} are the same run (run id {kept}, " \
               "started 2026-12-01T10:00:" in line and "on vm)" in line, line
    with pytest.raises(ResultsError, match="a copy of a campaign cannot be pooled"):
        pool([campaign, copy])


def test_independent_campaigns_are_still_pooled(campaign: Path, tmp_path: Path) -> None:
    _stamp(campaign, "2026-12-01T10:00")
    other = write_campaign(tmp_path / "again", counts=(1, 3), seconds=5, repetitions=2,
                           campaign="inputs", seed=5)
    _stamp(other, "2026-12-02T10:00")  # the same run ids, started another day
    assert len(pool([campaign, other]).runs) == 16
    _stamp(other, "2026-12-01T10:00", host="other-vm")  # the same time on another machine
    assert len(pool([campaign, other]).runs) == 16
