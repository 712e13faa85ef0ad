"""Link shaping: what a topology's ``bw``/``delay``/``loss`` ask for, and what tc applied.

Shaping follows Mininet's link convention: every interface of every link gets the same
egress qdiscs (HTB for ``bw``, netem below it for ``delay``/``loss``), so each direction
of a link is delayed and lossy once. Host to host over one switch crosses two links each
way: with ``delay = "10ms"`` a ping's RTT is at least 40 ms, and with ``loss = 5`` an echo
survives 4 lossy egresses with probability 0.95**4.

The applied qdiscs are read back with ``tc`` after building (:func:`parse_tc`) and compared
with the request (:func:`mismatches`), so a parameter that the kernel or Mininet silently
ignored stops the build instead of producing results that describe another network.

>>> requested({"bw": 100.0, "delay": "10ms", "loss": 5.0})
{'bw_mbit': 100.0, 'delay_ms': 10.0, 'loss_pct': 5.0}
"""

from __future__ import annotations

import json
import re
from typing import Any

_TIME_MS = {"us": 1e-3, "ms": 1.0, "s": 1000.0}
_RATE_MBIT = {"bit": 1e-6, "kbit": 1e-3, "mbit": 1.0, "gbit": 1000.0, "tbit": 1e6}


def duration_ms(text: str) -> float:
    """'10ms' -> 10.0, '200us' -> 0.2, '1.5s' -> 1500.0."""
    m = re.fullmatch(r"(\d+(?:\.\d+)?)(us|ms|s)", text.strip().lower(), re.ASCII)
    if not m:
        raise ValueError(f"not a duration: {text!r}")
    return float(m.group(1)) * _TIME_MS[m.group(2)]


def requested(params: dict[str, Any]) -> dict[str, float]:
    """The shaping every link interface must carry (empty dict: no shaping asked for)."""
    out: dict[str, float] = {}
    if params.get("bw"):
        out["bw_mbit"] = float(params["bw"])
    if params.get("delay"):
        out["delay_ms"] = duration_ms(str(params["delay"]))
    if params.get("loss"):
        out["loss_pct"] = float(params["loss"])
    return out


def requested_routers(params: dict[str, Any]) -> dict[str, float]:
    """The netem every router link interface must carry (routed topologies' router_delay and
    router_loss; empty dict: none asked for), in :func:`requested`'s terms.

    >>> requested_routers({"router_delay": "5ms", "router_loss": 1})
    {'delay_ms': 5.0, 'loss_pct': 1.0}
    """
    out: dict[str, float] = {}
    if params.get("router_delay"):
        out["delay_ms"] = duration_ms(str(params["router_delay"]))
    if params.get("router_loss"):
        out["loss_pct"] = float(params["router_loss"])
    return out


def netem_args(want: dict[str, float]) -> list[str]:
    """tc netem arguments for a :func:`requested`-style dict.

    >>> netem_args({"delay_ms": 5.0, "loss_pct": 1.0})
    ['delay', '5ms', 'loss', '1%']
    """
    out: list[str] = []
    if "delay_ms" in want:
        out += ["delay", f"{want['delay_ms']:g}ms"]
    if "loss_pct" in want:
        out += ["loss", f"{want['loss_pct']:g}%"]
    return out


def link_params(params: dict[str, Any]) -> dict[str, Any]:
    """Keyword arguments for Mininet's ``TCIntf`` (empty when nothing is shaped)."""
    out: dict[str, Any] = {}
    if params.get("bw"):
        out["bw"] = float(params["bw"])
    if params.get("delay"):
        out["delay"] = str(params["delay"])
    if params.get("loss"):
        out["loss"] = float(params["loss"])
    return out


def _rate_mbit(text: str) -> float | None:
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([kmgt]?bit)", text.strip().lower())
    return float(m.group(1)) * _RATE_MBIT[m.group(2)] if m else None


def parse_tc(qdisc_json: str, class_text: str = "") -> dict[str, dict[str, Any]]:
    """``tc -j qdisc show`` (+ ``tc class show`` text, HTB rates) -> {dev: applied shaping}.

    netem's JSON gives its delay in seconds and its loss as a fraction (iproute2
    q_netem.c); the result uses ms and percent like :func:`requested`.
    """
    out: dict[str, dict[str, Any]] = {}
    for q in json.loads(qdisc_json or "[]"):
        dev = q.get("dev")
        if not dev:
            continue
        entry = out.setdefault(dev, {"qdiscs": []})
        entry["qdiscs"].append(q.get("kind"))
        opts = q.get("options") or {}
        if q.get("kind") == "netem":
            delay = opts.get("delay") or {}
            if delay.get("delay"):
                entry["delay_ms"] = round(float(delay["delay"]) * 1000.0, 6)
            if delay.get("jitter"):
                entry["jitter_ms"] = round(float(delay["jitter"]) * 1000.0, 6)
            loss = opts.get("loss-random") or {}
            if loss.get("loss"):
                entry["loss_pct"] = round(float(loss["loss"]) * 100.0, 6)
    dev = None
    for line in class_text.splitlines():
        m = re.match(r"class htb \S+ .*?\brate (\S+)", line.strip())
        head = re.match(r"^(\S+):\s*$", line.strip())
        if head:  # output of `tc class show` over several devices is per-device
            dev = head.group(1)
        if m and dev is not None:
            rate = _rate_mbit(m.group(1))
            if rate is not None:
                out.setdefault(dev, {"qdiscs": []})["bw_mbit"] = rate
    return out


def mismatches(want: dict[str, float], applied: dict[str, dict[str, Any]],
               devices: list[str]) -> list[str]:
    """One line per device whose applied shaping differs from `want` (1% tolerance:
    tc rounds rates to its clock ticks and percentages to 1/2**32)."""
    bad = []
    for dev in devices:
        got = applied.get(dev, {})
        for key, value in want.items():
            have = got.get(key)
            if have is None or abs(have - value) > 0.01 * max(abs(value), 1e-9):
                bad.append(f"{dev}: {key} {have} applied, {value:g} asked for "
                           f"(qdiscs: {', '.join(got.get('qdiscs', [])) or 'none'})")
    return bad
