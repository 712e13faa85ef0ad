"""Issue 18, acceptance 2: paths a local user could plant are never followed by root.

Before, a network built without a results directory worked in ``/tmp/mcastlab-m`` + 3
base-36 characters: 46,656 names, all of which any local user could occupy with a symlink
to a directory of theirs, and root then wrote daemon configs into it (and deleted through
it at teardown). This test plants exactly those 46,656 symlinks, pointing at one bait
directory, builds and probes a routed network (pimd configs, run directories) and a LAN,
and checks the bait stayed empty and every symlink is still a symlink. The new work
directories come from ``mkdtemp`` (random, created fresh with mode 0700), so there is no
predictable name left to plant.
"""

from __future__ import annotations

import itertools
import os
import string
from collections.abc import Iterator
from pathlib import Path

import pytest

import topologies
from topologies import probe

pytestmark = [pytest.mark.netns, pytest.mark.timeout(300)]

ALPHABET = string.digits + string.ascii_lowercase


@pytest.fixture
def planted(tmp_path: Path) -> Iterator[tuple[Path, list[Path]]]:
    bait = tmp_path / "bait"
    bait.mkdir()
    links = []
    for chars in itertools.product(ALPHABET, repeat=3):
        link = Path(f"/tmp/mcastlab-m{''.join(chars)}")
        if not os.path.lexists(link):
            link.symlink_to(bait)
            links.append(link)
    try:
        yield bait, links
    finally:
        for link in links:
            if link.is_symlink():
                link.unlink()


def test_planted_symlinks_are_never_followed(planted: tuple[Path, list[Path]]) -> None:
    bait, links = planted
    assert len(links) > 46_000  # (names already present on the machine are left alone)
    planted_set = set(links)
    # smcroute: a routed network's daemon configs and run directories without pimd's 15-s
    # wait for its static RP (the paths are the same for every daemon: multicast/daemon.py)
    for family, params, members in (("routed", {"routers": 2, "hosts": 1,
                                                "mrouting": "smcroute"}, ["h2"]),
                                    ("lan", {"hosts": 3}, ["h2"])):
        spec = topologies.resolve(family, params)
        with topologies.build(spec) as net:
            assert not net.workdir.is_symlink() and net.workdir not in planted_set
            assert net.workdir.stat().st_mode & 0o777 == 0o700
            net.wait_converged(90)
            r = probe.probe(net, "h1", members, count=200, rate=200)
            assert r["hosts"][members[0]]["received"] >= 198, r["hosts"]
            workdir = net.workdir
        assert not workdir.exists()  # the private directory was removed, nothing else
    assert list(bait.iterdir()) == []
    assert all(link.is_symlink() for link in links)
