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
"""

from __future__ import annotations

import grp
import os
import pwd
import stat
from pathlib import Path


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
