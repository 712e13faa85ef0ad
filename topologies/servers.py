"""Emulated servers: a topology's nodes placed on N servers of one machine, and every link
between two servers carried by a VXLAN tunnel over an underlay network.

   [ srv1 ] 10.254.0.1 ----+                      underlay: 10.254.0.0/24, MTU 1500,
                           |                      a plain Linux bridge (no snooping)
   [ srv2 ] 10.254.0.2 ----[ ul ]
                           |
   [ srvN ] 10.254.0.N ----+

   a link h2 -- s1 whose ends are on srv2 and srv1:

      h2 [h2-eth0] <- moved from srv2 (VXLAN VNI v, local .2 remote .1, UDP 4789)
      s1 [s1-eth2] <- moved from srv1 (VXLAN VNI v, local .1 remote .2, UDP 4789)

A VXLAN device keeps its underlay socket in the namespace it was made in: made in its
server's namespace and moved into the node's, it is an ordinary Ethernet port for the node
(a bridge port, a router interface) while every frame crosses the underlay as UDP. Whole
frames cross, so IGMP, PIM (TTL 1) and multicast data pass unchanged. This is the data
path of a multi-machine run (Mininet's cluster support carries links the same way with
gretap, which this kernel lacks; see docs/cluster-plan.md); what one machine cannot show
is a physical network's latency and bandwidth between the servers and the remote control
of nodes over ssh.

Every interface of the network gets MTU 1450 (1500 less VXLAN's 50 bytes): a bridge drops
a frame longer than its egress port's MTU, and a router would have to fragment, so one
MTU everywhere is what a real cluster over a 1500-byte network needs too.

Placement (round-robin; pure, see :func:`place`): on a single-switch LAN the switch is on
srv1 and host i on server ((i-1) mod N) + 1; on a routed network segment k (its switch,
router and hosts) is on server ((k-1) mod N) + 1, so the router links between servers are
the tunnels.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from mcastlab.errors import TopologyParamError
from topologies.spec import Spec

if TYPE_CHECKING:
    from mcastlab.ledger import Ledger


class ServerSite(Protocol):
    """What the servers (emulated here, or a cluster's) ask of the network placed on them;
    :class:`topologies.net.Network` implements it. Declared here, so the servers never
    import the network."""

    spec: Spec
    tag: str  # the testbed's tag: names, VNIs
    private: Path  # the network's state directory
    build_log: Path
    ledger: Ledger  # records what the servers create, for teardown
    step: tuple[str, str]  # (what, node) under way, for a build error

    def node(self, name: str) -> Any: ...
    def real_name(self, node: str) -> str: ...
    def cmd(self, node: str, command: str) -> str: ...
    def log(self, text: str) -> None: ...
    def sh(self, node: str, lines: Sequence[str], what: str) -> str: ...
    def sh_each(self, scripts: Sequence[tuple[str, Sequence[str], str]]) -> None: ...
    def link_veth(self, a: str, b: str, ia: str, ib: str) -> None: ...

VXLAN_PORT = 4789  # IANA's
TUNNEL_MTU = 1450  # Ethernet payload inside VXLAN over a 1500-byte underlay (IPv4)
UNDERLAY_PREFIX = "10.254.0"  # servers' underlay addresses: .1 ... .N /24
UNDERLAY = "ul"  # the underlay's logical node
SHAPING = ("bw", "delay", "loss")


def server_name(k: int) -> str:
    return f"srv{k}"


def place(spec: Spec, servers: int | None = None) -> dict[str, int]:
    """{node: server (1-based)} for every host, switch and router of `spec` on `servers`
    servers (default: the parameter emulated_servers); empty with one server. Raises
    TopologyParamError when a server would hold no node, or for link shaping, which is not
    applied to tunnels (yet).

    >>> from topologies import lan
    >>> place(lan.plan({"hosts": 3, "emulated_servers": 2}))
    {'s1': 1, 'h1': 1, 'h2': 2, 'h3': 1}
    """
    n = servers or int(spec.params.get("emulated_servers") or 1)
    if n == 1:
        return {}
    what = f"{n} servers" if servers else f"parameter 'emulated_servers' = {n}"
    shaped = [k for k in SHAPING if spec.params.get(k)]
    if shaped:
        raise TopologyParamError(
            f"topology {spec.family}: {what} cannot be combined with {', '.join(shaped)} "
            f"(tunnels are not shaped); allowed: one server with shaping, or no "
            f"{'/'.join(SHAPING)}")
    out: dict[str, int] = {}
    if spec.routers:
        segments = list(spec.switches)
        if n > len(segments):
            raise TopologyParamError(
                f"topology {spec.family}: {what} would leave servers empty; allowed: at "
                f"most {len(segments)} (one per router)")
        for k, sw in enumerate(segments):
            server = k % n + 1
            for node in [sw, *spec.switches[sw]]:
                out[node] = server
        return out
    (sw, members), = spec.switches.items()
    if n > len(members):
        raise TopologyParamError(
            f"topology {spec.family}: {what} would leave servers empty; allowed: at most "
            f"{len(members)} (the number of hosts)")
    out[sw] = 1
    for i, host in enumerate(members):
        out[host] = i % n + 1
    return out


def tunnelled(spec: Spec, where: dict[str, int] | None = None) -> list[tuple[str, str]]:
    """The links (as built: (member, switch) and router pairs) whose ends are on two
    servers of the placement `where` (default: the emulated servers' spec.placement), in
    build order: a tunnel's VNI follows from its index here."""
    where = spec.placement if where is None else where
    if not where:
        return []
    links = [(m, sw) for sw, members in spec.switches.items() for m in members]
    links += list(spec.router_links)
    return [(a, b) for a, b in links if where[a] != where[b]]


def underlay_ip(k: int) -> str:
    return f"{UNDERLAY_PREFIX}.{k}"


def vxlan_add(name: str, vni: int, local: str, remote: str) -> str:
    """The command making one end of a tunnel: a VXLAN device whose underlay socket lives
    in the namespace it is made in (a server's), sending to the other end's server."""
    return (f"ip link add {name} type vxlan id {vni} local {local} remote {remote} "
            f"dstport {VXLAN_PORT}")


def describe_layout(count: int, where: dict[str, int],
                    vni: dict[tuple[str, str], int]) -> dict[str, Any]:
    """The manifest's record shared by emulated and real servers: placement, tunnels and
    their VNIs, the MTU every interface gets."""
    return {
        "count": count,
        "placement": {server_name(k): [n for n, s in where.items() if s == k]
                      for k in range(1, count + 1)},
        "tunnels": [{"link": f"{a}-{b}", "vni": v, "kind": "vxlan", "port": VXLAN_PORT,
                     "servers": [server_name(where[a]), server_name(where[b])]}
                    for (a, b), v in vni.items()],
        "mtu": TUNNEL_MTU,
    }


class EmulatedServers:
    """The server namespaces, their underlay and the tunnels of one network.

    Servers and the underlay bridge are nodes of the network like any other (gated shells
    recorded in the ledger), so teardown and `mcastlab clean` remove them — and with a
    server's namespace the kernel deletes every VXLAN device whose socket lived there."""

    MANIFEST_KEY = "emulated_servers"

    def __init__(self, net: ServerSite):
        self.net = net
        self.count = max(net.spec.placement.values())
        self.vni = {link: i for i, link in enumerate(tunnelled(net.spec), start=1)}

    def nodes(self) -> list[str]:
        """The logical names of the nodes to create: the servers, then the underlay."""
        return [*(server_name(k) for k in range(1, self.count + 1)), UNDERLAY]

    def remote_of(self, node: str) -> None:
        return None  # every node's shell runs on this machine

    def open(self) -> None:
        pass  # nothing to reach before the nodes exist

    def close(self) -> None:
        pass  # the server namespaces are nodes: the ledger removes them

    def start(self) -> None:
        """Link each server to the underlay bridge and address it."""
        net = self.net
        real_ul = net.real_name(UNDERLAY)
        ports = []
        for k in range(1, self.count + 1):
            srv, port = server_name(k), f"{real_ul}-eth{k}"
            net.link_veth(srv, UNDERLAY, f"{srv}-eth0", port)
            ports.append(port)
        net.sh(UNDERLAY, [f"ip link add {real_ul} type bridge mcast_snooping 0",
                          *(f"ip link set {p} master {real_ul} up" for p in ports),
                          f"ip link set {real_ul} up"], "starting the underlay bridge")
        net.sh_each([(server_name(k), ["ip link set lo up",
                                       f"ip addr add {underlay_ip(k)}/24 dev srv{k}-eth0",
                                       f"ip link set srv{k}-eth0 up"], "addressing the server")
                     for k in range(1, self.count + 1)])

    def carries(self, a: str, b: str) -> bool:
        return (a, b) in self.vni

    def tunnel(self, a: str, b: str, ia: str, ib: str) -> None:
        """The link a -- b as a VXLAN pair: `ia` made in a's server and moved into a, `ib`
        likewise; both up only when the node's configuration brings them up."""
        net, vni = self.net, self.vni[(a, b)]
        where = net.spec.placement
        for node, intf, here, there in ((a, ia, where[a], where[b]),
                                        (b, ib, where[b], where[a])):
            net.sh(server_name(here), [
                vxlan_add(intf, vni, underlay_ip(here), underlay_ip(there)),
                f"ip link set {intf} netns {net.node(node).pid}",
            ], f"creating the tunnel {a}-{b}")

    def underlay_counters(self) -> dict[str, dict[str, int]]:
        """{server: packets and bytes its underlay interface sent and received}: what
        crossed between servers, tunnels included (read from /sys in the server)."""
        keys = ("tx_packets", "rx_packets", "tx_bytes", "rx_bytes")
        out = {}
        for k in range(1, self.count + 1):
            srv = server_name(k)
            text = self.net.cmd(srv, " ".join(
                f"cat /sys/class/net/{srv}-eth0/statistics/{key};" for key in keys))
            out[srv] = dict(zip(keys, (int(v) for v in text.split()), strict=True))
        return out

    def describe(self) -> dict[str, Any]:
        """The manifest's record: placement, underlay addresses, tunnels and their VNIs."""
        return {
            **describe_layout(self.count, self.net.spec.placement, self.vni),
            "emulated": "namespaces of one machine joined by a veth underlay",
            "underlay": {server_name(k): underlay_ip(k) for k in range(1, self.count + 1)},
        }
