"""The runner's view of discovery: incremental reads of the agents' stderr."""

from __future__ import annotations

from pathlib import Path

from experiments.discovery_watch import DiscoveryWatch


def test_marks_found_once_written_also_when_split_between_reads(tmp_path: Path) -> None:
    watch = DiscoveryWatch(tmp_path)
    (tmp_path / "pub0.stderr").write_bytes(b"config: " + b"x" * 50_000 + b"\n")
    assert watch.poll(["pub0", "sub0"]) == set()  # sub0 has no file yet
    with (tmp_path / "pub0.stderr").open("ab") as f:
        f.write(b"publisher 0: discovery comp")
    assert watch.poll(["pub0"]) == set()
    with (tmp_path / "pub0.stderr").open("ab") as f:
        f.write(b"lete: 75 subscribers after 41.2 s (process start)\n")
    (tmp_path / "sub0.stderr").write_bytes(b"subscriber 0: discovery complete: 75 publishers\n")
    assert watch.poll(["pub0", "sub0"]) == {"pub0", "sub0"}


def test_reads_only_what_a_file_gained(tmp_path: Path) -> None:
    watch = DiscoveryWatch(tmp_path)
    path = tmp_path / "sub3.stderr"
    path.write_bytes(b"a" * 1000)
    watch.poll(["sub3"])
    # an earlier mark rewritten in place is not read again: only appended bytes are
    path.write_bytes(b"discovery complete" + b"a" * 982)
    assert watch.poll(["sub3"]) == set()
