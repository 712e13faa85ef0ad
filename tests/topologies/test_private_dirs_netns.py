"""Every router's /var/run is its own directory, whatever characters the results path holds.

   h1 --[ s1 ]-- r1 ------- r2 --[ s2 ]-- h2       routed, mrouting=smcroute

Each router gets a private /var/run (smcroute's and pimd's pid files and control sockets
are fixed paths there), bind-mounted from ``<work directory>/run_<router>``. Mininet
formatted that path into ``mkdir -p`` and ``mount --bind`` for the node's shell, unquoted
and after ``% self.__dict__``: a results path with a space made the mount fail silently
(both routers then used the machine's /var/run), a ``%`` crashed node creation, a ``;`` ended
the command there. The mount is now quoted and proven (the router's /var/run must be the
private directory itself); here it is checked from inside each router, and smcroute's own
files must be found in each router's directory. Routers with their own kernel
(router_kernel=uml) have their own /var/run by construction: there the path is checked to
reach them intact. Every node, switches and routers too, has a tmpfs of its own on
/dev/shm (no daemon needed: mrouting=none).
"""

from __future__ import annotations

import os
import secrets
import shlex
from pathlib import Path

import pytest

import topologies
from tests.helpers import kernel_features

pytestmark = pytest.mark.timeout(240)


NAMES = ["run 1", "50%", "%(name)s", "a;b", "tab\tand 'quote'", "comma,s"]


@kernel_features.needs("mroute")  # routers on the host's kernel: namespaces, bind mounts
@pytest.mark.parametrize("name", NAMES)
def test_private_run_directories_whatever_the_path(tmp_path: Path, name: str) -> None:
    workdir = tmp_path / name / "logs"
    spec = topologies.resolve("routed", {"routers": 2, "hosts": 1, "mrouting": "smcroute",
                                         "router_kernel": "host"})
    with topologies.build(spec, workdir=workdir) as net:
        net.wait_converged(60)
        for r in spec.routers:
            private = workdir / f"run_{r}"
            st = private.stat()
            inside = net.run(r, ["stat", "-L", "-c", "%d:%i", "/var/run"])
            assert inside.returncode == 0, inside.stderr
            assert inside.stdout.strip() == f"{st.st_dev}:{st.st_ino}", (r, private)
            assert os.listdir(private), f"{r}: smcroute left nothing in {private}"
        here = os.stat("/var/run")
        assert f"{here.st_dev}:{here.st_ino}" not in {
            net.run(r, ["stat", "-L", "-c", "%d:%i", "/var/run"]).stdout.strip()
            for r in spec.routers}
    assert sorted(p.name for p in (tmp_path / name).iterdir()) == ["logs"]


@kernel_features.needs("uml")
@pytest.mark.parametrize("name", NAMES)
def test_user_mode_routers_whatever_the_path(tmp_path: Path, name: str) -> None:
    """Routers with their own kernel (router_kernel=uml): /var/run is the router kernel's
    own (smcroute's socket is there), the host's file system is read-only to it, and the
    work directory, whatever its path holds, is shared read-write (daemon configs in, logs
    out)."""
    workdir = tmp_path / name / "logs"
    spec = topologies.resolve("routed", {"routers": 2, "hosts": 1, "mrouting": "smcroute",
                                         "router_kernel": "uml"})
    planted = Path("/var/tmp") / f"mcastlab-ro-probe-{secrets.token_hex(4)}"
    with topologies.build(spec, workdir=workdir) as net:
        net.wait_converged(60)
        for r in spec.routers:
            assert "smcroute.sock" in net.run(r, ["ls", "/var/run"]).stdout.split(), r
            target = shlex.quote(str(workdir.resolve() / f"from_{r}"))
            wrote = net.run(r, ["sh", "-c", f"echo {r} > {target}"])
            assert wrote.returncode == 0, wrote.stderr
            assert (workdir / f"from_{r}").read_text() == f"{r}\n"
            # /var/tmp is a tmpfs of its own; / is the host's, read-only
            assert net.run(r, ["touch", f"/root/{planted.name}"]).returncode != 0
            assert net.run(r, ["touch", str(planted)]).returncode == 0
            assert not planted.exists()
            assert not Path(f"/root/{planted.name}").exists()
    assert sorted(p.name for p in (tmp_path / name).iterdir()) == ["logs"]


def test_every_node_has_its_own_dev_shm(tmp_path: Path) -> None:
    """Switches and routers too, not only hosts (tests/multicast/test_lan_netns.py): each
    node has a private tmpfs on /dev/shm, so what a process of a switch or router leaves
    there (the wake-up sampler runs in one: a killed cyclictest leaves cyclictest<pid>)
    is seen by no other node nor by the machine, and goes with the node."""
    probe = f"mcastlab-shm-probe-{secrets.token_hex(4)}"
    spec = topologies.resolve("routed", {"routers": 2, "hosts": 1, "mrouting": "none"})
    nodes = [*spec.switches, *spec.routers, *spec.hosts]
    assert spec.switches and spec.routers
    try:
        with topologies.build(spec, workdir=tmp_path / "logs") as net:
            for n in nodes:
                w = net.run(n, ["sh", "-c", f"echo x > /dev/shm/{probe}-{n} && "
                                            "grep ' /dev/shm ' /proc/self/mounts"])
                assert w.returncode == 0, (n, w)
                assert w.stdout.splitlines()[-1].startswith("mcastlab-shm "), (n, w.stdout)
            for n in nodes:
                assert net.run(n, ["ls", "/dev/shm"]).stdout.split() == [f"{probe}-{n}"], n
            assert not [f for f in os.listdir("/dev/shm") if f.startswith(probe)]
    finally:
        for n in nodes:  # this test's own probe files, had they reached the machine's
            Path("/dev/shm", f"{probe}-{n}").unlink(missing_ok=True)
