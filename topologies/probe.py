"""`mcastlab probe`: unicast reachability plus one multicast stream, with what the network did.

:func:`probe` works on a built network (tests use it directly); :func:`run` builds the
topology, probes, and tears it down.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import subprocess
import sys
import time
from typing import Any

from mcastlab.errors import BuildError
from mcastlab.testbed import Testbed
from multicast import membership, nsock, routing
from multicast import probe_agent as pa
from topologies.switches import switch_kind

GROUP = "239.1.2.3"
PORT = 5000
PRIME_WAIT_S = 6.0  # > pimd's spt-threshold interval (5 s)
PRIME_RATE = 20.0  # uncounted packets per second while the trees form
# pimd 2.3.2 sends the Join of a new membership on its 5-second timer tick (route.c's
# change_interfaces fires the entry's jp_timer, timer.c's age_routes sends it). Priming
# waits for the members as a condition, with up to this long per router as its deadline.
# Measured (2026-11-24, routed line of 60 routers x 4 hosts, pimd, joins 1 s before the
# first packet): a member in every segment got the first primer packet 0.039-0.046 s
# after it was sent; 16 routers x 1 host: all 15 members at 2.6 s.
PIM_TICK_S = 5.0


# Reachability checks every ordered pair up to this many pairs (16 hosts: 240); above it,
# each host pings the hosts at a few fixed offsets (every host sends and answers the same
# number), so the work grows with the hosts, not with their square.
ALL_PAIRS_MAX = 240
SAMPLE_OFFSETS = 4
REACH_ROUND_S = 2.0  # how long one round waits for its replies (ping -W2, as before)


def ping_plan(n: int) -> list[tuple[int, int]]:
    """Ordered (source, target) index pairs to ping among `n` hosts.

    Every pair while n*(n-1) <= ALL_PAIRS_MAX; otherwise each host i pings i+d (mod n) for
    d in 1, n/4, n/2, 3n/4 — neighbours and far hosts, so pairs cross segments of a routed
    domain (whose hosts are numbered segment by segment).

    >>> len(ping_plan(16)), len(ping_plan(150)), ping_plan(150)[:4]
    (240, 600, [(0, 1), (0, 37), (0, 75), (0, 112)])
    >>> ping_plan(1)
    []
    """
    if n * (n - 1) <= ALL_PAIRS_MAX:
        return [(i, j) for i in range(n) for j in range(n) if i != j]
    offsets = sorted({1, *(n * k // SAMPLE_OFFSETS for k in range(1, SAMPLE_OFFSETS))} - {0})
    return [(i, (i + d) % n) for i in range(n) for d in offsets]


def reachability_report(net: Testbed, deadline_s: float = 60.0) -> dict[str, Any]:
    """Unicast reachability, bounded: no process at all (one raw ICMP socket per host,
    opened in its namespace from this process), at most one echo in flight per host,
    rounds of at most REACH_ROUND_S, a missed echo retried once, everything within
    `deadline_s`.

    Returns {"unreachable": {host: [targets that never answered]}, "pairs_checked",
    "pairs_total", "coverage": one sentence, "not_checked": pairs the deadline cut,
    "seconds"}.
    """
    import selectors
    import socket

    t0 = time.monotonic()
    hosts = list(net.hosts)
    n = len(hosts)
    plan = ping_plan(n)
    socks = {i: nsock.socket_in(net.node(h).pid, socket.AF_INET, socket.SOCK_RAW,
                                socket.IPPROTO_ICMP) for i, h in enumerate(hosts)}
    sel = selectors.DefaultSelector()
    for i, s in socks.items():
        s.setblocking(False)
        sel.register(s, selectors.EVENT_READ, i)
    by_src: dict[int, list[int]] = {}
    for i, j in plan:
        by_src.setdefault(i, []).append(j)
    answered: set[tuple[int, int]] = set()
    tried: set[tuple[int, int]] = set()
    deadline = t0 + deadline_s
    try:
        rounds = max((len(v) for v in by_src.values()), default=0)
        todo = [[(i, by_src[i][r]) for i in by_src if r < len(by_src[i])] for r in range(rounds)]
        for attempt in range(2):
            for pairs in todo:
                pairs = [pq for pq in pairs if pq not in answered]
                if not pairs or time.monotonic() >= deadline:
                    continue
                for i, j in pairs:
                    tried.add((i, j))
                    # ident = source index, seq = target index: a reply names its pair.
                    pkt = nsock.echo_request(i, j + (attempt << 15))
                    with contextlib.suppress(OSError):  # no route: simply unanswered
                        socks[i].sendto(pkt, (net.host_ip(hosts[j]), 0))
                waiting = set(pairs)
                stop = min(deadline, time.monotonic() + REACH_ROUND_S)
                while waiting and time.monotonic() < stop:
                    for key, _ in sel.select(timeout=max(0.0, stop - time.monotonic())):
                        i = key.data
                        while True:
                            try:
                                data = key.fileobj.recv(65535)  # type: ignore[union-attr]
                            except BlockingIOError:
                                break
                            got = nsock.parse_echo_reply(data)
                            if got and got[0] == i:
                                pair = (i, got[1] & 0x7FFF)
                                answered.add(pair)
                                waiting.discard(pair)
            todo = [[pq for pq in pairs if pq not in answered] for pairs in todo]
    finally:
        sel.close()
        for s in socks.values():
            s.close()
    unreachable: dict[str, list[str]] = {h: [] for h in hosts}
    for i, j in sorted(tried - answered):
        unreachable[hosts[i]].append(hosts[j])
    not_checked = sorted(set(plan) - tried)
    total = n * (n - 1)
    coverage = (f"all {total} ordered host pairs" if len(plan) == total else
                f"{len(plan)} of {total} ordered host pairs (each host pinged "
                f"{len(plan) // max(n, 1)} others at fixed offsets and answered as many)")
    return {"unreachable": unreachable, "pairs_checked": len(tried), "pairs_total": total,
            "coverage": coverage,
            "not_checked": [[hosts[i], hosts[j]] for i, j in not_checked],
            "seconds": round(time.monotonic() - t0, 3)}


def reachability(net: Testbed, deadline_s: float = 60.0) -> dict[str, list[str]]:
    """{host: [hosts it could NOT ping]} over :func:`ping_plan`'s pairs (see
    :func:`reachability_report` for the coverage)."""
    return dict(reachability_report(net, deadline_s)["unreachable"])


def _port_counters(net: Testbed) -> dict[str, dict[str, int]]:
    """{switch: {logical port: tx packets}} (what the switch sent out of each port)."""
    out: dict[str, dict[str, int]] = {}
    for sw in net.switches:
        text = net.cmd(sw, "ip -j -s link show")
        links = json.loads(text[text.find("[") :]) if "[" in text else []
        tx = {link["ifname"]: link.get("stats64", {}).get("tx", {}).get("packets", 0)
              for link in links}
        out[sw] = {logical: tx.get(real, 0) for logical, real, _ in net.switch_ports(sw)}
    return out


class Receivers:
    """Every non-sender host's receiving side, as sockets in the hosts' namespaces held by
    this process (no process per host): an AF_PACKET socket counts the probe's frames on
    the host's interface (`wire`: a flooded non-member is counted although its kernel
    drops them) and, on members, a joined UDP socket counts `delivered` datagrams. One
    thread reads them all until :meth:`stop`.
    """

    def __init__(self, net: Testbed, hosts: list[str], members: set[str], group: str,
                 run_id: int) -> None:
        import selectors
        import socket
        import threading

        self.group, self.run_id = group, run_id
        self.wire: dict[str, set[int]] = {h: set() for h in hosts}
        # {member: monotonic time its first primer datagram (run id + 1) arrived}.
        self.primed: dict[str, float] = {}
        self.delivered: dict[str, set[int]] = {h: set() for h in hosts if h in members}
        self._sel = selectors.DefaultSelector()
        self._socks: list[Any] = []
        self._stop = threading.Event()
        # Hosts on another server of a cluster: their sockets cannot be opened from here,
        # so each runs a receiver process there (probe_agent recv), read back at stop.
        self._remote: dict[str, _RemoteReceiver] = {}
        try:
            for h in hosts:
                if net.is_remote(h):
                    self._remote[h] = _RemoteReceiver(net, h, h in members, group, run_id,
                                                      self.primed)
                    continue
                pid = net.node(h).pid
                iface = f"{h}-eth0"
                raw = nsock.socket_in(pid, socket.AF_PACKET, socket.SOCK_DGRAM,
                                      socket.htons(pa.ETH_P_IP))
                self._socks.append(raw)
                raw.bind((iface, pa.ETH_P_IP))
                raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
                raw.setblocking(False)
                self._sel.register(raw, selectors.EVENT_READ, (h, "wire"))
                if h in members:
                    udp = nsock.socket_in(pid, socket.AF_INET, socket.SOCK_DGRAM,
                                          socket.IPPROTO_UDP)
                    self._socks.append(udp)
                    udp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                    udp.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
                    udp.bind((group, PORT))
                    mreq = socket.inet_aton(group) + socket.inet_aton(net.host_ip(h))
                    udp.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP, mreq)
                    udp.setblocking(False)
                    self._sel.register(udp, selectors.EVENT_READ, (h, "delivered"))
        except BaseException:
            self.close()
            raise
        self._thread = threading.Thread(target=self._loop, name="probe-receivers", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.is_set():
            for key, _ in self._sel.select(timeout=0.1):
                h, kind = key.data
                while True:
                    try:
                        if kind == "wire":
                            data, addr = key.fileobj.recvfrom(65535)  # type: ignore[union-attr]
                            if addr[2] == pa.PACKET_OUTGOING:
                                continue
                            parsed = pa.udp_dport_and_payload(data)
                            if not parsed or parsed[0] != self.group or parsed[1] != PORT:
                                continue
                            payload = parsed[2]
                        else:
                            payload = key.fileobj.recv(65535)  # type: ignore[union-attr]
                    except (BlockingIOError, InterruptedError):
                        break
                    if len(payload) < pa.HEADER.size:
                        continue
                    magic, run_id, seq = pa.HEADER.unpack_from(payload)
                    if magic != pa.MAGIC:
                        continue
                    if run_id == self.run_id:
                        (self.wire if kind == "wire" else self.delivered)[h].add(seq)
                    elif run_id == self.run_id + 1 and kind == "delivered":
                        self.primed.setdefault(h, time.monotonic())

    def stop(self) -> dict[str, dict[str, int]]:
        """Stop reading; {host: {"wire": n, "delivered": n}}."""
        remote = {h: r.stop() for h, r in self._remote.items()}
        self.close()
        out = {h: {"wire": len(w), "delivered": len(self.delivered.get(h, ()))}
               for h, w in self.wire.items() if h not in remote}
        return {**out, **remote}

    def close(self) -> None:
        """End the reading thread, then close the sockets (idempotent)."""
        self._stop.set()
        thread = getattr(self, "_thread", None)
        if thread is not None:
            thread.join(timeout=10)
        self._sel.close()
        for s in self._socks:
            s.close()
        self._socks = []
        for r in self._remote.values():
            r.close()


class _RemoteReceiver:
    """`probe_agent recv` on a host on another server of a cluster (a socket cannot be
    opened in its namespace from here): started through :meth:`Network.popen`, read by a
    thread ("primed" lines as they come, the counts at the end), stopped by
    :meth:`Network.interrupt`."""

    def __init__(self, net: Testbed, host: str, member: bool, group: str, run_id: int,
                 primed: dict[str, float]) -> None:
        import threading

        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
        argv = [sys.executable, "-m", "multicast.probe_agent", "recv", "--group", group,
                "--port", str(PORT), "--iface", f"{host}-eth0", "--run-id", str(run_id),
                "--primer-run-id", str(run_id + 1), *(["--join"] if member else [])]
        self.net, self.host, self.counts = net, host, None
        self.proc = net.popen_ready(host, argv, "ready", "starting the probe receiver",
                                     stderr=subprocess.PIPE, env=env)
        self._primed = primed
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if line.strip() == "primed":
                self._primed.setdefault(self.host, time.monotonic())
            elif line.startswith("{"):
                self.counts = json.loads(line)

    def stop(self) -> dict[str, int]:
        """Interrupt it and return its counts."""
        self.net.interrupt(self.proc, wait=30)
        self._thread.join(timeout=10)
        err = self.proc.stderr.read() if self.proc.stderr else ""
        if self.proc.returncode != 0 or self.counts is None:
            raise RuntimeError(f"the receiver on {self.host} failed (exit "
                               f"{self.proc.returncode}): {err.strip()[-200:]}")
        return {"wire": self.counts["wire"], "delivered": self.counts["delivered"]}

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def expectations(net: Testbed, sender: str, members: list[str]) -> dict[str, dict[str, Any]]:
    """Per host: member?, expected count share (1 = all, 0 = none) and whether pruning applies.

    A member on a segment multicast routing cannot reach (smcroute without a route)
    expects 0. A non-member must see 0 when the switch prunes: Linux bridge snooping with
    a querier (bridge or router) or OVS snooping; otherwise flooding is allowed.
    """
    p = net.spec.params
    routed_segments = set(net.switches)
    if p.get("mrouting") == "smcroute":
        src_seg = _segment_of(net, sender)
        to = p["smc_to"]
        routed_segments = {src_seg} | (
            {s for s in net.switches if s != src_seg} if to == "all"
            else {t.strip() for t in to.split(",")}
        )
    elif p.get("mrouting") == "none":
        routed_segments = {_segment_of(net, sender)}
    daemon = routing.daemon_for(p)
    has_router_querier = daemon is not None and daemon.is_querier
    prunes = bool(p.get("snooping")) and (
        switch_kind(net.switch_kind).prunes_without_querier or bool(p.get("querier"))
        or has_router_querier
    )
    seg_with_members = {_segment_of(net, m) for m in members}
    out: dict[str, dict[str, Any]] = {}
    for h in net.hosts:
        if h == sender:
            continue
        seg = _segment_of(net, h)
        member = h in members
        reachable = seg in routed_segments
        # Flooding reaches a non-member only on a segment that carries the stream at all.
        carried = seg == _segment_of(net, sender) or (reachable and seg in seg_with_members)
        out[h] = {"member": member, "share": 1 if member and reachable else 0,
                  "must_be_zero": not member and (prunes or not carried)}
    return out


def _segment_of(net: Testbed, host: str) -> str:
    return next(s for s, m in net.spec.switches.items() if host in m)


def probe(net: Testbed, sender: str, members: list[str], count: int = 1000, rate: float = 500.0,
          ttl: int = 8, group: str = GROUP, settle: float | None = None,
          prime: int | None = None) -> dict[str, Any]:
    """Send `count` packets from `sender` to `group`, joined by `members`; return the table.

    With routers, uncounted packets (another run id) go first, at PRIME_RATE, until every
    member multicast routing reaches has received one — at least `prime` of them (default
    20), for at most PIM_TICK_S per router + 10 s — then PRIME_WAIT_S more for pimd's
    switch to the SPT. The seconds each member waited are in the result (`primed_s`).
    `settle` seconds pass between the joins and the first packet (default 1 s).
    """
    if settle is None:
        settle = 1.0
    for h in [sender, *members]:
        if h not in net.hosts:
            raise KeyError(f"unknown host {h!r}; known: {', '.join(net.hosts)}")
    run_id = random.getrandbits(48)
    agent = [sys.executable, "-m", "multicast.probe_agent"]
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    receivers = Receivers(net, [h for h in net.hosts if h != sender], set(members), group,
                          run_id)
    try:
        return _probe(net, sender, members, count, rate, ttl, group, settle, prime, run_id,
                      agent, env, receivers)
    finally:
        receivers.close()


def _probe(net: Testbed, sender: str, members: list[str], count: int, rate: float, ttl: int,
           group: str, settle: float, prime: int | None, run_id: int, agent: list[str],
           env: dict[str, str], receivers: Receivers) -> dict[str, Any]:
    # The members' joins must be in their snooping switches before the stream starts.
    membership.wait(net, {h: [group] for h in members}, timeout=max(15.0, settle))
    time.sleep(settle)
    if prime is None:
        prime = 20 if net.routers else 0
    primed_s: dict[str, float | None] | None = None
    if prime:
        primed_s = _prime(net, sender, members, prime, ttl, group, run_id, agent, env,
                          receivers)
    before = _port_counters(net)
    snd = net.popen(sender, [*agent, "send", "--group", group, "--port", str(PORT), "--iface",
                             f"{sender}-eth0", "--run-id", str(run_id), "--count", str(count),
                             "--rate", str(rate), "--ttl", str(ttl)],
                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    out, err = snd.communicate(timeout=count / max(rate, 1) + 60)
    if snd.returncode != 0:
        raise BuildError("the probe's multicast sender", sender, err.strip() or
                         f"exit status {snd.returncode}")
    time.sleep(0.5)
    after = _port_counters(net)
    # Read the tables while the members still hold the group: closing their sockets
    # sends leaves (OVS drops the entry at once, a bridge after its last-member queries).
    state = net.multicast_state()
    got = receivers.stop()
    expect = expectations(net, sender, members)
    hosts: dict[str, Any] = {}
    for h, counts in got.items():
        e = expect[h]
        expected = count * e["share"]
        received = counts["delivered"] if e["member"] else counts["wire"]
        hosts[h] = {"member": e["member"], "received": received, "expected": expected,
                    "wire": counts["wire"], "must_be_zero": e["must_be_zero"]}
    ports = {sw: {port: after[sw][port] - before[sw].get(port, 0) for port in after[sw]}
             for sw in after}
    problems = []
    for h, r in hosts.items():
        if r["member"] and r["received"] < 0.99 * r["expected"]:
            problems.append(f"{h} (member) received {r['received']} of {r['expected']}")
        if not r["member"] and r["must_be_zero"] and r["wire"] > 0:
            problems.append(f"{h} (non-member) received {r['wire']} packets that should be pruned")
        if r["member"] and r["expected"] == 0 and r["received"] > 0:
            problems.append(f"{h} (member without a route) received {r['received']}")
    return {"topology": net.spec.family, "params": net.spec.params, "sender": sender,
            "primed_with": prime, "primed_s": primed_s,
            "group": group, "count": count, "rate": rate, "ttl": ttl,
            "sent": json.loads(out.strip().splitlines()[-1])["sent"],
            "hosts": hosts, "switch_ports_tx": ports, "multicast_state": state,
            "problems": problems, "ok": not problems}


def _prime(net: Testbed, sender: str, members: list[str], prime: int, ttl: int, group: str,
           run_id: int, agent: list[str], env: dict[str, str],
           receivers: Receivers) -> dict[str, float | None]:
    """Send uncounted packets until every member that routing reaches got one (see
    :func:`probe`); returns {member: seconds until its first one, None if never}.
    PIM/smcroute create (S,G) state from a new source's first packets and pimd sends a
    new membership's Join on its 5-second tick, so the counted stream must not start
    before the trees reach the members (a fixed 6 s + 1 s once left the far end of a
    line of 60 routers without one packet)."""
    expect = expectations(net, sender, members)
    waiting = {m for m in members if expect[m]["share"]}
    limit = PIM_TICK_S * len(net.routers) + 10.0
    t0 = time.monotonic()
    primer = net.popen(sender, [*agent, "send", "--group", group, "--port", str(PORT),
                                "--iface", f"{sender}-eth0", "--run-id", str(run_id + 1),
                                "--count", str(int(PRIME_RATE * limit) + prime),
                                "--rate", str(PRIME_RATE), "--ttl", str(ttl)],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    try:
        while time.monotonic() - t0 < limit and primer.poll() is None:
            enough = time.monotonic() - t0 >= prime / PRIME_RATE
            if enough and waiting <= receivers.primed.keys():
                break
            time.sleep(0.05)
    finally:
        if primer.poll() is None:
            primer.terminate()
        primer.wait(timeout=10)
    # pimd switches to the SPT at its next rate check (every 5 s): let it, so the counted
    # stream measures the converged tree (a member not reached yet shows in the counts).
    time.sleep(PRIME_WAIT_S if net.spec.params.get("mrouting") == "pimd" else 1.0)
    got = dict(receivers.primed)
    return {m: round(got[m] - t0, 3) if m in got else None for m in members}


def format_table(result: dict[str, Any], reach: dict[str, list[str]]) -> str:
    """Human-readable report of :func:`probe`'s result."""
    lines = [f"multicast {result['group']} from {result['sender']}: {result['sent']} packets "
             f"at {result['rate']:g} pps, TTL {result['ttl']}", "",
             f"{'host':<8}{'member':<8}{'received':>10}{'expected':>10}{'on wire':>10}"]
    for h, r in result["hosts"].items():
        lines.append(f"{h:<8}{'yes' if r['member'] else 'no':<8}{r['received']:>10}"
                     f"{r['expected']:>10}{r['wire']:>10}")
    lines += ["", "switch ports (packets sent out of each port during the stream):"]
    for sw, ports in result["switch_ports_tx"].items():
        lines.append(f"  {sw}: " + "  ".join(f"{p}={n}" for p, n in ports.items()))
    state = result["multicast_state"]
    for sw, st in state["switches"].items():
        lines.append(f"  {sw} membership (mdb): {json.dumps(st.get('mdb', {}))}")
    kernel = result.get("params", {}).get("router_kernel")
    for r, st in state["routers"].items():
        lines.append(f"router {r}" + (" (its own user-mode Linux kernel):" if kernel == "uml"
                                      else ":"))
        for e in st.get("mfc", []):
            lines.append(f"  MFC ({e['source']}, {e['group']}) iif {e['iif']} -> "
                         f"{','.join(e['oifs']) or '-'}  packets {e['packets']}")
        for key in ("neighbors", "rp", "igmp_groups"):
            if key in st:
                lines.append(f"  {key}: {json.dumps(st[key])}")
    bad = {h: v for h, v in reach.items() if v}
    lines.append("")
    lines.append("unicast: all hosts reach each other" if not bad
                 else "unicast FAILED: "
                 + "; ".join(f"{h} -> {', '.join(v)}" for h, v in bad.items()))
    lines.append("result: OK" if result["ok"] and not bad else
                 "result: FAILED: " + "; ".join(result["problems"] + (["unicast"] if bad else [])))
    return "\n".join(lines)
