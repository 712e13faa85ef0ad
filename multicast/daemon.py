"""A routing daemon is a small class plus a config template kept in multicast/.

One instance runs per router namespace. Its files in the network's workdir are named
``{daemon}_{node}.conf``, ``.pid`` and ``.log``; the rendered config is checked before
the daemon starts, and the pid is recorded in the testbed ledger by ``net.popen``.
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path
from string import Template
from typing import Any, ClassVar

from mcastlab.testbed import Testbed

TEMPLATE_DIR = Path(__file__).resolve().parent


class ConfigError(ValueError):
    """A rendered daemon configuration failed its check (message names file and line)."""


class Daemon:
    """Base class: subclasses set `name`, `template` and implement `variables`, `argv`."""

    name: ClassVar[str] = ""
    template: ClassVar[str] = ""
    is_querier: ClassVar[bool] = False  # acts as the IGMP querier of its segments
    mrouting: ClassVar[str] = ""  # the routed topology's `mrouting` value it implements
    needs: ClassVar[tuple[str, ...]] = ()  # capabilities (mcastlab.capabilities) it requires

    def __init__(self, net: Testbed, node: str):
        self.net = net
        self.node = node
        self.proc: subprocess.Popen | None = None
        self.started_at = 0.0
        base = Path(net.workdir) / f"{self.name}_{node}"
        self.conf_path = base.with_suffix(".conf")
        # The path the daemon reads it at: conf_path, or a copy on the router's server
        # when the router is on another server of a cluster (set by start).
        self.conf_on_node = str(self.conf_path)
        self.pid_path = base.with_suffix(".pid")
        self.log_path = base.with_suffix(".log")

    # --- to implement -----------------------------------------------------------------
    @classmethod
    def check_params(cls, params: dict[str, Any]) -> None:
        """Raise TopologyParamError for topology parameters this daemon cannot honour
        (checked when the topology is planned, before anything is built)."""

    def variables(self) -> dict[str, str]:
        raise NotImplementedError

    def argv(self) -> list[str]:
        raise NotImplementedError

    def check(self, text: str) -> None:
        """Raise ConfigError if `text` is not a valid configuration."""

    def state(self) -> dict[str, Any]:
        return {}

    def not_ready(self) -> str | None:
        """None when converged, else what this router still lacks."""
        return None if self.running() else f"{self.name} is not running (see {self.log_path})"

    def querier_on(self, intf: str) -> bool:
        return False

    # --- common -----------------------------------------------------------------------
    def render(self, template: str | None = None) -> str:
        """This daemon's config from its template (or another of its templates in
        multicast/, e.g. a companion daemon's) and ``variables()``."""
        text = (TEMPLATE_DIR / (template or self.template)).read_text()
        return Template(text).substitute(self.variables())

    def start(self) -> None:
        self.log_path.write_text("")
        text = self.render()
        self.conf_path.write_text(text)
        self.conf_on_node = self.net.put(self.node, self.conf_path)
        self.check(text)
        log = open(self.log_path, "a")  # noqa: SIM115 - append: we add state dumps too
        self.proc = self.net.popen(self.node, self.argv(), network_plane=True, stdout=log,
                                   stderr=subprocess.STDOUT)
        log.close()
        self.started_at = time.monotonic()
        self.pid_path.write_text(f"{self.proc.pid}\n")

    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def save_logs(self) -> None:
        """Hook for daemons whose state should be dumped to the log before they stop."""

    def describe(self) -> dict[str, Any]:
        return {"daemon": self.name, "node": self.node, "conf": str(self.conf_path),
                "log": str(self.log_path), "pid": self.proc.pid if self.proc else None}
