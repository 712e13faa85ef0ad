"""Paths a local user could plant are never followed by root.

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

import grp
import itertools
import os
import pwd
import string
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import topologies
from mcastlab.paths import REPO_ROOT
from tests.helpers import kernel_features
from topologies import probe

pytestmark = pytest.mark.timeout(300)

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


@kernel_features.routed
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


# ---- the campaign directory's parents (mcastlab/safepath.py) ---------------------------
#
#   /tmp/pytest-.../coowned        owned by a co-user ("nobody")
#        campaign/                 root's campaign directory (--results)
#          .RUN.partial/pcaps      where root's tcpdump writes (-w ... -Z root)
#
# The co-user cannot write into root's directories, but can rename `campaign` (it is in
# their directory) and put their own in its place, with `.RUN.partial/pcaps` a symlink to
# any directory: root then writes the capture there. Such a results path is refused before
# anything is built, naming the directory and its owner.

CO_USER = "nobody"
TINY = """[campaign]
name = "planted"
retries = 0
[topology]
name = "lan"
params = {{ hosts = 2, querier = false }}
[matrix]
participants = [1]
modes = ["unicast"]
execution_time = 4
[capture]
points = ["s1-eth2"]
snaplen = 256
"""


def _as_co_user(*argv: str) -> None:
    subprocess.run(["setpriv", "--reuid", CO_USER, "--regid", "nogroup", "--clear-groups",
                    *argv], check=True, capture_output=True, timeout=30)


@pytest.fixture
def shared_tmp() -> Iterator[Path]:
    """A directory the co-user can reach (pytest's own are root's alone, mode 0700)."""
    import shutil
    import tempfile

    d = Path(tempfile.mkdtemp(prefix="mcastlab-test-coowned-"))
    d.chmod(0o755)
    try:
        yield d
    finally:
        shutil.rmtree(d)


def test_results_under_a_directory_another_user_owns_are_refused_and_never_followed(
        shared_tmp: Path, tmp_path: Path) -> None:
    """A co-user who owns a parent of --results swaps the run directory's pcaps subfolder
    for a symlink to a directory of root's while the run is under way (the moment the run
    directory exists): before, root's tcpdump wrote its capture through it; now the path is
    refused before anything is built, and the bait stays empty."""
    bait = shared_tmp / "bait"  # stands for /etc: root's, not the co-user's
    bait.mkdir()
    coowned = shared_tmp / "coowned"
    coowned.mkdir()
    os.chown(coowned, pwd.getpwnam(CO_USER).pw_uid, -1)
    root = coowned / "campaign"
    scenario = tmp_path / "planted.toml"
    scenario.write_text(TINY.format())
    rid = "lan-rel-100B-1x1-unicast-r1"
    stop = threading.Event()
    swapped: list[str] = []

    def swap_when_the_run_starts() -> None:  # the co-user's side
        partial = root / f".{rid}.partial"
        while not stop.is_set():
            if (partial / "config.json").exists():
                try:
                    _as_co_user("mv", str(root), str(coowned / "moved"))
                    _as_co_user("mkdir", "-p", str(partial))
                    _as_co_user("ln", "-s", str(bait), str(partial / "pcaps"))
                    swapped.append("done")
                except subprocess.CalledProcessError as exc:
                    swapped.append(f"failed: {exc.stderr}")
                return
            time.sleep(0.005)

    co_user = threading.Thread(target=swap_when_the_run_starts)
    co_user.start()
    try:
        p = subprocess.run([sys.executable, "-m", "mcastlab.cli", "run", str(scenario),
                            "--results", str(root), "--no-progress"], capture_output=True,
                           text=True, timeout=240, cwd=REPO_ROOT)
    finally:
        stop.set()
        co_user.join()
    assert swapped in ([], ["done"]), swapped  # the co-user's steps work (when reached)
    assert list(bait.iterdir()) == [], "root wrote through the co-user's symlink"
    assert p.returncode == 2, p.stdout[-2000:] + p.stderr[-2000:]
    (line,) = p.stderr.strip().splitlines()
    assert line.startswith(f"mcastlab run: {root}: --results: another user could change this "
                           f"path ({coowned} is owned by {CO_USER})"), line
    assert not root.exists()


@pytest.mark.parametrize("layout, refused", [
    ("root-755", None),
    ("co-user-owned", "{d} is owned by nobody"),
    ("world-writable", "{d} is writable by every user"),
    ("group-writable-with-co-user", "{d} is writable by group nogroup (users "),
    ("sticky-root-child", None),
    ("sticky-co-user-child", "{d}/child is owned by nobody"),
    ("symlink-into-co-user-dir", "{d} is owned by nobody"),
    ("sudo-user-owned", None),
])
def test_who_could_change_a_results_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         layout: str, refused: str | None) -> None:
    """mcastlab/safepath.py over the layouts a shared lab server has."""
    from mcastlab import safepath

    nobody = pwd.getpwnam(CO_USER).pw_uid
    d = tmp_path / "d"
    d.mkdir(mode=0o755)
    d.chmod(0o755)
    target = d / "campaign"
    if layout == "co-user-owned":
        os.chown(d, nobody, -1)
    elif layout == "world-writable":
        d.chmod(0o777)
    elif layout == "group-writable-with-co-user":
        os.chown(d, 0, grp.getgrnam("nogroup").gr_gid)
        d.chmod(0o775)
    elif layout.startswith("sticky"):
        d.chmod(0o1777)
        (d / "child").mkdir()
        if layout == "sticky-co-user-child":
            os.chown(d / "child", nobody, -1)
        target = d / "child" / "campaign"
    elif layout == "symlink-into-co-user-dir":
        other = tmp_path / "other"
        other.mkdir()
        os.chown(other, nobody, -1)
        (d / "link").symlink_to(other)
        target = d / "link" / "campaign"
        refused = refused and refused.replace("{d}", str(other))
    elif layout == "sudo-user-owned":
        monkeypatch.setenv("SUDO_UID", str(nobody))  # the user who ran sudo: their own files
        os.chown(d, nobody, -1)
    why = safepath.untrusted_writer(target)
    if refused is None:
        assert why is None
    else:
        assert why is not None and why.startswith(refused.format(d=d)), why
        assert CO_USER in why or "every user" in why
