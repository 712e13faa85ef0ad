"""A campaign's directory (docs/contracts.md §3): atomic writes, manifests, the index.

Every file is written to a temporary name in the same directory and renamed, so a
reader (or a resumed campaign) never sees half a file. A run is complete when its
``manifest.json`` says so *and* every file it lists still has the recorded sha256.

A campaign directory read back may come from elsewhere: its run ids and manifest members
are checked (mcastlab/safepath.py) before any file is opened, and an unsafe one raises
:class:`~mcastlab.errors.UnsafeResults` naming the file and the entry.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from mcastlab import safepath

MANIFEST = "manifest.json"
INDEX = "campaign.json"
STATUSES = ("complete", "incomplete", "failed")


@contextlib.contextmanager
def atomic_file(path: Path) -> Iterator[Path]:
    """A new temporary file next to ``path`` to write; when the block ends without an
    exception it is synced to disk and renamed to ``path``, else removed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
        with tmp.open("rb") as f:
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        raise


def atomic_write_bytes(path: Path, data: bytes) -> None:
    with atomic_file(path) as tmp:
        tmp.write_bytes(data)


def atomic_write_json(path: Path, obj: Any) -> None:
    text = json.dumps(obj, indent=2, sort_keys=True, default=str) + "\n"
    atomic_write_bytes(path, text.encode())


def read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        return None


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def read_manifest(run_dir: Path) -> Any:
    """``run_dir``'s manifest, read without following a symbolic link (None when missing
    or not JSON); a link raises :class:`~mcastlab.errors.UnsafeResults`."""
    try:
        with os.fdopen(safepath.open_inside(run_dir, MANIFEST), "rb") as f:
            return json.loads(f.read())
    except (FileNotFoundError, NotADirectoryError, UnicodeDecodeError, json.JSONDecodeError):
        return None


def sha256_member(run_dir: Path, name: str) -> str:
    """sha256 of the manifest member ``name``, read only inside ``run_dir`` (no symbolic
    link followed: mcastlab/safepath.py)."""
    h = hashlib.sha256()
    with os.fdopen(safepath.open_inside(run_dir, name), "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def checksums(run_dir: Path) -> dict[str, str]:
    """sha256 of every file under ``run_dir`` except the manifest and temporaries."""
    out: dict[str, str] = {}
    for p in sorted(run_dir.rglob("*")):
        if not p.is_file() or p.name == MANIFEST or p.name.endswith(".tmp"):
            continue
        out[p.relative_to(run_dir).as_posix()] = sha256_file(p)
    return out


def verify(run_dir: Path) -> tuple[bool, str]:
    """Is ``run_dir`` a complete run whose files match their recorded checksums?

    Raises :class:`~mcastlab.errors.UnsafeResults` for a member named outside the run or
    reached through a symbolic link: nothing outside the run is read."""
    man = read_manifest(run_dir)
    if not isinstance(man, dict):
        return False, "no manifest"
    if man.get("status") != "complete":
        return False, f"manifest status {man.get('status')!r}"
    recorded = safepath.manifest_members(run_dir / MANIFEST, man)
    for rel, digest in recorded.items():
        try:
            actual = sha256_member(run_dir, rel)
        except FileNotFoundError:
            return False, f"{rel} is missing"
        if actual != digest:
            return False, f"{rel} changed since the run (sha256 mismatch)"
    return True, "complete"


def write_manifest(run_dir: Path, manifest: dict[str, Any]) -> dict[str, Any]:
    """Write the manifest last, with the checksums of everything else in the run."""
    manifest = dict(manifest)
    manifest["files"] = checksums(run_dir)
    atomic_write_json(run_dir / MANIFEST, manifest)
    return manifest


def run_status(run_dir: Path) -> str:
    man = read_manifest(run_dir)
    if isinstance(man, dict) and man.get("status") in STATUSES:
        return str(man["status"])
    return "incomplete"


class CampaignIndex:
    """``campaign.json``: every run of the campaign with its status, attempts and reason."""

    def __init__(self, root: Path, campaign: str, scenario: str) -> None:
        self.root = root
        self.path = root / INDEX
        old = read_json(self.path) or {}
        prev = {r["id"]: r for r in old.get("runs", []) if isinstance(r, dict) and "id" in r}
        self.data: dict[str, Any] = {"campaign": campaign, "scenario": scenario, "runs": []}
        self._prev = prev

    def set_runs(self, configs: list[dict[str, Any]], fresh: frozenset[str] = frozenset()
                 ) -> None:
        """One entry per configuration, its status read from disk. ``fresh``: runs whose
        earlier directory was just moved to superseded/ (``--redo``): their attempts and
        retake records belong to that run, not to the one made now."""
        runs = []
        for cfg in configs:
            rid = cfg["run_id"]
            prev = self._prev.get(rid, {})
            status = run_status(self.root / rid) if (self.root / rid).is_dir() else "incomplete"
            # A run the index called complete whose directory is gone (or was redone) is
            # made again from attempt 1: its records describe another run.
            if rid in fresh or (prev.get("status") == "complete" and status != "complete"):
                prev = {}
            entry = {
                "id": rid,
                "status": status,
                "attempts": int(prev.get("attempts", 0)),
                "reason": prev.get("reason", "") if status != "complete" else "",
                "config": cfg,
            }
            # attempts set aside to be taken again before an interruption: the run taken
            # again names them (a complete run's manifest already does)
            if status != "complete" and isinstance(prev.get("retaken"), list):
                entry["retaken"] = prev["retaken"]
            runs.append(entry)
        self.data["runs"] = runs
        self.save()

    def get(self, rid: str) -> dict[str, Any]:
        for r in self.data["runs"]:
            if r["id"] == rid:
                return r
        raise KeyError(rid)

    def update(self, rid: str, **fields: Any) -> None:
        """Change a run's entry and save; a run that becomes complete drops its ``retaken``
        (its manifest names those attempts now)."""
        entry = self.get(rid)
        entry.update(fields)
        if entry.get("status") == "complete":
            entry.pop("retaken", None)
        self.save()

    def save(self) -> None:
        atomic_write_json(self.path, self.data)


def run_dir(root: Path, run_id: str, prefix: str = "", suffix: str = "") -> Path:
    """The directory of run ``run_id`` (or its ``.<id>.partial`` work directory) inside the
    campaign directory ``root``; raises ValueError for an id that would leave it.

    >>> run_dir(Path("/r"), "lan-rel-100B-1x1-unicast-r1")
    PosixPath('/r/lan-rel-100B-1x1-unicast-r1')
    """
    why = safepath.run_id_problem(run_id)
    if why:
        raise ValueError(f"run id {why}")
    path = root / f"{prefix}{run_id}{suffix}"
    if path.parent != root:
        raise ValueError(f"run directory {path} would leave the campaign directory {root}")
    return path


def finish_set_asides(root: Path) -> list[str]:
    """Make the moves to superseded/ that the index records but an interrupted runner did
    not make: a ``retaken`` record names ``superseded/<dir>/<run-id>`` before the attempt
    moves there (experiments/runner.py), so a run directory still holding that attempt
    (its manifest's ``attempt``) goes there now. Returns one line per move made."""
    idx = read_json(root / INDEX)
    if not isinstance(idx, dict):
        return []
    moved = []
    for r in idx.get("runs", []):
        if not isinstance(r, dict) or not isinstance(r.get("retaken"), list):
            continue
        src = run_dir(root, str(r.get("id")))
        for rec in r["retaken"]:
            if not isinstance(rec, dict) or src.is_symlink() or not src.is_dir():
                continue
            try:
                dest = run_dir(root / "superseded", str(rec.get("superseded"))) / src.name
            except ValueError:  # not a name the runner wrote: leave the run where it is
                continue
            man = read_json(src / MANIFEST)
            if dest.exists() or not isinstance(man, dict) or man.get("attempt") != rec.get(
                    "attempt"):
                continue
            dest.parent.mkdir(parents=True, exist_ok=True)
            os.replace(src, dest)
            moved.append(f"{src.name}: attempt {rec.get('attempt')} moved to {dest} (set "
                         "aside before an interruption)")
    return moved


def campaign_status(root: Path) -> dict[str, Any]:
    """Summary for ``mcastlab status``: the index, with each status re-read from disk.
    Raises :class:`~mcastlab.errors.UnsafeResults` for a run id or manifest member that
    would lead outside ``root`` (or a run listed twice)."""
    idx = read_json(root / INDEX)
    if not isinstance(idx, dict):
        raise FileNotFoundError(f"{root}: no {INDEX} (not a campaign directory)")
    safepath.index_run_ids(root / INDEX, idx)
    runs = []
    for r in idx.get("runs", []):
        rid = r["id"]
        rd = safepath.run_directory(root, rid, root / INDEX)
        status = r.get("status", "incomplete")
        man = read_manifest(rd)
        man = man if isinstance(man, dict) else {}
        if (rd / MANIFEST).exists():
            status = man.get("status", status)
            if status == "complete":
                ok, why = verify(rd)
                if not ok:
                    status, r = "incomplete", {**r, "reason": why}
        elif status == "complete":
            status = "incomplete"
        runs.append(
            {
                "id": rid,
                "status": status,
                "attempts": r.get("attempts", 0),
                "reason": r.get("reason", ""),
                "group": r.get("config", {}).get("group"),
                "mode": r.get("config", {}).get("mode"),
                "publishers": r.get("config", {}).get("publishers"),
                "subscribers": r.get("config", {}).get("subscribers"),
                "duration_s": man.get("duration_s"),
                # {"bound": "network" | "host", "reasons", "metrics", ...}; None for runs
                # made before the fidelity monitor (experiments/fidelity.py).
                "fidelity": man.get("fidelity"),
            }
        )
    return {"campaign": idx.get("campaign"), "scenario": idx.get("scenario"), "runs": runs}
