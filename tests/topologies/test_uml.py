"""User-mode routers without root: the plan's router kernel and needs, the init script, and the
command channel (topologies/uml_exec.py) run for real over loopback.

   test process --client--> uml_exec serve (127.0.0.1, a free port) --> sh -c ...
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from string import Template
from typing import Any

import pytest

from mcastlab import capabilities
from topologies import routed, uml

EXEC = [sys.executable, "-I", str(uml.EXEC_SCRIPT)]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def server() -> Iterator[int]:
    port = _free_port()
    proc = subprocess.Popen([*EXEC, "serve", "127.0.0.1", str(port)], stdout=subprocess.PIPE,
                            text=True)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == uml.READY_LINE
        yield port
    finally:
        proc.kill()
        proc.wait()


def _client(port: int, *argv: str, **kwargs: Any) -> subprocess.Popen:
    return subprocess.Popen([*EXEC, "client", "127.0.0.1", str(port), "--", *argv],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kwargs)


def test_a_command_keeps_its_stdout_stderr_and_status(server: int) -> None:
    script = "echo out; echo err >&2; printf 'x%.0s' $(seq 70000); exit 3"
    proc = _client(server, "sh", "-c", script)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 3
    assert out.startswith("out\n") and out.count("x") == 70000  # more than one frame
    assert err == "err\n"


def test_a_missing_program_is_named(server: int) -> None:
    proc = _client(server, "/nonexistent/pimd")
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 127
    assert "/nonexistent/pimd" in err


def test_sigterm_to_the_client_reaches_the_command(server: int, tmp_path: Path) -> None:
    mark = tmp_path / "got-term"
    script = f"trap 'touch {mark}; exit 7' TERM; echo up; while :; do sleep 0.05; done"
    proc = _client(server, "sh", "-c", script)
    assert proc.stdout is not None and proc.stdout.readline() == "up\n"
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=10)
    assert proc.returncode == 7
    assert mark.exists()


def test_a_killed_client_takes_its_command_with_it(server: int, tmp_path: Path) -> None:
    """SIGKILL of the client (as `mcastlab clean` after a crash) closes the connection: the
    server stops the command, so nothing started through it outlives it."""
    pidfile = tmp_path / "pid"
    proc = _client(server, "sh", "-c", f"echo $$ > {pidfile}; echo up; exec sleep 60")
    assert proc.stdout is not None and proc.stdout.readline() == "up\n"
    pid = int(pidfile.read_text())
    os.kill(pid, 0)  # running
    proc.kill()
    proc.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        pytest.fail(f"the command (pid {pid}) outlived its killed client")


def test_an_unreachable_router_is_said() -> None:
    proc = _client(_free_port(), "true")
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 125
    assert "not answering" in err


def test_router_kernel_uml_needs_user_mode_linux_not_the_host_kernel() -> None:
    spec = routed.plan({"routers": 2, "router_kernel": "uml"})
    assert "uml" in spec.needs
    assert not {"mroute", "pim"} & set(spec.needs)
    host = routed.plan({"routers": 2, "router_kernel": "host"})
    assert {"mroute", "pim", "pimd"} <= set(host.needs) and "uml" not in host.needs
    smc = routed.plan({"routers": 2, "mrouting": "smcroute", "router_kernel": "uml"})
    assert "smcroute" in smc.needs and "mroute" not in smc.needs


@pytest.mark.parametrize(("have", "kernel"), [
    ({"mroute": True, "pim": True, "uml": True}, "host"),
    ({"mroute": False, "pim": False, "uml": True}, "uml"),
    ({"mroute": True, "pim": False, "uml": True}, "uml"),  # PIM needs PIMSM_V2 too
    ({"mroute": False, "pim": False, "uml": False}, "host"),  # refused at build, naming it
])
def test_router_kernel_auto_follows_what_the_host_kernel_can_do(
        monkeypatch: pytest.MonkeyPatch, have: dict[str, bool], kernel: str) -> None:
    monkeypatch.setattr(capabilities, "detect", lambda: have)
    assert routed.plan({"routers": 2}).params["router_kernel"] == kernel


def test_router_kernel_auto_takes_host_when_no_daemon_needs_the_kernel(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(capabilities, "detect",
                        lambda: {"mroute": False, "pim": False, "uml": True})
    assert routed.plan({"routers": 2, "mrouting": "none"}).params["router_kernel"] == "host"


def test_a_bad_router_kernel_is_refused_naming_the_choices() -> None:
    with pytest.raises(ValueError, match=r"router_kernel.*auto \| host \| uml"):
        routed.plan({"routers": 2, "router_kernel": "kvm"})


def test_the_init_script_renders_every_variable() -> None:
    text = Template(uml.INIT_TEMPLATE.read_text()).substitute(
        router="r1", workdir="'/tmp/run 1,2'", work_link="/tmp/s/work", project_mount="",
        interfaces="ip link set vec0 name r1-eth0",
        mgmt_intf="vec1", mgmt_addr=uml.MGMT_ROUTER, python=sys.executable,
        exec_script=str(uml.EXEC_SCRIPT), port=uml.EXEC_PORT)
    assert "$" not in text.replace("$PATH", "")
    assert text.rstrip().splitlines()[-1].startswith("exec ")  # the server is the last word
    assert "mount -t hostfs -o /tmp/s/work hostfs '/tmp/run 1,2'" in text
