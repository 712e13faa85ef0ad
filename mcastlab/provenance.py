"""What a run was made with: software versions, git revision, host CPU (for manifests)."""

from __future__ import annotations

import functools
import os
import platform
import re
import subprocess
from pathlib import Path
from typing import Any

from mcastlab import paths


def _cmd(argv: list[str], timeout: float = 10) -> str:
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return (p.stdout + p.stderr).strip()


def _dpkg(pkg: str) -> str | None:
    """Version of an installed Debian package (None when absent or only configured)."""
    out = _cmd(["dpkg-query", "-W", "-f=${db:Status-Abbrev}|${Version}", pkg])
    status, _, version = out.partition("|")
    return version if status.startswith("ii") and version else None


def _first_version(text: str) -> str | None:
    m = re.search(r"\d+\.\d+(?:\.\d+)?(?:[-+~.\w]*)?", text)
    return m.group(0) if m else None


def git_state(repo: Path = paths.REPO_ROOT) -> dict[str, Any]:
    rev = _cmd(["git", "-C", str(repo), "rev-parse", "HEAD"])
    status = _cmd(["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=no"])
    ok = bool(re.fullmatch(r"[0-9a-f]{40}", rev))
    return {"revision": rev if ok else None, "dirty": bool(status) if ok else None}


def cpu_info() -> dict[str, Any]:
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"model": model or platform.processor(), "count": os.cpu_count(),
            "machine": platform.machine()}


@functools.cache
def versions() -> dict[str, Any]:
    """Versions of everything a run depends on; None when a component is absent."""
    smc = paths.SMCROUTED
    agent_ver = None
    if os.access(paths.NATIVE_AGENT, os.X_OK):
        agent_ver = _first_version(_cmd([str(paths.NATIVE_AGENT), "-version"], timeout=5)) or (
            _cmd(["sha256sum", str(paths.NATIVE_AGENT)]).split(" ")[0][:16] or None
        )
    return {
        "kernel": platform.release(),
        "os": _cmd(["sh", "-c", ". /etc/os-release && echo $PRETTY_NAME"]) or None,
        "python": platform.python_version(),
        "mininet": _dpkg("mininet"),
        "openvswitch": _dpkg("openvswitch-switch"),
        "pimd": _dpkg("pimd"),
        "frr": _dpkg("frr"),
        "smcroute": _first_version(_cmd([str(smc), "-v"])) if smc.exists() else None,
        "cyclonedds": _dpkg("cyclonedds-dev") or _dpkg("libddsc0t64") or _dpkg("libddsc0"),
        "cyclonedds_tools": _dpkg("cyclonedds-tools"),
        "fastdds": _dpkg("libfastrtps-dev"),
        "tcpdump": _first_version(_cmd(["tcpdump", "--version"])),
        "native_agent": agent_ver,
    }


@functools.cache
def agent_info(kind: str) -> dict[str, Any]:
    """The agent executable a run used, with its sha256 (binaries have no version flag)."""
    import shutil

    from experiments.agents import executable
    from experiments.results import sha256_file

    exe = shutil.which(str(executable(kind))) or str(executable(kind))
    path = Path(exe)
    return {"kind": kind, "executable": exe,
            "sha256": sha256_file(path) if path.is_file() else None}


def provenance() -> dict[str, Any]:
    return {"versions": versions(), "git": git_state(), "cpu": cpu_info(),
            "hostname": platform.node()}
