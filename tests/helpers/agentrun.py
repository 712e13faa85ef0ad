"""Run a set of agents (publishers and subscribers) in a NetLab and collect their results."""

from __future__ import annotations

import os
import re
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from tests.helpers.netlab import NetLab


@dataclass
class AgentResult:
    role: str          # "pub" | "sub"
    index: int
    host: int
    rc: int | None
    stdout: str
    stderr: str
    elapsed: float     # seconds from the first start to this process's exit

    @property
    def name(self) -> str:
        return f"{self.role}{self.index}"

    def sent(self) -> int:
        m = re.search(r"sent (\d+) samples", self.stderr)
        assert m, f"{self.name}: no 'sent' line in stderr:\n{self.stderr[-2000:]}"
        return int(m.group(1))

    def echoes_per_subscriber(self) -> dict[int, int]:
        m = re.search(r"echoes per subscriber: (.*)", self.stderr)
        assert m, f"{self.name}: no echo counts in stderr:\n{self.stderr[-2000:]}"
        return {int(k): int(v) for k, v in (kv.split(":") for kv in m.group(1).split())}


# Perftest 4.3's role groups (ParameterManager.cxx) of the options these tests use: a
# publisher-only option given to a subscriber (or the reverse) is an error, as in Perftest.
PUB_ONLY = {"-latencycount": True, "-latencytest": False, "-batchsize": True,
            "-executiontime": True, "-numiter": True, "-latencyfile": True, "-pubrate": True}
SUB_ONLY: dict[str, bool] = {}
TAKES_VALUE = {"-datalen", "-domain", "-instances", "-sendqueuesize", "-peer", "-multicastaddr",
               "-outputformat", "-discoverytimeout", "-finishtimeout", "-leaseduration",
               "-spdpinterval", "-maxparticipantindex", "-outputfile", "-transport"}


def split_by_role(args: list[str]) -> tuple[list[str], list[str]]:
    """``args`` for every process → (publishers' args, subscribers' args): each role gets
    the general options and its own ones, as a Perftest launcher script must."""
    pub: list[str] = []
    sub: list[str] = []
    i = 0
    while i < len(args):
        name = args[i].lower()
        takes = PUB_ONLY.get(name, SUB_ONLY.get(name, name in TAKES_VALUE))
        item = args[i:i + 2] if takes else args[i:i + 1]
        if name not in SUB_ONLY:
            pub += item
        if name not in PUB_ONLY:
            sub += item
        i += len(item)
    return pub, sub


def run_agents(
    lab: NetLab,
    agent: str,
    pubs: int,
    subs: int,
    args: list[str],
    pub_args: list[str] | None = None,
    timeout: float = 60,
    workdir: Path | None = None,
    gated: bool = False,
    env: dict[str, str] | None = None,
) -> list[AgentResult]:
    """Start `subs` subscribers and `pubs` publishers spread round-robin over the lab's hosts
    (subscribers from host 1, publishers from host 0), wait for all, return their results.
    ``pub_args`` go to publishers only (e.g. -executionTime, -latencyFile); ``env`` is
    every process's environment (default: this process's)."""
    pub_common, sub_common = split_by_role(args)
    plan: list[tuple[str, int, int, list[str]]] = []
    for i in range(subs):
        h = (1 + i) % lab.n
        plan.append(("sub", i, h, ["-sub", "-sidMultiSubTest", str(i), "-numPublishers", str(pubs),
                                   "-nic", lab.ip(h), "-noPrintConfig", *sub_common]))
    for i in range(pubs):
        h = i % lab.n
        plan.append(("pub", i, h, ["-pub", "-pidMultiPubTest", str(i), "-numSubscribers", str(subs),
                                   "-nic", lab.ip(h), "-noPrintConfig", *pub_common,
                                   *(pub_args or [])]))
    keep = os.environ.get("MCASTLAB_AGENT_LOGS")  # keep every process's stdout/stderr there
    workdir = Path(keep) if keep else (workdir or Path("/tmp"))
    workdir.mkdir(parents=True, exist_ok=True)
    files = []
    procs: list[subprocess.Popen[str]] = []
    for role, i, h, a in plan:
        out = open(workdir / f"{lab.tag}-{role}{i}.out", "w+")  # noqa: SIM115
        err = open(workdir / f"{lab.tag}-{role}{i}.err", "w+")  # noqa: SIM115
        files.append((out, err))
        start = lab.popen_gated if gated else lab.popen
        procs.append(start(h, [agent, *a], stdout=out, stderr=err, env=env))
    if gated:
        lab.release(procs)
    t0 = time.monotonic()
    ends: dict[int, float] = {}
    while len(ends) < len(procs) and time.monotonic() - t0 <= timeout:
        for k, p in enumerate(procs):
            if k not in ends and p.poll() is not None:
                ends[k] = time.monotonic() - t0
        time.sleep(0.05)
    # Processes still running after `timeout` are killed by the lab's teardown.
    results = []
    for (role, i, h, _), p, (out, err) in zip(plan, procs, files, strict=True):
        out.seek(0)
        err.seek(0)
        results.append(AgentResult(role, i, h, p.poll(), out.read(), err.read(),
                                   ends.get(len(results), float("inf"))))
        out.close()
        err.close()
        if not keep:
            Path(out.name).unlink(missing_ok=True)
            Path(err.name).unlink(missing_ok=True)
    return results


def pub_and_sub(results: list[AgentResult]) -> tuple[AgentResult, AgentResult]:
    """The publisher and the subscriber of a 1->1 run."""
    pub, sub = (next(r for r in results if r.role == x) for x in ("pub", "sub"))
    return pub, sub


def describe(results: list[AgentResult]) -> str:
    """Diagnostics for an assertion message: exit status and the last stderr lines."""
    lines = []
    for r in results:
        tail = " | ".join(r.stderr.strip().splitlines()[-3:])
        lines.append(f"{r.name}@h{r.host} rc={r.rc} t={r.elapsed:.1f}s: {tail}")
    return "\n".join(lines)
