"""Dissector unit tests on crafted packets (no root): every submessage kind in both
endiannesses, fragments, IGMP and PIM, pcap and pcapng, and each malformation counted
under its named reason."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest
from scapy.layers.inet import IP, UDP
from scapy.packet import Raw

from captures import dissect as dz
from tests.helpers import craft as c


@pytest.fixture(scope="module", autouse=True)
def _lib_built() -> None:
    dz._lib()  # fail loudly (not skip) when the native library is missing


def one_message(le: bool) -> bytes:
    return c.rtps_header() + b"".join([
        c.info_dst(le=le), c.info_ts(le=le), c.data(5, b"\x11" * 40, le=le),
        c.data_frag(6, 1, 2, 100, 300, b"\x22" * 200, le=le),
        c.heartbeat(1, 6, 7, le=le), c.acknack(3, 40, [0, 2, 35], 9, le=le),
        c.nack_frag(6, 1, 3, [1], le=le), c.gap(2, 4, le=le), c.hb_frag(6, 3, le=le),
        c.info_src(le=le), c.info_reply(le=le), c.pad(le=le),
        c.sm(0x18, b"\x00" * 8, le=le),  # DATA_BATCH (counted, not interpreted)
        c.sm(0x81, b"\x00" * 4, le=le),  # vendor-specific
    ])


@pytest.mark.parametrize("le", [True, False], ids=["little", "big"])
@pytest.mark.parametrize("ng", [False, True], ids=["pcap", "pcapng"])
def test_every_submessage_kind(tmp_path: Path, le: bool, ng: bool) -> None:
    f = c.write_pcap(tmp_path / "x.pcap", [c.udp_frame(one_message(le))], ng=ng)
    d = dz.dissect(f)
    assert d.format == ("pcapng" if ng else "pcap")
    assert d.bad == {}
    assert d.rtps_counts() == {
        "INFO_DST": 1, "INFO_TS": 1, "DATA": 1, "DATA_FRAG": 1, "HEARTBEAT": 1, "ACKNACK": 1,
        "NACK_FRAG": 1, "GAP": 1, "HEARTBEAT_FRAG": 1, "INFO_SRC": 1, "INFO_REPLY": 1, "PAD": 1,
        "DATA_BATCH": 1, "VENDOR_0x81": 1}
    s = {dz.submessage_name(int(r["id"])): r for r in d.subs}
    assert s["DATA"]["seq"] == 5 and s["DATA"]["plen"] == 44  # encapsulation + 40
    assert s["DATA"]["writer_eid"] == c.USER_WRITER and s["DATA"]["cls"] == dz.C_USER
    assert s["INFO_TS"]["cls"] == dz.C_USER  # INFO_* take the class of what follows
    assert d.prefix_hex(int(s["DATA"]["dst_prefix"])) == c.PREFIX_B.hex()
    assert (s["DATA_FRAG"]["seq"], s["DATA_FRAG"]["aux1"], s["DATA_FRAG"]["aux2"],
            s["DATA_FRAG"]["seq2"], s["DATA_FRAG"]["plen"]) == (6, 1, 2, 300, 200)
    assert (s["HEARTBEAT"]["seq"], s["HEARTBEAT"]["seq2"], s["HEARTBEAT"]["aux1"]) == (1, 6, 7)
    # bits 0, 2, 35 of base 3: NACKs 3, 5, 38
    a = s["ACKNACK"]
    assert (a["seq"], a["aux2"], a["plen"], a["seq2"], a["aux1"]) == (3, 40, 3, 38, 9)
    assert (s["NACK_FRAG"]["seq"], s["NACK_FRAG"]["plen"]) == (6, 1)
    assert (s["GAP"]["seq"], s["GAP"]["seq2"]) == (2, 4)
    assert (s["HEARTBEAT_FRAG"]["seq"], s["HEARTBEAT_FRAG"]["aux1"]) == (6, 3)
    # after INFO_SRC the sender is PREFIX_B
    assert d.prefix_hex(int(s["PAD"]["src_prefix"])) == c.PREFIX_B.hex()
    assert d.prefix_hex(int(s["HEARTBEAT"]["src_prefix"])) == c.PREFIX_A.hex()


def test_fragmented_datagram_reassembled_out_of_order(tmp_path: Path) -> None:
    msg = c.rtps_header() + b"".join(c.info_ts() + c.data(i, b"\x33" * 100) for i in range(1, 101))
    frags = c.fragmented(c.udp_frame(msg, ipid=77))
    assert len(frags) == 10  # 100 x (12 + 128) + 20 + 8 = 14028 B in 1480-byte pieces
    frames = [frags[0], *frags[2:], frags[1]]  # second fragment arrives last
    d = dz.dissect(c.write_pcap(tmp_path / "f.pcap", frames))
    assert d.bad == {}
    assert d.rtps_counts() == {"INFO_TS": 100, "DATA": 100}
    assert d.fragment_frames() == 10 and d.reassembled() == 1
    done = d.frames[d.frames["flags"] & dz.F_REASM != 0]
    assert int(done["nfrags"][0]) == 10 and int(done["ipid"][0]) == 77
    assert set(d.subs["frame"]) == {9}  # submessages belong to the completing frame
    assert sorted(d.subs[d.subs["id"] == 0x15]["seq"]) == list(range(1, 101))


def test_missing_fragment_is_incomplete(tmp_path: Path) -> None:
    frags = c.fragmented(c.udp_frame(c.rtps_header() + c.data(1, b"z" * 4000)))
    d = dz.dissect(c.write_pcap(tmp_path / "f.pcap", frags[:-1]))
    assert d.rtps_counts() == {}
    assert d.bad == {"frag_incomplete": 1}


def test_igmp_and_pim(tmp_path: Path) -> None:
    inner = IP(src="10.0.1.10", dst="239.1.1.1") / UDP(sport=1, dport=7401) / Raw(
        c.rtps_header() + c.info_ts() + c.data(1, b"q" * 8))
    d = dz.dissect(c.write_pcap(tmp_path / "c.pcap", c.igmp_frames() + c.pim_frames(inner)))
    assert d.bad == {}
    assert d.igmp_counts() == {"query": 2, "report_v2": 1, "report_v1": 1, "leave": 1,
                               "report_v3": 1}
    assert d.pim_counts() == {"hello": 1, "register": 1, "register_stop": 1, "join_prune": 1,
                              "bootstrap": 1, "assert": 1, "candidate_rp": 1}
    q = d.ctls[(d.ctls["proto"] == 2) & (d.ctls["type"] == 0x11)]
    assert sorted(q["version"]) == [2, 3]
    recs = d.ctls[(d.ctls["rec"] == 1) & (d.ctls["proto"] == 2)]
    assert sorted(recs["group"]) == [0xEF010101, 0xEF010102]
    jp = d.ctls[(d.ctls["proto"] == 103) & (d.ctls["type"] == 3) & (d.ctls["rec"] == 1)]
    assert list(jp["group"]) == [0xEF010101] and list(jp["rtype"]) == [1]
    assert d.rtps_counts() == {"INFO_TS": 1, "DATA": 1}  # RTPS inside the Register


def test_sedp_topic(tmp_path: Path) -> None:
    msg = c.rtps_header() + c.info_ts() + c.sedp_publication("Throughput", "TestData_t", 0x102)
    d = dz.dissect(c.write_pcap(tmp_path / "s.pcap", [c.udp_frame(msg)]))
    assert len(d.topics) == 1
    t = d.topics[0]
    assert t["topic"] == b"Throughput" and t["type"] == b"TestData_t" and t["is_reader"] == 0
    assert t["guid"].tobytes() == c.PREFIX_A + struct.pack(">I", 0x102)
    assert d.subs["cls"][1] == dz.C_DISCOVERY


# ---- malformed input: counted, never fatal ----------------------------------------------
def _dissect_msg(tmp_path: Path, msg: bytes) -> dz.Dissection:
    return dz.dissect(c.write_pcap(tmp_path / "m.pcap", [c.udp_frame(msg)]))


def test_submessage_running_past_the_end(tmp_path: Path) -> None:
    msg = c.rtps_header() + c.info_ts() + c.sm(0x15, b"\x00" * 20, length=500)
    d = _dissect_msg(tmp_path, msg)
    assert d.bad == {"rtps_bad_submessage_length": 1}
    assert d.rtps_counts() == {"INFO_TS": 1}


def test_unknown_submessage_id(tmp_path: Path) -> None:
    d = _dissect_msg(tmp_path, c.rtps_header() + c.sm(0x42, b"\x00" * 4) + c.info_ts())
    assert d.bad == {"rtps_unknown_id": 1}
    assert d.rtps_counts() == {"UNKNOWN_0x42": 1, "INFO_TS": 1}


def test_submessage_too_short_for_its_kind(tmp_path: Path) -> None:
    d = _dissect_msg(tmp_path, c.rtps_header() + c.sm(0x07, b"\x00" * 12))
    assert d.bad == {"rtps_submessage_too_short": 1}


def test_short_rtps_header(tmp_path: Path) -> None:
    d = _dissect_msg(tmp_path, b"RTPS\x02\x01")
    assert d.bad == {"rtps_short_header": 1}


def test_snap_cut_and_truncated_file(tmp_path: Path) -> None:
    msg = c.rtps_header() + c.info_ts() + c.data(1, b"a" * 300)
    raw = bytes(c.udp_frame(msg))
    # classic pcap by hand: a frame cut at 100 bytes (caplen 100, len full), then a
    # record whose data runs past the end of the file
    hdr = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)
    rec1 = struct.pack("<IIII", 1, 0, 100, len(raw)) + raw[:100]
    rec2 = struct.pack("<IIII", 2, 0, len(raw), len(raw)) + raw[:50]
    f = tmp_path / "t.pcap"
    f.write_bytes(hdr + rec1 + rec2)
    d = dz.dissect(f)
    assert d.bad == {"snap_cut": 1, "file_truncated": 1}
    assert d.packets == 1 and d.frames["flags"][0] & dz.F_SNAPCUT


def test_not_a_capture(tmp_path: Path) -> None:
    f = tmp_path / "junk.pcap"
    f.write_bytes(b"hello world, certainly not a pcap file")
    with pytest.raises(dz.DissectError, match=r"junk\.pcap: not a pcap or pcapng file"):
        dz.dissect(f)
    with pytest.raises(dz.DissectError, match="No such file"):
        dz.dissect(tmp_path / "missing.pcap")


def test_structs_match_numpy() -> None:
    lib = dz._lib()
    sizes = [lib.mcl_sizeof(i) for i in range(4)]
    assert sizes == [dz.FRAME_DTYPE.itemsize, dz.SUB_DTYPE.itemsize, dz.CTL_DTYPE.itemsize,
                     dz.TOPIC_DTYPE.itemsize]
    assert "frag_incomplete" in dz.reason_names()
    assert np.dtype(dz.FRAME_DTYPE).names[0] == "ts"
