"""What a run was made with: software versions, git revision, host CPU (for manifests)."""

from __future__ import annotations

import functools
import hashlib
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


def _git(repo: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(["git", "-C", str(repo), *args], capture_output=True,
                              timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return subprocess.CompletedProcess(args, 127, b"", str(exc).encode())


def _why(r: subprocess.CompletedProcess[bytes]) -> str:
    lines = r.stderr.decode(errors="replace").strip().splitlines()
    return lines[0] if lines else f"git exit {r.returncode}"


def code_state(repo: Path = paths.REPO_ROOT) -> dict[str, Any]:
    """The code at `repo` as git sees it: ``revision`` and ``dirty`` (a tracked file
    differs from that revision), with ``diff_sha256`` of those changes (``git diff HEAD
    --binary``) when dirty, or ``unknown``: why git could not tell (its own words, e.g.
    "fatal: detected dubious ownership in repository at '/opt/mcastlab'" for root in a
    checkout owned by another user). A repository around `repo` is not `repo`'s."""
    unknown: dict[str, Any] = {"revision": None, "dirty": None}
    r = _git(repo, "rev-parse", "--show-toplevel", "HEAD")
    words = r.stdout.decode(errors="replace").split()
    if r.returncode != 0 or len(words) != 2:
        return {**unknown, "unknown": _why(r)}
    top, rev = words
    if Path(top).resolve() != repo.resolve():
        return {**unknown, "unknown": f"{repo} is not a git checkout (git found the "
                                      f"repository {top} around it)"}
    if not re.fullmatch(r"[0-9a-f]{40}", rev):
        return {**unknown, "unknown": f"git rev-parse HEAD gave {rev[:60]!r}"}
    r = _git(repo, "status", "--porcelain", "--untracked-files=no")
    if r.returncode != 0:
        return {**unknown, "unknown": _why(r)}
    state: dict[str, Any] = {"revision": rev, "dirty": bool(r.stdout.strip())}
    if state["dirty"]:
        r = _git(repo, "diff", "HEAD", "--binary")
        state["diff_sha256"] = (hashlib.sha256(r.stdout).hexdigest() if r.returncode == 0
                                else None)
    return state


def git_state(repo: Path = paths.REPO_ROOT) -> dict[str, Any]:
    """Revision and dirty flag of `repo` (None, None when git cannot tell: see code_state)."""
    state = code_state(repo)
    return {"revision": state["revision"], "dirty": state["dirty"]}


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


def provenance() -> dict[str, Any]:
    return {"versions": versions(), "git": git_state(), "cpu": cpu_info(),
            "hostname": platform.node()}
