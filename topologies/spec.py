"""Resolved topology descriptions: parameters, nodes, links and addresses — no root needed.

A family module (lan, routed, lab) turns validated parameters into a :class:`Spec`;
:mod:`topologies.net` builds a Spec into namespaces. Keeping the plan pure makes it easy
to validate scenarios and unit-test addressing and routing without building anything.
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import asdict, dataclass, field
from typing import Any


class TopologyParamError(ValueError):
    """A topology name or parameter is unknown or has a value outside its allowed set."""


class ConvergenceError(RuntimeError):
    """The network did not become ready in time; the message names the router/segment."""


class BuildError(RuntimeError):
    """Building a topology (or probing it) failed: one line naming the step, the node and
    the log that holds the details.

    >>> str(BuildError("configuring the host", "h7", "Cannot find device", "/x/build.log"))
    'configuring the host failed on h7: Cannot find device (log: /x/build.log)'
    """

    def __init__(self, what: str, node: str, detail: str, log: str | None = None):
        self.what, self.node, self.log = what, node, log
        self.detail = " ".join(detail.split())[:300]  # one line, bounded
        super().__init__(self._line())

    def _line(self) -> str:
        where = f" (log: {self.log})" if self.log else ""
        return f"{self.what} failed on {self.node}: {self.detail}{where}"

    def with_log(self, log: str) -> BuildError:
        """The same failure, naming `log` (where the build log was kept)."""
        return BuildError(self.what, self.node, self.detail, log)


_TRUE = {"1", "on", "true", "yes"}
_FALSE = {"0", "off", "false", "no"}


@dataclass(frozen=True)
class Param:
    """One topology parameter: its kind decides parsing, `choices` or bounds validation."""

    name: str
    kind: str  # "int" | "float" | "bool" | "choice" | "str" | "delay" | "percent"
    default: Any
    help: str
    choices: tuple[str, ...] = ()
    low: float | None = None
    high: float | None = None

    def allowed(self) -> str:
        if self.kind == "bool":
            return "on/off"
        if self.kind == "choice":
            return " | ".join(self.choices)
        if self.kind in ("int", "float", "percent"):
            lo = "" if self.low is None else f"{self.low:g}"
            hi = "" if self.high is None else f"{self.high:g}"
            return f"a number in [{lo}, {hi}]"
        if self.kind == "delay":
            most = "" if self.high is None else f", at most {self.high:g} ms"
            return f"a duration such as 5ms or 200us{most}"
        return "a string"

    def parse(self, family: str, value: Any) -> Any:
        def bad() -> TopologyParamError:
            return TopologyParamError(
                f"topology {family}: parameter '{self.name}' = {value!r} is not allowed; "
                f"allowed: {self.allowed()}"
            )

        if value is None:
            return None
        text = str(value).strip().lower()
        if self.kind == "bool":
            if isinstance(value, bool):
                return value
            if text in _TRUE:
                return True
            if text in _FALSE:
                return False
            raise bad()
        if self.kind == "choice":
            if text not in self.choices:
                raise bad()
            return text
        if self.kind in ("int", "float", "percent"):
            try:
                num = float(text.rstrip("%"))
                if self.kind == "int":
                    if num != int(num) or isinstance(value, bool):
                        raise ValueError
                    num = int(num)
            except ValueError:
                raise bad() from None
            if (self.low is not None and num < self.low) or (
                self.high is not None and num > self.high
            ):
                raise bad()
            return num
        if self.kind == "delay":
            if not re.fullmatch(r"\d+(\.\d+)?(us|ms|s)", text):
                raise bad()
            from topologies.shaping import duration_ms

            if self.high is not None and duration_ms(text) > self.high:
                raise bad()
            return text
        return str(value)


# Parameters every family accepts: link shaping and the switch's multicast behaviour.
COMMON_PARAMS: tuple[Param, ...] = (
    # Mininet's TCIntf ignores (with a log line only) rates above 1000 Mbit/s.
    Param("bw", "float", None, "link bandwidth in Mbit/s (HTB)", low=0.1, high=1000),
    Param("delay", "delay", None, "one-way delay per link (needs netem)", high=10000),
    Param("loss", "percent", None, "loss percentage per link (needs netem)", low=0, high=100),
    Param("switch", "choice", "linuxbridge", "switch implementation",
          choices=("linuxbridge", "ovs", "ovs-user", "ovs-kernel")),
    Param("snooping", "bool", True, "IGMP snooping on the switch"),
    Param("querier", "bool", True, "the switch acts as IGMP querier"),
    Param("igmp", "choice", "3", "IGMP version on switch and hosts", choices=("2", "3")),
    Param("flood_unregistered", "bool", True,
          "OVS: flood multicast of groups nobody joined (only with snooping)"),
    Param("cpu", "float", None, "CPU time per emulated host, in cores (CFS bandwidth limit): "
          "each host a machine of fixed capacity", low=0.01, high=64),
    Param("cpu_period_us", "int", 10_000, "CFS period of the hosts' CPU limit, in µs "
          "(a saturated host stands still for the rest of a period once its quota is used)",
          low=1_000, high=1_000_000),
    Param("cpu_pin", "bool", False, "pin each CPU-limited host to one CPU (cpuset), hosts "
          "dealt round-robin over the CPUs"),
    Param("emulated_servers", "int", 1, "place the nodes on N servers emulated on this "
          "machine; links between servers are VXLAN tunnels (topologies/servers.py)",
          low=1, high=8),
)


@dataclass
class Spec:
    """A resolved topology: everything needed to build it, JSON-able via :meth:`describe`."""

    family: str
    params: dict[str, Any]
    hosts: list[str]
    switches: dict[str, list[str]]  # logical switch -> attached hosts and routers, in port order
    routers: list[str] = field(default_factory=list)
    router_links: list[tuple[str, str]] = field(default_factory=list)
    addresses: dict[str, dict[str, str]] = field(default_factory=dict)  # node -> intf -> ip/len
    routes: dict[str, list[tuple[str, str]]] = field(default_factory=dict)  # node -> (dst, via)
    gateways: dict[str, str] = field(default_factory=dict)  # host -> default gateway
    needs: list[str] = field(default_factory=list)
    placement: dict[str, int] = field(default_factory=dict)  # node -> emulated server (1-based)

    def host_ip(self, host: str) -> str:
        return self.addresses[host][f"{host}-eth0"].split("/")[0]

    def describe(self) -> dict[str, Any]:
        d = asdict(self)
        d["router_links"] = [list(pair) for pair in self.router_links]
        d["routes"] = {n: [list(r) for r in rs] for n, rs in self.routes.items()}
        return d


def parse_params(family: str, table: tuple[Param, ...], given: dict[str, Any]) -> dict[str, Any]:
    """Validate `given` against `table`; unknown keys and bad values raise TopologyParamError."""
    by_name = {p.name: p for p in table}
    for key in given:
        if key not in by_name:
            raise TopologyParamError(
                f"topology {family}: unknown parameter '{key}'; allowed: {', '.join(by_name)}"
            )
    out = {}
    for p in table:
        value = given.get(p.name, p.default)
        out[p.name] = p.parse(family, value)
    return out


def switch_needs(params: dict[str, Any]) -> list[str]:
    """Capabilities required by the common parameters."""
    needs = ["mininet"]
    kind = params["switch"]
    if kind == "linuxbridge":
        needs.append("bridge")
    elif kind == "ovs-kernel":
        needs.append("ovs-kernel")
    else:  # "ovs" uses the kernel datapath when present, else userspace
        needs.append("ovs-user")
    if params.get("bw"):
        needs.append("htb")
    if params.get("delay") or params.get("loss"):
        needs.append("netem")
    if params.get("cpu"):
        needs.append("cpulimit")
    if (params.get("emulated_servers") or 1) > 1:
        needs.append("vxlan")
    return needs


def shortest_next_hops(adjacency: dict[str, list[str]], start: str) -> dict[str, str]:
    """BFS from `start`: {destination: first hop}. Ties go to the neighbour listed first.

    >>> adj = {"a": ["b", "c"], "b": ["a", "d"], "c": ["a", "d"], "d": ["b", "c"]}
    >>> shortest_next_hops(adj, "a")
    {'b': 'b', 'c': 'c', 'd': 'b'}
    """
    first: dict[str, str] = {}
    seen = {start}
    queue: deque[str] = deque()
    for n in adjacency[start]:
        if n not in seen:
            seen.add(n)
            first[n] = n
            queue.append(n)
    while queue:
        node = queue.popleft()
        for n in adjacency[node]:
            if n not in seen:
                seen.add(n)
                first[n] = first[node]
                queue.append(n)
    return first
