"""Resolved topology descriptions: parameters, nodes, links and addresses — no root needed.

A family module (lan, routed, lab) turns validated parameters into a :class:`Spec`;
:mod:`topologies.net` builds a Spec into namespaces. Keeping the plan pure makes it easy
to validate scenarios and unit-test addressing and routing without building anything.
"""

from __future__ import annotations

import ipaddress
import math
import re
from collections import deque
from dataclasses import asdict, dataclass, field
from typing import Any

from mcastlab.errors import TopologyParamError
from topologies.switches import SWITCH_KINDS, switch_kind

_TRUE = {"1", "on", "true", "yes"}
_FALSE = {"0", "off", "false", "no"}
# ASCII only (re.ASCII): Python's \\d and float() also take other scripts' digits ("١٠").
_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?", re.ASCII)
_DURATION = re.compile(r"\d+(\.\d+)?(us|ms|s)", re.ASCII)
# A "str" parameter names a node or lists some (rp_router, smc_source, smc_to): never a
# space, a newline or a shell or config-file character.
_WORD = re.compile(r"[A-Za-z0-9_.,/:-]+", re.ASCII)


def _short_repr(value: Any) -> str:
    """repr() cut to a line's worth (a 300-character name, a 400-digit number)."""
    import reprlib

    r = reprlib.Repr()
    r.maxstring, r.maxlong, r.maxother = 60, 40, 60
    return r.repr(value)


def _multicast_groups(text: str) -> str | None:
    """Comma-separated IPv4 multicast groups, each GROUP or GROUP/LEN (as written, without
    spaces); None when any is not one.

    >>> _multicast_groups("239.1.1.1, 239.0.0.0/8")
    '239.1.1.1,239.0.0.0/8'
    >>> _multicast_groups("239.0.0.0/8\\nphyint eth0 enable") is None
    True
    """
    groups = [g.strip() for g in text.split(",")]
    out = []
    for g in groups:
        if not re.fullmatch(r"[0-9.]+(/[0-9]+)?", g, re.ASCII):
            return None
        try:
            net = ipaddress.IPv4Network(g)
        except ValueError:
            return None
        if not net.is_multicast:
            return None
        out.append(g)
    return ",".join(out)


@dataclass(frozen=True)
class Param:
    """One topology parameter: its kind decides parsing, `choices` or bounds validation."""

    name: str
    # "int" | "float" | "bool" | "choice" | "str" (a word: letters, digits, _ . , / : -)
    # | "delay" | "percent" | "groups" (IPv4 multicast groups, GROUP[/LEN],...)
    kind: str
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
            what = "an integer" if self.kind == "int" else "finite"
            return f"a number in [{lo}, {hi}] ({what}, ASCII digits)"
        if self.kind == "delay":
            most = "" if self.high is None else f", at most {self.high:g} ms"
            return f"a duration such as 5ms or 200us (ASCII digits){most}"
        if self.kind == "groups":
            return "IPv4 multicast groups GROUP or GROUP/LEN, separated by commas"
        return "letters, digits and _ . , / : -"

    def _number(self, value: Any) -> float | None:
        """The finite number `value` stands for, or None (bools, inf, nan, other scripts'
        digits, numbers too large for a float)."""
        if isinstance(value, bool):
            return None
        if isinstance(value, int | float):
            try:
                num = float(value)
            except OverflowError:
                return None
        else:
            text = str(value).strip()
            if self.kind == "percent":
                text = text.removesuffix("%")
            if not _NUMBER.fullmatch(text):
                return None
            num = float(text)
        return num if math.isfinite(num) else None

    def parse(self, family: str, value: Any) -> Any:
        def bad() -> TopologyParamError:
            return TopologyParamError(
                f"topology {family}: parameter '{self.name}' = {_short_repr(value)} is not "
                "allowed; "
                f"allowed: {self.allowed()}")

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
            num = self._number(value)
            if num is None or (self.kind == "int" and num != int(num)):
                raise bad()
            if self.kind == "int":
                num = int(num)
            if (self.low is not None and num < self.low) or (
                self.high is not None and num > self.high
            ):
                raise bad()
            return num
        if self.kind == "delay":
            if not _DURATION.fullmatch(text):
                raise bad()
            from topologies.shaping import duration_ms

            if self.high is not None and duration_ms(text) > self.high:
                raise bad()
            return text
        if self.kind == "groups":
            groups = _multicast_groups(str(value))
            if groups is None:
                raise bad()
            return groups
        if not isinstance(value, str) or not _WORD.fullmatch(value):
            raise bad()
        return value


# Parameters every family accepts: link shaping and the switch's multicast behaviour.
COMMON_PARAMS: tuple[Param, ...] = (
    # Mininet's TCIntf ignores (with a log line only) rates above 1000 Mbit/s.
    Param("bw", "float", None, "link bandwidth in Mbit/s (HTB)", low=0.1, high=1000),
    Param("delay", "delay", None, "one-way delay per link (needs netem)", high=10000),
    Param("loss", "percent", None, "loss percentage per link (needs netem)", low=0, high=100),
    Param("switch", "choice", "linuxbridge", "switch implementation",
          choices=tuple(SWITCH_KINDS)),
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
    Param("cpu_period_step_us", "int", 0, "host k (0, 1, ... in the topology's order) gets a "
          "CFS period of cpu_period_us + k x this, so the hosts' refills drift through one "
          "another's cycles instead of keeping, for a whole run, the offset they began with",
          low=0, high=100_000),
    Param("cpu_pin", "bool", False, "pin each CPU-limited host to one CPU (cpuset), hosts "
          "dealt round-robin over the CPUs"),
    Param("cpu_from", "choice", "start", "when the hosts' CPU limit and pin take effect: "
          "from the start, or from the measurement (once every agent has matched its peers; "
          "discovery runs on the whole machine)", choices=("start", "measurement")),
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
    # "ovs" needs ovs-user: it uses the kernel datapath when present, else userspace.
    needs = ["mininet", switch_kind(params["switch"]).needs]
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
