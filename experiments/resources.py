"""CPU and RSS of agent processes, sampled with psutil in a background thread."""

from __future__ import annotations

import threading
import time
from typing import Any

import psutil


class ResourceSampler:
    """Samples every registered pid every ``interval`` seconds until :meth:`stop`.

    Rows follow tables/resources.parquet: process, host, t_s (since start), cpu_percent
    (of one core, like top), rss_bytes.
    """

    def __init__(self, interval: float = 1.0) -> None:
        self.interval = interval
        self.rows: list[dict[str, Any]] = []
        self._procs: dict[int, tuple[str, str, psutil.Process]] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._t0 = time.monotonic()
        self._thread = threading.Thread(target=self._loop, name="resource-sampler", daemon=True)

    def add(self, pid: int, process: str, host: str) -> None:
        try:
            p = psutil.Process(pid)
            p.cpu_percent(None)  # prime: the first call always returns 0
        except psutil.Error:
            return
        with self._lock:
            self._procs[pid] = (process, host, p)

    def start(self) -> ResourceSampler:
        self._t0 = time.monotonic()
        self.sample_once()  # short runs still get a row per process
        self._thread.start()
        return self

    def sample_once(self) -> None:
        t = time.monotonic() - self._t0
        with self._lock:
            items = list(self._procs.items())
        for pid, (name, host, p) in items:
            try:
                with p.oneshot():
                    cpu = p.cpu_percent(None)
                    rss = p.memory_info().rss
            except psutil.Error:
                with self._lock:
                    self._procs.pop(pid, None)
                continue
            if rss == 0:  # an exiting process (zombie): nothing left to measure
                continue
            self.rows.append(
                {"process": name, "host": host, "t_s": round(t, 3),
                 "cpu_percent": float(cpu), "rss_bytes": int(rss)}
            )

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            self.sample_once()

    def stop(self) -> list[dict[str, Any]]:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)
        return self.rows
