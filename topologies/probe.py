"""`mcastlab probe`: unicast reachability plus one multicast stream, with what the network did.

:func:`probe` works on a built network (tests use it directly); :func:`run` builds the
topology, probes, and tears it down.
"""

from __future__ import annotations

import json
import os
import random
import select
import subprocess
import sys
import time
from typing import Any

GROUP = "239.1.2.3"
PORT = 5000
PRIME_WAIT_S = 6.0  # > pimd's spt-threshold interval (5 s)


def reachability(net: Any) -> dict[str, list[str]]:
    """{host: [hosts it could NOT ping]} for every ordered pair (pings run in parallel)."""
    result: dict[str, list[str]] = {}
    procs = {}
    for h in net.hosts:
        targets = " ".join(net.host_ip(o) for o in net.hosts if o != h)
        script = (f"for ip in {targets}; do (ping -c1 -W2 -q $ip >/dev/null 2>&1 || "
                  "ping -c1 -W2 -q $ip >/dev/null 2>&1 || echo $ip) & done; wait")
        procs[h] = net.popen(h, ["sh", "-c", script], stdout=subprocess.PIPE, text=True)
    by_ip = {net.host_ip(h): h for h in net.hosts}
    for h, p in procs.items():
        out, _ = p.communicate(timeout=30)
        result[h] = sorted(by_ip[ip] for ip in out.split())
    return result


def _port_counters(net: Any) -> dict[str, dict[str, int]]:
    """{switch: {logical port: tx packets}} (what the switch sent out of each port)."""
    out: dict[str, dict[str, int]] = {}
    for sw in net.switches:
        text = net.cmd(sw, "ip -j -s link show")
        links = json.loads(text[text.find("[") :]) if "[" in text else []
        tx = {link["ifname"]: link.get("stats64", {}).get("tx", {}).get("packets", 0)
              for link in links}
        out[sw] = {logical: tx.get(real, 0) for logical, real, _ in net.switch_ports(sw)}
    return out


def _read_line(proc: subprocess.Popen, timeout: float) -> str:
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    return proc.stdout.readline().strip() if ready else ""


def expectations(net: Any, sender: str, members: list[str]) -> dict[str, dict[str, Any]]:
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
    has_router_querier = p.get("mrouting") == "pimd"
    prunes = bool(p.get("snooping")) and (
        net.switch_kind.startswith("ovs") or bool(p.get("querier")) or has_router_querier
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


def _segment_of(net: Any, host: str) -> str:
    return next(s for s, m in net.spec.switches.items() if host in m)


def probe(net: Any, sender: str, members: list[str], count: int = 1000, rate: float = 500.0,
          ttl: int = 8, group: str = GROUP, settle: float | None = None,
          prime: int | None = None) -> dict[str, Any]:
    """Send `count` packets from `sender` to `group`, joined by `members`; return the table.

    `prime` uncounted packets go first (default: 20 when there are routers, else 0).
    `settle` seconds pass between the joins and the first packet (default 1 s; 6 s with
    routers, because pimd sends its joins only on its 5-second timer tick).
    """
    if settle is None:
        settle = 6.0 if net.routers else 1.0
    for h in [sender, *members]:
        if h not in net.hosts:
            raise KeyError(f"unknown host {h!r}; known: {', '.join(net.hosts)}")
    run_id = random.getrandbits(48)
    agent = [sys.executable, "-m", "multicast.probe_agent"]
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    receivers = {}
    for h in net.hosts:
        if h == sender:
            continue
        argv = [*agent, "recv", "--group", group, "--port", str(PORT), "--iface", f"{h}-eth0",
                "--run-id", str(run_id)]
        if h in members:
            argv.append("--join")
        receivers[h] = net.popen(h, argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 text=True, env=env)
    for h, proc in receivers.items():
        if _read_line(proc, 15) != "ready":
            raise RuntimeError(f"probe receiver on {h} did not start: {proc.stderr.read()[:300]}")
    time.sleep(settle)  # let IGMP reports reach switches and routers
    if prime is None:
        prime = 20 if net.routers else 0
    if prime:
        # PIM/smcroute create (S,G) state from the first packets of a new source, and pimd
        # switches to the SPT at its next rate check (every 5 s): send uncounted packets
        # (another run id) first so the counted stream measures the converged tree.
        primer = net.popen(sender, [*agent, "send", "--group", group, "--port", str(PORT),
                                    "--iface", f"{sender}-eth0", "--run-id", str(run_id + 1),
                                    "--count", str(prime), "--rate", "20", "--ttl", str(ttl)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        primer.wait(timeout=60)
        time.sleep(PRIME_WAIT_S if net.spec.params.get("mrouting") == "pimd" else 1.0)
    before = _port_counters(net)
    snd = net.popen(sender, [*agent, "send", "--group", group, "--port", str(PORT), "--iface",
                             f"{sender}-eth0", "--run-id", str(run_id), "--count", str(count),
                             "--rate", str(rate), "--ttl", str(ttl)],
                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    out, err = snd.communicate(timeout=count / max(rate, 1) + 60)
    if snd.returncode != 0:
        raise RuntimeError(f"probe sender on {sender} failed: {err.strip()[:300]}")
    time.sleep(0.5)
    after = _port_counters(net)
    state = net.multicast_state()
    expect = expectations(net, sender, members)
    hosts: dict[str, Any] = {}
    for h, proc in receivers.items():
        proc.terminate()
        line = ""
        try:
            text, _ = proc.communicate(timeout=10)
            line = text.strip().splitlines()[-1] if text.strip() else ""
        except subprocess.TimeoutExpired:
            proc.kill()
        counts = json.loads(line) if line.startswith("{") else {"wire": -1, "delivered": -1}
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
            "primed_with": prime,
            "group": group, "count": count, "rate": rate, "ttl": ttl,
            "sent": json.loads(out.strip().splitlines()[-1])["sent"],
            "hosts": hosts, "switch_ports_tx": ports, "multicast_state": state,
            "problems": problems, "ok": not problems}


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
    for r, st in state["routers"].items():
        lines.append(f"router {r}:")
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
