"""Wire tables, the CLI and the capture helpers on crafted captures (no root).

The crafted exchange (one capture point, timestamps in seconds)::

    t=0.000         A's SEDP publication: writer A is on topic "Throughput"
    t=0.001..0.010  writer A sends DATA sn 1..10 to 239.255.0.1 (first sends)
    t=0.100..0.103  readers R1..R4 each ACKNACK sn 5 and 6 (a NACK storm: 4 readers, 4 ms)
    t=0.110         A repairs sn 5 and 6 unicast to R1 (2 repairs, 2 x 50 payload bytes)
    t=0.200         A HEARTBEAT 1..10
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from captures import capture, commands, wire
from captures.inspect_sample import parse_guid, sample_life
from mcastlab.cli import main
from tests.helpers import craft as c

READERS = [b"\x01\x10" + bytes([i]) * 10 for i in range(1, 5)]
PAYLOAD = b"p" * 46  # + 4 bytes of encapsulation = 50 payload bytes per DATA
WRITER = f"{c.PREFIX_A.hex()}:{c.USER_WRITER:08x}"


def exchange() -> list:
    frames = []

    def add(pkt, t: float) -> None:
        pkt.time = 1000.0 + t
        frames.append(pkt)

    add(c.udp_frame(c.rtps_header() + c.info_ts()
                    + c.sedp_publication("Throughput", "T", c.USER_WRITER)), 0.0)
    for sn in range(1, 11):
        add(c.udp_frame(c.rtps_header() + c.info_ts() + c.data(sn, PAYLOAD), ipid=sn), sn * 0.001)
    for i, r in enumerate(READERS):
        msg = c.rtps_header(r) + c.info_dst(c.PREFIX_A) + c.acknack(5, 2, [0, 1], 1)
        add(c.udp_frame(msg, src=f"10.0.0.{10 + i}", dst="10.0.0.1", ipid=100 + i), 0.1 + i * 0.001)
    for sn in (5, 6):
        add(c.udp_frame(c.rtps_header() + c.info_dst(READERS[0]) + c.data(sn, PAYLOAD),
                        dst="10.0.0.10", ipid=200 + sn), 0.11)
    add(c.udp_frame(c.rtps_header() + c.heartbeat(1, 10, 3)), 0.2)
    return frames


@pytest.fixture()
def run_dir(tmp_path: Path) -> Path:
    (tmp_path / "pcaps").mkdir()
    c.write_pcap(tmp_path / "pcaps" / "h1-eth0.pcap", exchange())
    (tmp_path / "pcaps" / "points.json").write_text(json.dumps({"h1-eth0": {"ips": ["10.0.0.1"]}}))
    return tmp_path


def test_summary_and_tables(run_dir: Path) -> None:
    s = wire.analyse_run(run_dir)
    assert s["packets"] == 18
    assert s["rtps_submessages"] == {"DATA": 13, "INFO_TS": 11, "INFO_DST": 6, "ACKNACK": 4,
                                     "HEARTBEAT": 1}
    assert s["user_data_bytes"] == 12 * 50 and s["repair_bytes"] == 2 * 50
    assert s["repair_ratio"] == pytest.approx(100 / 500)
    assert s["nack_storms"] == 1
    assert s["duration_s"] == pytest.approx(0.2)
    assert s["bad"] == {}
    assert json.loads((run_dir / "wire" / "summary.json").read_text()) == s
    rep = pd.read_parquet(run_dir / "wire" / "repairs.parquet")
    row = rep.set_index("writer").loc[WRITER]
    assert [row["first_data"], row["repair_data"], row["nacked_sns"]] == [10, 2, 8]
    assert row["topic"] == "Throughput"
    assert pd.read_parquet(run_dir / "wire" / "topics.parquet")["topic"].tolist() == ["Throughput"]
    storms = pd.read_parquet(run_dir / "wire" / "storms.parquet")
    assert storms[["first_sn", "readers"]].values.tolist() == [[5, 4]]
    sm = pd.read_parquet(run_dir / "wire" / "submessages.parquet")
    data = sm[sm["kind"] == "DATA"].groupby(["direction", "cast", "traffic"])["submessages"].sum()
    assert data.to_dict() == {("out", "multicast", "user"): 10, ("out", "unicast", "user"): 2,
                              ("out", "multicast", "discovery"): 1}
    acks = sm[sm["kind"] == "ACKNACK"].groupby("direction")["submessages"].sum()
    assert acks.to_dict() == {"in": 4}
    rates = pd.read_parquet(run_dir / "wire" / "rates.parquet")
    assert set(rates["kind"]) == {"HEARTBEAT", "ACKNACK"} and len(rates) == 5


def test_inspect_sample_life(run_dir: Path) -> None:
    points = wire.discover_pcaps(run_dir / "pcaps")
    df = sample_life(points, WRITER, 5)
    assert df["event"].tolist() == ["DATA first", "ACKNACK", "ACKNACK", "ACKNACK", "ACKNACK",
                                    "DATA repair", "HEARTBEAT"]
    assert parse_guid(WRITER.replace(":", ".")) == WRITER
    with pytest.raises(ValueError, match="--writer 'zz': expected a GUID of 32 hex digits"):
        parse_guid("zz")


def test_cli_wire_json_and_inspect(run_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pcap = run_dir / "pcaps" / "h1-eth0.pcap"
    assert main(["wire", str(pcap), "--json", "--out", str(run_dir / "single")]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["packets"] == 18 and out["rtps_submessages"]["DATA"] == 13
    assert (run_dir / "single" / "summary.json").exists()
    assert main(["wire", str(run_dir)]) == 0
    assert "wire totals" in capsys.readouterr().out
    assert main(["inspect", str(pcap), "--writer", WRITER, "--seq", "6", "--json"]) == 0
    events = [json.loads(x)["event"] for x in capsys.readouterr().out.splitlines()]
    assert events.count("DATA repair") == 1
    assert main(["wire", str(run_dir / "nope")]) == 2
    assert "no such run directory or capture file" in capsys.readouterr().err
    assert commands.register  # the module the CLI loads


def test_ring_files_grouped_by_point(tmp_path: Path) -> None:
    for name in ("s1-eth1.pcap0", "s1-eth1.pcap1", "h1-eth0.pcap", "h1-eth0.tcpdump.log"):
        (tmp_path / name).write_bytes(b"")
    pts = wire.discover_pcaps(tmp_path)
    assert sorted(pts) == ["h1-eth0", "s1-eth1"] and len(pts["s1-eth1"]) == 2


def test_tcpdump_argv_and_stats() -> None:
    argv = capture.tcpdump_argv("eth0", Path("/r/pcaps/p.pcap"), 200, 4, 50)
    assert argv[:4] == ["tcpdump", "-n", "-i", "eth0"] and argv[-4:] == ["-C", "50", "-W", "4"]
    with pytest.raises(capture.CaptureError, match="ring_files=4 needs ring_mb > 0"):
        capture.tcpdump_argv("eth0", Path("p"), 0, 4, 0)
    text = ("tcpdump: listening on eth0\n1234 packets captured\n1300 packets received by filter\n"
            "66 packets dropped by kernel\n")
    assert capture.parse_stats(text) == {"captured": 1234, "received": 1300, "dropped": 66,
                                         "dropped_by_interface": None}


def test_fragments_take_their_own_datagram(tmp_path: Path) -> None:
    """A fragmented RTPS datagram, then (IP id reused, as ids wrap) one lone fragment
    whose datagram never completes: 3 fragment frames of payload rtps, 1 of
    fragment_incomplete -- the payload comes from the frame's own datagram."""
    big = c.rtps_header() + b"".join(c.info_ts() + c.data(i, b"\x55" * 100) for i in range(30))
    frags = c.fragmented(c.udp_frame(big, ipid=7))
    assert len(frags) == 3
    lone = c.fragmented(c.udp_frame(big, ipid=7, dst="239.255.0.2"))[0]
    for i, f in enumerate([*frags, lone]):
        f.time = 1000.0 + i * 0.001
    c.write_pcap(tmp_path / "p.pcap", [*frags, lone])
    s, out = wire.analyse_path(tmp_path / "p.pcap")
    pk = pd.read_parquet(out / "packets.parquet")
    assert pk.groupby("payload")["fragments"].sum().to_dict() == {"rtps": 3,
                                                                  "fragment_incomplete": 1}
    assert s["ip_fragments"] == 4 and s["bad"] == {"frag_incomplete": 1}


def test_second_origin_is_the_first_timestamp(tmp_path: Path) -> None:
    """Two points; the second point's file starts earlier, and one of the first point's
    frames goes back in time: every `second` counts from the run's earliest frame."""
    def frame(t: float, ipid: int) -> c.Packet:
        f = c.udp_frame(c.rtps_header() + c.info_ts() + c.data(ipid, b"x" * 10), ipid=ipid)
        f.time = t
        return f

    (tmp_path / "pcaps").mkdir()
    c.write_pcap(tmp_path / "pcaps" / "a.pcap", [frame(1000.9, 1), frame(1000.2, 2),
                                                  frame(1002.5, 3)])
    c.write_pcap(tmp_path / "pcaps" / "b.pcap", [frame(1000.5, 4), frame(1001.4, 5)])
    s = wire.analyse_run(tmp_path)
    assert s["duration_s"] == pytest.approx(2.3)
    pk = pd.read_parquet(tmp_path / "wire" / "packets.parquet")
    got = pk.groupby(["point", "second"])["packets"].sum().to_dict()
    assert got == {("a", 0): 2, ("a", 2): 1, ("b", 0): 1, ("b", 1): 1}


def test_row_api_is_bounded(run_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from captures import dissect as dz

    monkeypatch.setenv(dz.ROWS_LIMIT_ENV, "0.001")  # ~1 KiB of rows: 18 frames are more
    with pytest.raises(dz.DissectError, match=r"MiB of per-packet rows .* use captures\.wire"):
        dz.dissect(run_dir / "pcaps" / "h1-eth0.pcap")
    assert wire.analyse_run(run_dir)["packets"] == 18  # the wire tables keep no rows


def test_unicast_fan_out_to_readers_of_one_host_is_not_repair(tmp_path: Path) -> None:
    """Two readers in two processes of one host (one address, two unicast ports): a sample
    sent to each is two first sends; sent again to one of them, one repair. Keyed on the
    address alone, a unicast 75x75's fan-out to the ~18 readers of a host read as 17.7 times
    its first sends in repairs."""
    frames = []
    for k, (sn, port) in enumerate([(1, 7411), (1, 7413), (2, 7411), (2, 7413), (1, 7411)]):
        pkt = c.udp_frame(c.rtps_header() + c.info_ts() + c.data(sn, PAYLOAD), dst="10.0.0.20",
                          dport=port, ipid=10 + k)
        pkt.time = 1000.0 + k * 0.001
        frames.append(pkt)
    (tmp_path / "pcaps").mkdir()
    c.write_pcap(tmp_path / "pcaps" / "h1-eth0.pcap", frames)
    (tmp_path / "pcaps" / "points.json").write_text(json.dumps({"h1-eth0": {"ips": ["10.0.0.1"]}}))
    s = wire.analyse_run(tmp_path)
    assert s["repair_bytes"] == 50 and s["user_data_bytes"] == 5 * 50, s
    assert s["repair_ratio"] == pytest.approx(50 / 200)
