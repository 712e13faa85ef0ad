"""What a cluster server may send back (topologies/cluster.py, Cluster.fetch): a server
that is compromised, or just wrong, must not fill the controller's disk. The archive comes
through a real pipe from a real process (``cat`` of a crafted tar standing in for the
server's ``tar -cf -``); only the ssh hop is left out.
"""

from __future__ import annotations

import io
import tarfile
from pathlib import Path
from typing import Any

import pytest

from topologies import cluster


class _Server:
    """Stands for a Remote: its command prints the crafted archive."""

    name = "srv2"

    def __init__(self, archive: Path) -> None:
        self.archive = archive

    def command(self, node: str, what: str, argv: list[str], **_: Any) -> list[str]:
        return ["cat", str(self.archive)]


def _cluster(archive: Path) -> cluster.Cluster:
    c = cluster.Cluster.__new__(cluster.Cluster)
    c.where = {"h2": 2}
    c.remotes = {2: _Server(archive)}  # type: ignore[dict-item]
    c.staging = {2: "/var/tmp/mcastlab-x"}
    return c


def _tar(path: Path, members: list[tarfile.TarInfo], data: bytes = b"") -> Path:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.GNU_FORMAT) as tar:
        for m in members:
            tar.addfile(m, io.BytesIO(data[: m.size]) if m.size else None)
    path.write_bytes(buf.getvalue())
    return path


def _file(name: str, size: int) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.size = size
    return info


def test_a_capture_ring_comes_back(tmp_path: Path) -> None:
    local = tmp_path / "run" / "h2-eth0.pcap"
    local.parent.mkdir()
    names = ["h2.h2-eth0.pcap0", "h2.h2-eth0.pcap1"]
    archive = _tar(tmp_path / "a.tar", [_file(n, 5) for n in names], b"12345")
    got = _cluster(archive).fetch("h2", local)
    assert sorted(p.name for p in got) == ["h2-eth0.pcap0", "h2-eth0.pcap1"]
    assert all(p.read_bytes() == b"12345" for p in got)


def test_too_many_members_are_refused(tmp_path: Path) -> None:
    local = tmp_path / "run" / "h2-eth0.pcap"
    local.parent.mkdir()
    n = cluster.FETCH_MAX_MEMBERS + 500
    archive = _tar(tmp_path / "a.tar", [_file(f"h2.h2-eth0.pcap{i}", 1) for i in range(n)],
                   b"x")
    with pytest.raises(RuntimeError, match=rf"more than {cluster.FETCH_MAX_MEMBERS} files"):
        _cluster(archive).fetch("h2", local)
    assert len(list(local.parent.iterdir())) == cluster.FETCH_MAX_MEMBERS


def test_a_sparse_member_is_refused(tmp_path: Path) -> None:
    """A GNU sparse member: a few bytes in the archive that stand for 64 MiB on disk."""
    local = tmp_path / "run" / "h2-eth0.pcap"
    local.parent.mkdir()
    src = tmp_path / "sparse"
    with src.open("wb") as f:
        f.seek(64 << 20)
        f.write(b"end")
    archive = tmp_path / "a.tar"
    import subprocess

    subprocess.run(["tar", "-C", str(tmp_path), "--sparse", "--transform",
                    "s/sparse/h2.h2-eth0.pcap0/", "-cf", str(archive), "sparse"], check=True)
    assert archive.stat().st_size < 1 << 20
    with pytest.raises(RuntimeError, match="is a sparse file"):
        _cluster(archive).fetch("h2", local)
    assert list(local.parent.iterdir()) == []


def test_a_member_larger_than_the_disk_can_take_is_refused(tmp_path: Path) -> None:
    """The size in a member's header is checked before any byte of it is written."""
    local = tmp_path / "run" / "h2-eth0.pcap"
    local.parent.mkdir()
    room = cluster._fetch_room(local.parent)
    info = _file("h2.h2-eth0.pcap0", room + 1)  # a header claiming more than the room
    archive = tmp_path / "a.tar"
    archive.write_bytes(info.tobuf(tarfile.GNU_FORMAT, "utf-8", "surrogateescape")
                        + b"\0" * 4096)
    with pytest.raises(RuntimeError, match=r"more than the -?\d+ this machine's disk can take"):
        _cluster(archive).fetch("h2", local)
    assert list(local.parent.iterdir()) == []
