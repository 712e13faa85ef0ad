"""Loading a campaign: schema checks with one-line errors, incomplete runs, aggregation."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from analysis.analyse import analyse
from analysis.load import ResultsError, aggregate_throughput, load_campaign
from analysis.synthetic import write_campaign


@pytest.fixture
def small(tmp_path: Path) -> Path:
    return write_campaign(tmp_path / "c", counts=(1, 3), seconds=5, pings_per_s=20)


def test_loads_every_table(small: Path):
    c = load_campaign(small)
    assert len(c.runs) == 4
    assert set(c.runs["mode"]) == {"unicast", "multicast"}
    assert len(c.latency) == 4 * 5 * 20
    assert c.runs["wire_available"].all()
    assert c.runs["wire_meta_share"].between(0, 1).all()
    rid = c.runs["run_id"].iloc[2]
    direct = pd.read_parquet(small / rid / "tables" / "latency.parquet")["latency_us"]
    assert (c.latency_of(rid) == direct.to_numpy()).all()
    assert list(c.latency.loc[c.latency["run_id"] == rid, "latency_us"]) == list(direct)


def test_aggregate_throughput_sums_subscribers_and_drops_partial_seconds(small: Path):
    rid = "lan-rel-100B-3x3-unicast-r0"
    path = small / rid / "tables" / "throughput.parquet"
    thr = pd.read_parquet(path)
    # subscriber 2 misses second 5: that second must not count as a dip
    thr = thr[~((thr["subscriber"] == 2) & (thr["second"] == 5))]
    thr.to_parquet(path, index=False)
    agg = aggregate_throughput(load_campaign(small))
    mine = agg[agg["run_id"] == rid]
    assert list(mine["second"]) == [1, 2, 3, 4]
    expected = thr[thr["second"] == 1]["samples_per_s"].sum()
    assert mine["samples_per_s"].iloc[0] == pytest.approx(expected)


def test_incomplete_runs_are_skipped_with_reason(small: Path):
    rid = "lan-rel-100B-1x1-multicast-r0"
    manifest = small / rid / "manifest.json"
    manifest.write_text(json.dumps({"status": "incomplete"}))
    c = load_campaign(small)
    assert rid not in set(c.runs["run_id"])
    assert (rid, "manifest status 'incomplete'") in c.skipped


def test_runs_never_started_are_told_from_interrupted_ones(small: Path):
    """A run of the campaign's matrix with no directory was never started (a campaign run
    with --only, or stopped before it); one with a directory but no manifest was cut off."""
    import shutil

    assert (small / "campaign.json").exists()
    never, cut = "lan-rel-100B-1x1-multicast-r0", "lan-rel-100B-3x3-multicast-r0"
    shutil.rmtree(small / never)
    (small / cut / "manifest.json").unlink()
    c = load_campaign(small)
    assert (never, "not run") in c.skipped
    assert (cut, "no manifest.json (run incomplete)") in c.skipped
    assert not {never, cut} & set(c.runs["run_id"])


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: (d / "config.json").write_text('{"run_id": "x"}'), "missing key 'group'"),
        (lambda d: _patch(d / "config.json", mode="broadcast"),
         "key 'mode' is 'broadcast'; allowed values: unicast, multicast"),
        (lambda d: _patch(d / "config.json", subscribers=0), "key 'subscribers' must be"),
        (lambda d: (d / "tables" / "latency.parquet").unlink(), "latency.parquet: file is missing"),
        (lambda d: pd.DataFrame({"run_id": ["x"], "sample": [0]}).to_parquet(
            d / "tables" / "latency.parquet"), "missing column(s) latency_us"),
        (lambda d: (d / "tables" / "throughput.parquet").write_bytes(b"garbage"),
         "not a readable Parquet file"),
        (lambda d: (d / "config.json").write_text("{"), "config.json: not valid JSON"),
    ],
)
def test_bad_files_give_one_line_errors(small: Path, mutate, message):
    run_dir = small / "lan-rel-100B-3x3-unicast-r0"
    mutate(run_dir)
    with pytest.raises(ResultsError) as err:
        load_campaign(small)
    text = str(err.value)
    assert message in text
    assert str(run_dir) in text
    assert "\n" not in text


def test_no_complete_run(tmp_path: Path):
    with pytest.raises(ResultsError, match="not a directory"):
        load_campaign(tmp_path / "nowhere")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ResultsError, match="no complete run"):
        load_campaign(tmp_path / "empty")


def _patch(path: Path, **changes) -> None:
    data = json.loads(path.read_text())
    data.update(changes)
    path.write_text(json.dumps(data))


def test_socket_drops_from_the_manifest(small: Path):
    """The hosts' UDP counters (manifest "udp") give the share of datagrams dropped at full
    socket buffers; runs recorded without them give NaN."""
    rid = "lan-rel-100B-3x3-multicast-r0"
    _patch(small / rid / "manifest.json",
           udp={"h1": {"InDatagrams": 700, "RcvbufErrors": 100},
                "h2": {"InDatagrams": 200, "RcvbufErrors": 0}})
    runs = load_campaign(small).runs.set_index("run_id")
    assert runs.at[rid, "wire_socket_drop_share"] == pytest.approx(0.1)
    assert runs["wire_socket_drop_share"].drop(rid).isna().all()


def test_host_fanout_from_the_manifest(small: Path):
    """The hosts' socket fan-out (manifest "host_fanout") becomes a wire metric, in the
    verdict table's wire evidence; runs recorded without it give NaN."""
    from analysis.verdicts import wire_cell

    rid = "lan-rel-100B-3x3-multicast-r0"
    _patch(small / rid / "manifest.json",
           host_fanout={"h1": {"udp_arrived": 1000, "socket_deliveries": 5500},
                        "h2": {"udp_arrived": 1000, "socket_deliveries": 500}})
    camp = load_campaign(small)
    runs = camp.runs.set_index("run_id")
    assert runs.at[rid, "wire_host_fanout"] == pytest.approx(3.0)
    assert runs["wire_host_fanout"].drop(rid).isna().all()
    pair = next(p for p in analyse(camp, n_boot=49).pairs if p.subscribers == 3)
    assert "socket deliveries per arriving datagram n/a → 3.00" in wire_cell(pair)


def test_capture_drops_warn_in_the_wire_evidence(small: Path):
    """Packets tcpdump lost in the kernel (manifest "capture_drops") give a share per run,
    and above 1% the verdict table's wire evidence says the capture figures undercount."""
    from analysis.analyse import analyse
    from analysis.verdicts import verdict_table

    rid = "lan-rel-100B-3x3-unicast-r0"
    path = small / rid / "manifest.json"
    man = json.loads(path.read_text())
    man["capture_drops"] = {"h1-eth0": {"received": 1000, "dropped": 420},
                            "h2-eth0": {"received": 1000, "dropped": None}}
    path.write_text(json.dumps(man))
    campaign = load_campaign(small)
    runs = campaign.runs.set_index("run_id")
    assert runs.at[rid, "wire_capture_drop_share"] == pytest.approx(0.21)
    analysis = analyse(campaign, n_boot=49)
    table = verdict_table(analysis).set_index("participants")
    wire = table.loc["3×3", "wire evidence"]
    # the synthetic campaign always has wire tables (test_loads_every_table): a skip here
    # would hide the warning's loss
    assert "the capture lost 21% → " in wire and "undercount" in wire, wire
    assert "capture lost" not in table.loc["1×1", "wire evidence"]
    # The wire figure draws those points hollow.
    from analysis.verdicts import capture_lossy
    lossy = {(p.subscribers, m) for p in analysis.pairs for m, w in p.wire.items()
             if capture_lossy(w)}
    assert lossy == {(3, "unicast")}


def test_too_few_latency_samples_are_named_not_compared(small: Path):
    from analysis.analyse import analyse
    from analysis.verdicts import verdict_table

    rid = "lan-rel-100B-3x3-multicast-r0"
    path = small / rid / "tables" / "latency.parquet"
    pd.read_parquet(path).head(1).to_parquet(path, index=False)
    table = verdict_table(analyse(load_campaign(small), n_boot=49)).set_index("participants")
    row = table.loc["3×3"]
    assert row["latency verdict"] == "not compared"
    assert "too few samples: unicast 100, multicast 1" in row["latency test"]
    assert "run longer" in row["explanation"]
    assert table.loc["1×1", "latency verdict"] != "not compared"


def test_kernel_counters_are_evidence_without_a_capture(small: Path, tmp_path: Path):
    """A run without a capture still records its hosts' socket drops and fan-out: they are
    the pair's evidence, named as the kernel's counters, never as the wire's; a pair with
    neither says it has no capture."""
    import shutil

    from analysis.verdicts import kernel_only, sentence, wire_cell

    captured = next(p for p in analyse(load_campaign(small), n_boot=49).pairs
                    if p.subscribers == 3)
    assert not kernel_only(captured)
    for rid in ("lan-rel-100B-3x3-unicast-r0", "lan-rel-100B-3x3-multicast-r0",
                "lan-rel-100B-1x1-unicast-r0", "lan-rel-100B-1x1-multicast-r0"):
        shutil.rmtree(small / rid / "wire")
    for rid, copies in (("lan-rel-100B-3x3-unicast-r0", 1000),
                        ("lan-rel-100B-3x3-multicast-r0", 3000)):
        _patch(small / rid / "manifest.json",
               host_fanout={"h1": {"udp_arrived": 1000, "socket_deliveries": copies}},
               udp={"h1": {"InDatagrams": 1000, "RcvbufErrors": 0}})
    an = analyse(load_campaign(small), n_boot=49)
    pairs = {p.subscribers: p for p in an.pairs}
    three = pairs[3]
    assert kernel_only(three)
    cell = wire_cell(three)
    assert cell.startswith("no capture; the hosts' kernel counters: ")
    assert "socket deliveries per arriving datagram 1.00 → 3.00" in cell
    assert "meta-traffic" not in cell
    text = sentence(three)
    assert "No capture; in the hosts' kernel counters the modes differ in: socket " in text
    assert "On the wire" not in text
    assert wire_cell(pairs[1]) == "no capture"
    assert sentence(pairs[1]).endswith("No capture, so no wire evidence.")
    # the wire figure draws the kernel counters' panels and names the empty ones
    from analysis.figures import wire_figure

    assert wire_figure(an, three.group, tmp_path)
