"""routed: K LAN segments joined by routers, multicast routed by pimd (PIM-SM) or smcroute.

shape=line (R routers in a chain, one segment per router):

   h1 h2        h3 h4                 h(2R-1) h(2R)
    |  |         |  |                     |  |
   [ s1 ]       [ s2 ]       ...         [ sR ]         segment k: 10.0.k.0/24
      |            |                        |           router rk on it: 10.0.k.254
     r1 --------- r2 ------- ... -------- rR           link j: 10.255.j.0/24 (.1, .2)

shape=ring (R >= 3): the same plus a link rR -- r1, so every pair of segments has two
paths; unicast routes follow the shortest path (ties: lower link index), PIM's RPF follows
the unicast routes.

Multicast routing: `mrouting=pimd` (PIM-SM; `rp=static` puts the RP on `rp_router`,
`rp=bsr` makes every router a candidate BSR and `rp_router` the preferred candidate RP;
`spt=immediate|never`; `pim_daemon=pimd` (pimd 2.3.2) or `frr` (FRR's zebra + pimd,
rp=static only; the implementation that really stays on the shared tree with spt=never,
pimd 2.3.2's last-hop router always switches to the SPT); routers are the segments'
IGMP queriers, IGMP version `igmp`),
`mrouting=smcroute` (static routes for `smc_groups` from the source segment of
`smc_source` to the segments `smc_to`, as (*,G) or (S,G) per `smc_mode`), or `none`.

Router kernel: `router_kernel=host` routes in the host's kernel (each router a namespace),
`uml` gives every router a kernel of its own (user-mode Linux, topologies/uml.py), for hosts
whose kernel lacks multicast routing; `auto` (the default) takes `host` where the host's
kernel can route multicast and `uml` where it cannot, and the build log and the manifest say
which.

Router link shaping: `router_delay`/`router_loss` put netem on the egress of every router
link interface, in the kernel that routes: the host's (it needs sch_netem) or the router's
own user-mode kernel, which ships it (`auto` takes `uml` where the host has no netem). A
packet between hosts of segments k routers apart crosses k shaped egresses each way.
"""

from __future__ import annotations

from typing import Any

from mcastlab import capabilities
from multicast import routing
from topologies import servers, uml
from topologies.spec import (
    COMMON_PARAMS,
    Param,
    Spec,
    TopologyParamError,
    parse_params,
    shortest_next_hops,
    switch_needs,
)

MAX_PIM_INTERFACES = 31  # 32 kernel VIFs, one taken by pimreg
# All segments together hold at most as many hosts as the largest LAN: every host is a
# namespace with its shell, and 250 is the largest size the tests build and probe
# (tests/topologies/test_sizes_netns.py); 60 routers x 100 hosts would be 6,000.
MAX_TOTAL_HOSTS = 250

# The capabilities a routing daemon needs of the kernel it runs on: the host's, unless the
# routers bring their own (router_kernel=uml).
HOST_KERNEL_ROUTING = ("mroute", "pim")

_ROUTED_OVERRIDES = {"snooping": False, "querier": False}

PARAMS: tuple[Param, ...] = (
    Param("routers", "int", 2, "number of routers", low=1, high=60),
    Param("shape", "choice", "line", "how routers are joined", choices=("line", "ring")),
    Param("hosts", "int", 2, "hosts per segment", low=1, high=100),
    Param("mrouting", "choice", "pimd", "multicast routing daemon",
          choices=routing.mrouting_choices()),
    Param("rp", "choice", "static", "pimd RP selection", choices=("static", "bsr")),
    Param("rp_router", "str", "r1", "router that is (or is preferred as) the RP"),
    Param("spt", "choice", "immediate", "pimd SPT switchover", choices=("immediate", "never")),
    Param("pim_daemon", "choice", "pimd", "PIM-SM implementation for mrouting=pimd "
          "(frr: FRR's pimd, the one that honours spt=never; rp=static only)",
          choices=routing.implementations(routing.PIM)),
    Param("router_kernel", "choice", "auto", "the routers' kernel: the host's, or each its "
          "own user-mode Linux (uml); auto: host where it can route multicast, else uml",
          choices=("auto", "host", "uml")),
    Param("router_delay", "delay", None, "one-way delay on the egress of every router link "
          "interface (netem in the router's kernel: its own with router_kernel=uml, where the "
          "host has no netem)", high=10000),
    Param("router_loss", "percent", None, "loss percentage on the egress of every router link "
          "interface (netem, as router_delay)", low=0, high=100),
    Param("smc_groups", "groups", "239.0.0.0/8",
          "smcroute: comma-separated groups (GROUP[/LEN])"),
    Param("smc_mode", "choice", "star", "smcroute: (*,G) or (S,G) routes", choices=("star", "sg")),
    Param("smc_source", "str", "h1", "smcroute: the sending host (its segment is the source)"),
    Param("smc_to", "str", "all", "smcroute: receiver segments s2,s3 or all"),
    *(
        Param(p.name, p.kind, _ROUTED_OVERRIDES[p.name], p.help, p.choices, p.low, p.high)
        if p.name in _ROUTED_OVERRIDES else p
        for p in COMMON_PARAMS
    ),
)


def plan(params: dict[str, Any]) -> Spec:
    """Resolve parameters into hosts, segments, router links, addresses and static routes."""
    p = parse_params("routed", PARAMS, params)
    n_routers, hosts_per = p["routers"], p["hosts"]
    if n_routers * hosts_per > MAX_TOTAL_HOSTS:
        raise TopologyParamError(
            f"topology routed: routers x hosts = {n_routers} x {hosts_per} = "
            f"{n_routers * hosts_per} hosts; allowed: at most {MAX_TOTAL_HOSTS} hosts in all "
            f"(e.g. hosts <= {MAX_TOTAL_HOSTS // n_routers} with {n_routers} routers)")
    routers = [f"r{i}" for i in range(1, n_routers + 1)]
    if p["shape"] == "ring" and n_routers < 3:
        raise TopologyParamError(
            f"topology routed: shape=ring needs routers >= 3, got {n_routers}; allowed: line | ring"
        )
    links = [(routers[i], routers[i + 1]) for i in range(n_routers - 1)]
    if p["shape"] == "ring":
        links.append((routers[-1], routers[0]))

    hosts: list[str] = []
    switches: dict[str, list[str]] = {}
    addresses: dict[str, dict[str, str]] = {r: {} for r in routers}
    gateways: dict[str, str] = {}
    segment_of_router: dict[str, str] = {}
    for k, r in enumerate(routers, start=1):
        seg = f"s{k}"
        members = [f"h{(k - 1) * hosts_per + i}" for i in range(1, hosts_per + 1)]
        hosts.extend(members)
        switches[seg] = [*members, r]
        segment_of_router[r] = seg
        for i, h in enumerate(members, start=1):
            addresses[h] = {f"{h}-eth0": f"10.0.{k}.{i}/24"}
            gateways[h] = f"10.0.{k}.254"
        addresses[r][f"{r}-eth0"] = f"10.0.{k}.254/24"

    # Point-to-point links: interface numbers in the order links are listed.
    next_port = dict.fromkeys(routers, 1)
    adjacency: dict[str, list[str]] = {r: [] for r in routers}
    peer_addr: dict[tuple[str, str], str] = {}  # (router, neighbour) -> neighbour's address
    link_intf: dict[tuple[str, str], str] = {}  # (router, neighbour) -> router's interface
    for j, (a, b) in enumerate(links, start=1):
        ia, ib = f"{a}-eth{next_port[a]}", f"{b}-eth{next_port[b]}"
        next_port[a] += 1
        next_port[b] += 1
        addresses[a][ia] = f"10.255.{j}.1/24"
        addresses[b][ib] = f"10.255.{j}.2/24"
        adjacency[a].append(b)
        adjacency[b].append(a)
        peer_addr[(a, b)], peer_addr[(b, a)] = f"10.255.{j}.2", f"10.255.{j}.1"
        link_intf[(a, b)], link_intf[(b, a)] = ia, ib
    for r in routers:
        if len(addresses[r]) > MAX_PIM_INTERFACES:
            raise TopologyParamError(
                f"topology routed: router {r} would have {len(addresses[r])} interfaces; "
                f"pimd allows at most {MAX_PIM_INTERFACES}"
            )

    routes: dict[str, list[tuple[str, str]]] = {}
    for r in routers:
        hops = shortest_next_hops(adjacency, r)
        dist = _distances(adjacency, r)
        table = []
        for k, other in enumerate(routers, start=1):
            if other != r:
                table.append((f"10.0.{k}.0/24", peer_addr[(r, hops[other])]))
        for j, (a, b) in enumerate(links, start=1):
            if r in (a, b):
                continue
            near = a if dist[a] <= dist[b] else b
            table.append((f"10.255.{j}.0/24", peer_addr[(r, hops[near])]))
        routes[r] = table

    if p["rp_router"] not in routers:
        raise TopologyParamError(
            f"topology routed: parameter 'rp_router' = {p['rp_router']!r} is not allowed; "
            f"allowed: {' | '.join(routers)}"
        )
    needs = switch_needs(p)
    daemon = routing.daemon_for(p)
    router_netem = bool(p.get("router_delay") or p.get("router_loss"))
    if router_netem and (p.get("bw") or p.get("delay") or p.get("loss")):
        raise TopologyParamError(
            "topology routed: parameters 'router_delay'/'router_loss' and 'bw'/'delay'/'loss' "
            "are not allowed together (both would own the router interfaces' root qdisc); "
            "allowed: shaping of every link (bw, delay, loss) or of the routers' links "
            "(router_delay, router_loss)")
    p["router_kernel"] = router_kernel(p["router_kernel"], daemon, router_netem)
    if daemon is not None:
        daemon.check_params(p)
        needs += [n for n in daemon.needs
                  if p["router_kernel"] == "host" or n not in HOST_KERNEL_ROUTING]
    if p["router_kernel"] == "uml":
        needs.append("uml")
        if router_netem and capabilities.detect()["uml"] and uml.netem_module() is None:
            raise TopologyParamError(
                "topology routed: parameters 'router_delay'/'router_loss' need the user-mode "
                f"kernel's sch_netem module ({uml.UML_MODULES}/<release>/kernel/net/sched/"
                "sch_netem.ko, package user-mode-linux), which is missing; allowed: "
                "router_kernel = 'host' on a kernel with sch_netem, or no router shaping")
    elif router_netem:
        needs.append("netem")  # in the routers' namespaces, the host kernel's qdisc
    if p["mrouting"] == "smcroute":
        p["smc_routes"] = _smcroute_routes(p, hosts, addresses, switches, segment_of_router,
                                           adjacency, link_intf)
    spec = Spec(
        family="routed",
        params=p,
        hosts=hosts,
        switches=switches,
        routers=routers,
        router_links=links,
        addresses=addresses,
        routes=routes,
        gateways=gateways,
        needs=needs,
    )
    spec.placement = servers.place(spec)
    return spec


def router_kernel(asked: str, daemon: Any, netem: bool = False) -> str:
    """`host` or `uml` for `router_kernel = asked`: `auto` is `host` when no daemon needs the
    kernel's multicast routing or the host's kernel has what the daemon needs (and netem,
    for router_delay/router_loss), else `uml` where user-mode Linux is installed (else
    `host`, refused at build naming the feature)."""
    if asked != "auto":
        return asked
    wanted = [n for n in (daemon.needs if daemon else ()) if n in HOST_KERNEL_ROUTING]
    if netem:
        wanted.append("netem")
    have = capabilities.detect()
    if all(have[n] for n in wanted) or not have["uml"]:
        return "host"
    return "uml"


def _distances(adjacency: dict[str, list[str]], start: str) -> dict[str, int]:
    dist = {start: 0}
    frontier = [start]
    while frontier:
        nxt = []
        for node in frontier:
            for n in adjacency[node]:
                if n not in dist:
                    dist[n] = dist[node] + 1
                    nxt.append(n)
        frontier = nxt
    return dist


def _smcroute_routes(
    p: dict[str, Any],
    hosts: list[str],
    addresses: dict[str, dict[str, str]],
    switches: dict[str, list[str]],
    segment_of_router: dict[str, str],
    adjacency: dict[str, list[str]],
    link_intf: dict[tuple[str, str], str],
) -> dict[str, list[dict[str, Any]]]:
    """Static multicast routes per router: {router: [{iif, source, group, oifs}]}."""
    src = p["smc_source"]
    if src not in hosts:
        raise TopologyParamError(
            f"topology routed: parameter 'smc_source' = {src!r} is not allowed; "
            f"allowed: a host name h1..h{len(hosts)}"
        )
    router_of_segment = {s: r for r, s in segment_of_router.items()}
    src_seg = next(s for s, members in switches.items() if src in members)
    if p["smc_to"] == "all":
        targets = [s for s in switches if s != src_seg]
    else:
        targets = [t.strip() for t in p["smc_to"].split(",") if t.strip()]
        for t in targets:
            if t not in switches or t == src_seg:
                raise TopologyParamError(
                    f"topology routed: parameter 'smc_to' names {t!r}; allowed: all or "
                    f"segments other than {src_seg}: "
                    + ", ".join(s for s in switches if s != src_seg)
                )
    root = router_of_segment[src_seg]
    hops_from = {r: shortest_next_hops(adjacency, r) for r in adjacency}
    iif: dict[str, str] = {root: f"{root}-eth0"}
    oifs: dict[str, set[str]] = {}
    for seg in targets:
        dst = router_of_segment[seg]
        node = root
        while node != dst:
            nxt = hops_from[node][dst]
            oifs.setdefault(node, set()).add(link_intf[(node, nxt)])
            iif[nxt] = link_intf[(nxt, node)]
            node = nxt
        oifs.setdefault(dst, set()).add(f"{dst}-eth0")
    source = addresses[src][f"{src}-eth0"].split("/")[0] if p["smc_mode"] == "sg" else None
    groups = [g.strip() for g in p["smc_groups"].split(",") if g.strip()]
    return {
        r: [{"iif": iif[r], "source": source, "group": g, "oifs": sorted(o)} for g in groups]
        for r, o in sorted(oifs.items())
    }
