"""The IP_MULTICAST_ALL=0 preload shim (perftest-wrappers/mcastall), no root needed.

Its checker creates 200 sockets of each kind from 8 threads and reads IP_MULTICAST_ALL back
from the kernel: IPv4 UDP sockets must read 0 with the shim (any SOCK_* flags, protocol 0
or IPPROTO_UDP), TCP sockets keep the kernel's 1, and without the shim everything reads 1
(so the checker can fail). The ASan build links the shim into the checker.
"""

from __future__ import annotations

import os
import subprocess

import pytest

from mcastlab import paths

UDP_KINDS = ("udp", "udp-cloexec-nonblock", "udp-ipproto")


def _run(exe: os.PathLike[str] | str, mode: str, preload: bool) -> subprocess.CompletedProcess[str]:
    if not os.access(exe, os.X_OK) or not paths.MCASTALL_SHIM.is_file():
        pytest.fail(f"{exe} or {paths.MCASTALL_SHIM} is missing: run ./setup.sh")
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "MCASTLAB_MCASTALL_LOG": "1"}
    if preload:
        env["LD_PRELOAD"] = str(paths.MCASTALL_SHIM)
    return subprocess.run([str(exe), mode], capture_output=True, text=True, env=env, timeout=60)


def test_shim_sets_ip_multicast_all_off_on_udp_only() -> None:
    p = _run(paths.MCASTALL_CHECK, "off", preload=True)
    assert p.returncode == 0, p.stdout + p.stderr
    for kind in UDP_KINDS:
        assert f"{kind} 200 sockets IP_MULTICAST_ALL=0\n" in p.stdout, p.stdout
    assert "tcp 200 sockets IP_MULTICAST_ALL=1\n" in p.stdout
    assert p.stderr.count("mcastlab-mcastall: active:") == 1, p.stderr
    assert "IP_MULTICAST_ALL=0 on 600 UDP sockets, 0 failed" in p.stderr, p.stderr


def test_without_the_shim_the_kernel_default_is_1_and_the_check_fails() -> None:
    p = _run(paths.MCASTALL_CHECK, "default", preload=False)
    assert p.returncode == 0 and "mcastall" not in p.stderr, p.stdout + p.stderr
    bad = _run(paths.MCASTALL_CHECK, "off", preload=False)
    assert bad.returncode == 1 and "MISMATCH" in bad.stdout, bad.stdout


def test_asan_build_of_the_shim_is_clean() -> None:
    p = _run(paths.MCASTALL_CHECK_ASAN, "off", preload=False)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "AddressSanitizer" not in p.stderr and "runtime error" not in p.stderr, p.stderr
    assert "IP_MULTICAST_ALL=0 on 600 UDP sockets, 0 failed" in p.stderr, p.stderr
