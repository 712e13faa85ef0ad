"""Which agents of a run have reported that they matched their peers.

The runner polls this while the agents discover. With 150 agents saturating the machine,
re-reading every agent's whole stderr each second (Cyclone's configuration dump is most
of it) starved the runner: it saw full discovery up to 9 s after the last agent reported
it, which delayed the measurement window and the capture windows placed in it. So each
poll reads only what a file gained since the previous one.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

MARK = b"discovery complete"


class DiscoveryWatch:
    """``poll(names)``: the agents among ``names`` whose stderr now holds the mark."""

    def __init__(self, agents_dir: Path) -> None:
        self.agents_dir = Path(agents_dir)
        self._offsets: dict[str, int] = {}
        self._tails: dict[str, bytes] = {}  # the last bytes read: a mark split by a write

    def poll(self, names: Iterable[str]) -> set[str]:
        found: set[str] = set()
        for name in names:
            try:
                with (self.agents_dir / f"{name}.stderr").open("rb") as f:
                    f.seek(self._offsets.get(name, 0))
                    chunk = f.read()
            except OSError:
                continue
            if not chunk:
                continue
            self._offsets[name] = self._offsets.get(name, 0) + len(chunk)
            data = self._tails.get(name, b"") + chunk
            if MARK in data:
                found.add(name)
            self._tails[name] = data[-len(MARK):]
        return found
