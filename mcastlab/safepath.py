"""Who else could change a path: the campaign directory root writes into.

Root writes every run's files by name under the campaign directory (``--results``):
tcpdump's ``-w``, the agents' outputs, the tables. A name is only as safe as every
directory above it: a user who can write to one of them can rename what is below and put
a directory of their own, with symlinks in it, in its place between two of root's steps
(``/tmp/x/campaign/.RUN.partial/pcaps`` -> ``/etc``), and root then truncates whatever the
link points to. So a campaign directory is used only when no directory on its path, from
``/`` down, can be changed by another user:

- every directory on the path is owned by root or by the user running mcastlab (under
  sudo: the user who ran sudo, ``SUDO_UID``, whose own files these are);
- none is writable by its group or by everyone, except where the sticky bit is set and the
  entry below belongs to one of those users (``/tmp``: others cannot rename it).

A symlink on the path is followed after the directory holding it passed the check. The
check is stable: once it passed, no other user can change any of those directories, so
what root creates below (with a umask that gives others no write permission) stays root's.

>>> untrusted_writer(Path("/")) is None
True

The other way round, a results folder given as input (``mcastlab status``, ``report``,
``compare``, ``wire``) may come from elsewhere: its ``campaign.json`` and manifests name
the files that are read, hashed and written. Every run id must be a plain directory name
(:func:`run_id_problem`, the rule of the run directories the runner makes), listed once;
every manifest member a relative name inside its run (:func:`member_problem`); and no
symbolic link inside the folder is followed (:func:`open_inside`, :func:`symlink_below`):
else a folder could have root hash ``/etc/shadow`` or read ``/proc/kcore``, or write the
report through a planted link. Each refusal is :class:`~mcastlab.errors.UnsafeResults`,
one line naming the file and the entry.
"""

from __future__ import annotations

import errno
import grp
import os
import pwd
import re
import stat
from pathlib import Path
from typing import Any

from mcastlab.errors import UnsafeResults


def trusted_uids() -> set[int]:
    """Root, this process's user, and under sudo the user who ran it."""
    uids = {0, os.geteuid()}
    sudo = os.environ.get("SUDO_UID", "")
    if sudo.isdigit():
        uids.add(int(sudo))
    return uids


def _user(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


def _group_outsiders(gid: int, trusted: set[int]) -> list[str]:
    """Users outside `trusted` who are in group `gid` (as a member or by their primary
    group)."""
    try:
        members = set(grp.getgrgid(gid).gr_mem)
    except KeyError:
        return [f"gid {gid}"]
    names = {u.pw_name for u in pwd.getpwall() if u.pw_gid == gid and u.pw_uid not in trusted}
    for name in members:
        try:
            if pwd.getpwnam(name).pw_uid not in trusted:
                names.add(name)
        except KeyError:
            names.add(name)
    return sorted(names)


def _writable_by_others(directory: Path, st: os.stat_result, trusted: set[int]) -> str | None:
    """Why a user outside `trusted` can write to `directory` (None: none can)."""
    if st.st_uid not in trusted:
        return f"{directory} is owned by {_user(st.st_uid)}"
    if st.st_mode & stat.S_IWOTH:
        return f"{directory} is writable by every user"
    if st.st_mode & stat.S_IWGRP:
        others = _group_outsiders(st.st_gid, trusted)
        if others:
            try:
                group = grp.getgrgid(st.st_gid).gr_name
            except KeyError:
                group = f"gid {st.st_gid}"
            return (f"{directory} is writable by group {group} (users "
                    f"{', '.join(others[:5])})")
    return None


def untrusted_writer(path: Path, trusted: set[int] | None = None) -> str | None:
    """Why a user other than root and the invoking user could change what ``path`` names
    (one line: which directory, and who), or None when no one else can.

    ``path`` need not exist: the directories that exist are checked, and the first missing
    one must be creatable only by root (or, in a sticky directory such as /tmp, is checked
    again once created: call this again after ``mkdir``). The walk follows the path as the
    kernel does (symlinks, then ``..`` from where they led).
    """
    trusted = trusted_uids() if trusted is None else trusted
    todo = list(Path(os.getcwd(), path).parts[1:])
    here = Path("/")
    links = 0
    while True:
        st = os.lstat(here)
        if not todo:
            if not stat.S_ISDIR(st.st_mode):
                return f"{here} is not a directory"
            return _writable_by_others(here, st, trusted)  # root's files go right here
        name = todo.pop(0)
        if name in ("", "."):
            continue
        if name == "..":
            here = here.parent
            continue
        child = here / name
        try:
            entry: os.stat_result | None = os.lstat(child)
        except FileNotFoundError:
            entry = None
        why = _writable_by_others(here, st, trusted)
        # A sticky directory (/tmp) of a trusted owner: others cannot rename an entry they
        # do not own (an entry not made yet is checked after it is).
        sticky = bool(st.st_mode & stat.S_ISVTX) and st.st_uid in trusted
        if why and sticky and entry is not None and entry.st_uid not in trusted:
            return f"{child} is owned by {_user(entry.st_uid)}"
        if why and not sticky:
            return why
        if entry is None:
            return None
        if stat.S_ISLNK(entry.st_mode):
            links += 1
            if links > 40:
                return f"{child}: too many levels of symbolic links"
            target = Path(os.readlink(child))
            if target.is_absolute():
                here = Path("/")
            todo = [*target.parts[1 if target.is_absolute() else 0:], *todo]
            continue
        if not stat.S_ISDIR(entry.st_mode):
            return f"{child} is not a directory"
        here = child


# A run directory's name: what the matrix makes of axes and counts (experiments/matrix.py),
# and nothing that could leave the campaign directory.
RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
NAME_MAX = 255
RUN_ID_RULE = ("a plain directory name: letters, digits, '.', '_', '-', starting with a "
               f"letter or digit, no '..', at most {NAME_MAX} bytes")


def run_id_problem(run_id: object) -> str | None:
    """Why ``run_id`` cannot name a run directory inside a campaign directory (None: it
    can).

    >>> run_id_problem("lan-rel-100B-1x1-unicast-r1") is None
    True
    >>> print(run_id_problem("../x")[:36])
    '../x' is not a plain directory name
    """
    if (not isinstance(run_id, str) or not RUN_ID.fullmatch(run_id) or ".." in run_id
            or len(run_id.encode()) > NAME_MAX):
        return f"{run_id!r} is not {RUN_ID_RULE}"
    return None


def index_run_ids(index_path: Path, index: dict[str, Any]) -> list[str]:
    """The run ids ``campaign.json`` (read as ``index``) lists, in order; raises
    :class:`UnsafeResults` naming the file and the entry for an id that is not a plain
    directory name or that is listed twice."""
    runs = index.get("runs", [])
    if not isinstance(runs, list):
        raise UnsafeResults(f"{index_path}: key 'runs' must be a list")
    first: dict[str, int] = {}
    for i, entry in enumerate(runs):
        if not isinstance(entry, dict) or "id" not in entry:
            raise UnsafeResults(f"{index_path}: runs[{i}] has no key 'id'")
        why = run_id_problem(entry["id"])
        if why:
            raise UnsafeResults(f"{index_path}: runs[{i}] id {why}")
        if entry["id"] in first:
            raise UnsafeResults(f"{index_path}: runs[{i}] id {entry['id']!r} is listed "
                                f"already as runs[{first[entry['id']]}]; each run once")
        first[entry["id"]] = i
    return list(first)


def run_directory(root: Path, run_id: str, index_path: Path) -> Path:
    """``root/run_id`` (an id :func:`index_run_ids` passed), refused when it is a symbolic
    link: a run's files are inside its campaign directory."""
    path = root / run_id
    if path.is_symlink():
        raise UnsafeResults(f"{index_path}: run {run_id!r}: {path} is a symbolic link; "
                            "a run directory must be inside the campaign directory")
    return path


def member_problem(name: object) -> str | None:
    """Why a manifest ``files`` entry does not name a file inside its run directory (None:
    it does): a relative name of plain parts, no ``.``, ``..`` or empty part.

    >>> member_problem("tables/latency.parquet") is None
    True
    >>> member_problem("/etc/hostname")
    "'/etc/hostname' is not a relative name inside the run (no leading '/', '.' or '..' part)"
    """
    if (not isinstance(name, str) or not name or "\0" in name
            or any(p in ("", ".", "..") for p in name.split("/"))):
        return f"{name!r} is not a relative name inside the run (no leading '/', '.' or '..' part)"
    return None


def manifest_members(manifest_path: Path, manifest: dict[str, Any]) -> dict[str, str]:
    """A manifest's ``files`` ({member: sha256}), every name checked with
    :func:`member_problem`; raises :class:`UnsafeResults` naming the file and the entry."""
    files = manifest.get("files") or {}
    if not isinstance(files, dict):
        raise UnsafeResults(f"{manifest_path}: key 'files' must be an object "
                            "{member: sha256}")
    for name, digest in files.items():
        why = member_problem(name)
        if why:
            raise UnsafeResults(f"{manifest_path}: files entry {why}")
        if not isinstance(digest, str):
            raise UnsafeResults(f"{manifest_path}: files entry {name!r}: the sha256 must be a "
                                f"string, got {digest!r}")
    return files


def open_inside(root: Path, name: str) -> int:
    """A read-only descriptor of the regular file ``root/name``, reached one directory at
    a time without following a symbolic link below ``root`` (nor at the end): a folder
    changed meanwhile cannot redirect the read. Raises :class:`UnsafeResults` for a
    symbolic link or a file that is not a regular one (a FIFO would block the read),
    FileNotFoundError when it is missing."""
    parts = name.split("/")
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for i, part in enumerate(parts):
            last = i == len(parts) - 1
            flags = os.O_RDONLY | os.O_NOFOLLOW | (os.O_NONBLOCK if last else os.O_DIRECTORY)
            try:
                nfd = os.open(part, flags, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    where = root.joinpath(*parts[:i + 1])
                    raise UnsafeResults(f"{root / name}: {where} is a symbolic link or not a "
                                        "directory; a run's files are read only inside "
                                        "it") from None
                raise
            os.close(fd)
            fd = nfd
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise UnsafeResults(f"{root / name}: not a regular file")
        os.set_blocking(fd, True)
        out, fd = fd, -1
        return out
    finally:
        if fd >= 0:
            os.close(fd)


def symlink_below(directory: Path) -> Path | None:
    """The first symbolic link at or below ``directory`` (None: none, or it does not exist):
    where a command would write through it into files elsewhere."""
    if directory.is_symlink():
        return directory
    for here, dirs, files in os.walk(directory):
        for name in sorted(dirs + files):
            if os.path.islink(os.path.join(here, name)):
                return Path(here, name)
    return None
