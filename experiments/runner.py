"""The campaign runner: every run of a scenario's matrix, with resume, retry and provenance.

For each run: build the network, wait for convergence, start captures, start every agent
with its placement and ids, wait for them (per-run timeout) while sampling CPU and RSS,
stop captures, tear down, parse the outputs into tables, write the manifest last.

A run is prepared in ``<campaign>/.<run-id>.partial/`` and renamed to ``<run-id>/`` once
its manifest is written, so a run directory is either whole or absent. Ctrl-C (or
SIGTERM) tears the network down, keeps finished runs and records the current one as
incomplete; a later ``mcastlab run`` into the same directory skips complete runs whose
files still match their checksums and redoes the others.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import importlib
import json
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from experiments import agents as agents_mod
from experiments import (
    capture_windows,
    fidelity,
    matrix,
    quiet,
    results,
    samehost,
    sockstats,
    tables,
    udpstats,
)
from experiments.agent_qos import evidence as agent_qos_evidence
from experiments.discovery_watch import DiscoveryWatch
from experiments.progress import Progress
from experiments.resources import ResourceSampler
from experiments.scenario import Scenario, ScenarioError, validate
from mcastlab import provenance, safepath
from mcastlab.testbed import Testbed

if TYPE_CHECKING:
    from multicast.membership import Holder

# Time a run needs besides its execution time, used for the ETA only (build, discovery,
# teardown); refined from the runs that finished.
OVERHEAD_S = 6.0


def _plane_node(net: Testbed) -> str | None:
    """A node outside every host, for the fidelity monitor's timer outside the hosts."""
    nodes = [*net.switches, *net.routers]
    return nodes[0] if nodes else None


class RunFailed(Exception):
    """A run that did not produce usable results; the message is the recorded reason."""


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def _tail(path: Path, n: int = 300) -> str:
    try:
        data = path.read_bytes()[-n:]
    except OSError:
        return ""
    return data.decode(errors="replace").strip().replace("\n", " | ")


def _optional(module: str) -> Any:
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name and module.startswith(exc.name):
            return None
        raise


class _Interrupted(BaseException):
    pass


class CampaignConflict(Exception):
    """The campaign directory holds finished runs this invocation must not replace."""


# Configuration keys that cannot change what a run measured: where the scenario file is,
# how long the runner waits before giving up, and the thresholds the fidelity monitor
# judged with (its metrics are recorded; the bound is the one judged at run time). An
# edit of these (or of the campaign's description and retries, which are not in a run's
# configuration) keeps finished runs as they are.
RESULT_NEUTRAL = {"scenario", "fidelity", "timing.converge_timeout", "timing.run_timeout"}


def _flat(cfg: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in cfg.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict) and k in ("timing", "capture"):
            out.update(_flat(v, f"{key}."))
        else:
            out[key] = v
    return out


def changed_keys(path: Path, cfg: dict[str, Any]) -> list[str] | None:
    """Result-relevant keys whose value differs between the run on disk and ``cfg``
    (None when the stored configuration cannot be read)."""
    old = results.read_json(path)
    if not isinstance(old, dict):
        return None
    a = _flat(old)
    b = _flat(json.loads(json.dumps(cfg, default=str)))
    return sorted(k for k in a.keys() | b.keys()
                  if k not in RESULT_NEUTRAL and a.get(k) != b.get(k))


def check_results_path(root: Path) -> None:
    """Refuse a campaign directory that another user could swap out from under root
    (mcastlab/safepath.py) before anything is built; ScenarioError names the directory
    and who."""
    why = safepath.untrusted_writer(root)
    if why:
        raise ScenarioError(
            root, "--results",
            f"another user could change this path ({why}), and root writes every run's "
            "files under it by name; allowed: a directory whose parents only root and you "
            "can write to, e.g. results/ in your checkout")


def expected_duration(cfg: dict[str, Any]) -> float:
    base = cfg["execution_time"] or 30.0
    return base + OVERHEAD_S + 0.3 * (cfg["publishers"] + cfg["subscribers"])


@dataclass
class _RunState:
    """One run's state, handed from phase to phase of :meth:`CampaignRunner._execute`.

    What a phase has not reached yet is still None or empty, so that
    :meth:`CampaignRunner._stop` undoes exactly what was started."""

    cfg: dict[str, Any]
    work: Path
    sampler: ResourceSampler  # made before the build: its rows' t_s count from there
    t_rows0: float  # the fidelity monitor's first CPU row: reset when the agents start
    out: dict[str, Any] = field(default_factory=dict)  # what the run adds to the manifest
    capture: Any = None  # captures.capture's handle or a WindowedCapture
    holder: Holder | None = None
    specs: list[agents_mod.ProcSpec] = field(default_factory=list)
    agent_hosts: list[str] = field(default_factory=list)
    snmp_before: dict[str, dict[str, dict[str, int]]] = field(default_factory=dict)
    monitor: fidelity.Monitor | None = None
    t_start: float = 0.0  # when the agents started (monotonic)
    wall_start: float = 0.0  # the same moment in wall-clock time, as pcaps have it
    remote: set[str] = field(default_factory=set)  # agents on another server of a cluster
    procs: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    files: list[IO[bytes]] = field(default_factory=list)
    socks: sockstats.SocketSampler | None = None
    netdev: tuple[dict[str, Any], dict[str, Any]] | None = None  # (before, after)
    exit_codes: dict[str, int | None] = field(default_factory=dict)


def _retaken(index: results.CampaignIndex, rid: str) -> list[dict[str, Any]]:
    """The attempts of run ``rid`` moved to superseded/ to be taken again, and why."""
    return list(index.get(rid).get("retaken", []))


# Test hook (tests/experiments/test_steal_redo.py, test_kill_anywhere_netns.py): SIGKILL
# this process at one of these points of taking a run again, named by the ledger's
# variable MCASTLAB_TEST_KILL_AT (mcastlab/ledger.py has its own points).
KILL_POINTS = ("run-finished", "set-aside-recorded", "set-aside-moved")


def _test_kill(point: str) -> None:
    if os.environ.get("MCASTLAB_TEST_KILL_AT") == point:
        os.kill(os.getpid(), signal.SIGKILL)


class CampaignRunner:
    def __init__(self, scenario_path: Path, results_dir: Path | None = None, *,
                 progress: bool = True, only: list[str] | None = None,
                 quick: bool = False, redo: bool = False) -> None:
        self.redo = redo
        self.scenario_path = Path(scenario_path)
        self.sc: Scenario
        self.sc, self.specs = validate(self.scenario_path, quick=quick)
        import topologies

        self.hosts = {v: list(topologies.host_names(s)) for v, s in self.specs.items()}
        self.root = Path(results_dir or Path("results") / self.sc.campaign.name)
        check_results_path(self.root)
        self.runs = matrix.expand(self.sc, self.hosts, str(self.scenario_path))
        self.all_runs = list(self.runs)
        if only:
            self.runs = [r for r in self.runs if r["run_id"] in only]
        self.show_progress = progress
        self._interrupted = False
        # before a retake of a stolen attempt (a test replaces it: it probes the real CPUs)
        self.await_quiet: Callable[..., quiet.Waited] = quiet.wait_for_quiet

    # ---- campaign --------------------------------------------------------------------
    def run(self) -> int:
        """Run every run not complete yet. Exit status: 0 all complete, 1 some failed,
        130 interrupted."""
        # Nothing root makes here is writable by others (the user's umask may say 000).
        os.umask(os.umask(0o022) | 0o022)
        self.root.mkdir(parents=True, exist_ok=True)
        why = safepath.untrusted_writer(self.root)  # again: made now, by us or by another?
        if why:
            raise CampaignConflict(f"{self.root}: another user could change this campaign "
                                   f"directory ({why}); nothing was written")
        lock = (self.root / ".lock").open("w")
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise SystemExit(f"{self.root}: another mcastlab run is writing this campaign"
                             ) from None
        for line in results.finish_set_asides(self.root):
            print(f"mcastlab run: {line}", flush=True)
        stale = self._stale_runs()
        if stale and not self.redo:
            lock.close()
            lines = "; ".join(f"{rid} ({', '.join(keys)})" for rid, keys in stale[:5])
            raise CampaignConflict(
                f"{self.root}: {len(stale)} finished run(s) were made with a configuration "
                f"that differs in keys that change results: {lines}"
                + (" ..." if len(stale) > 5 else "")
                + ". Nothing was changed. Run into another --results directory, or pass "
                "--redo (make run REDO=1) to redo them: the old runs move to superseded/, nothing "
                "is deleted.")
        if stale:
            self._supersede([rid for rid, _ in stale])
        index = results.CampaignIndex(self.root, self.sc.campaign.name, str(self.scenario_path))
        index.set_runs(self.all_runs, fresh=frozenset(rid for rid, _ in stale))
        prev_int, prev_term = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)

        def on_signal(signum: int, frame: Any) -> None:
            # Only the first signal interrupts; later ones must not cut the teardown short.
            if self._interrupted:
                print("mcastlab run: stopping, tearing the network down...", flush=True)
                return
            self._interrupted = True
            raise _Interrupted(signal.Signals(signum).name)

        signal.signal(signal.SIGINT, on_signal)
        signal.signal(signal.SIGTERM, on_signal)
        failed = 0
        expected = [expected_duration(c) for c in self.runs]
        try:
            with Progress(len(self.runs), expected, enabled=self.show_progress) as prog:
                for i, cfg in enumerate(self.runs):
                    rid = cfg["run_id"]
                    prog.start_run(i, rid)
                    ok, _why = results.verify(self.root / rid)
                    if ok and self._retake_on_resume(rid, index, prog):
                        ok = False
                    if ok:
                        index.update(rid, status="complete", reason="")
                        prog.end_run("complete (kept from an earlier invocation)", counted=False)
                        continue
                    status = self._run_with_retries(cfg, index, prog)
                    failed += status == "failed"
        except _Interrupted as exc:
            print(f"mcastlab run: interrupted ({exc}); finished runs kept in {self.root}, "
                  "run it again to resume", flush=True)
            return 130
        finally:
            signal.signal(signal.SIGINT, prev_int)
            signal.signal(signal.SIGTERM, prev_term)
            lock.close()
        ids = {c["run_id"] for c in self.runs}
        done = sum(1 for r in index.data["runs"] if r["status"] == "complete" and r["id"] in ids)
        print(f"campaign {self.sc.campaign.name}: {done}/{len(self.runs)} runs complete, "
              f"{failed} failed; results in {self.root}", flush=True)
        return 0 if failed == 0 else 1

    def _stale_runs(self) -> list[tuple[str, list[str]]]:
        """Complete runs on disk whose configuration differs in a result-relevant key."""
        out = []
        for cfg in self.runs:
            rid = cfg["run_id"]
            ok, _why = results.verify(self.root / rid)
            if not ok:
                continue
            keys = changed_keys(self.root / rid / "config.json", cfg)
            if keys is None or keys:
                out.append((rid, keys or ["config.json unreadable"]))
        return out

    def _new_superseded(self) -> Path:
        """superseded/<UTC time>/, a name not taken yet (not made)."""
        stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
        dest = self.root / "superseded" / stamp
        n = 1
        while dest.exists():  # two in the same second: a new directory, never a merge
            n += 1
            dest = self.root / "superseded" / f"{stamp}-{n}"
        return dest

    def _supersede(self, run_ids: list[str], why: str = "--redo") -> Path:
        """Move finished runs out of the way into superseded/<UTC time>/, never delete;
        returns that directory."""
        dest = self._new_superseded()
        dest.mkdir(parents=True, exist_ok=False)
        for rid in run_ids:
            src = results.run_dir(self.root, rid)
            if src.is_symlink() or not src.is_dir():
                raise CampaignConflict(f"{src}: not a run directory (refusing to move it)")
            os.replace(src, dest / rid)
            print(f"mcastlab run: {why}: {rid} moved to {dest / rid}", flush=True)
        return dest

    def _set_aside(self, rid: str, attempt: int, index: results.CampaignIndex, what: str,
                   why: list[str], fid: dict[str, Any], prog: Progress,
                   earlier: list[dict[str, Any]] | None = None) -> None:
        """Move an attempt to be taken again into superseded/, mark the run incomplete, and
        add to the run's ``retaken`` in the campaign index the record the kept run's
        manifest names it by (after ``earlier``, default the index's); then wait for a
        quieter hypervisor if steal marked the attempt (:meth:`_await_quiet`). The index
        holds the records so that a campaign interrupted before the run is taken again
        still names the attempt when it resumes.

        The record is written before the move, with SIGINT and SIGTERM held: a SIGKILL
        between the two leaves a record whose attempt is still in the run's directory,
        and the next ``mcastlab run`` makes the move (results.finish_set_asides); the
        message comes last, so a closed stdout loses only the message."""
        earlier = _retaken(index, rid) if earlier is None else earlier
        src = results.run_dir(self.root, rid)
        if src.is_symlink() or not src.is_dir():
            raise CampaignConflict(f"{src}: not a run directory (refusing to move it)")
        held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
        try:
            where = self._new_superseded()
            record = {"attempt": attempt, "superseded": where.name, "why": why}
            index.update(rid, status="incomplete", reason=f"{what}: run again",
                         retaken=[*earlier, record])
            _test_kill("set-aside-recorded")
            where.mkdir(parents=True)
            os.replace(src, where / rid)
            _test_kill("set-aside-moved")
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)
        print(f"mcastlab run: {what}: {rid} moved to {where / rid}", flush=True)
        self._await_quiet(rid, fid, prog)

    @staticmethod
    def _retake(manifest: dict[str, Any], attempt: int, tries: int
                ) -> tuple[str, list[str], str] | None:
        """Why attempt ``attempt`` of ``tries`` is to be set aside and taken again: (what,
        why, what the log says), or None to keep it."""
        fid = manifest.get("fidelity")
        if not isinstance(fid, dict) or attempt >= tries:
            return None
        stolen = fidelity.stolen_only(fid)
        if stolen is not None:
            # max_steal_share crossed and nothing else: the hypervisor's other tenant,
            # not the emulator or the modes, slowed this run.
            limit = fidelity.Thresholds.from_dict(fid.get("thresholds")).max_steal_share
            return ("steal time", [f"steal time alone: {stolen:.1%}"],
                    f"host-bound for steal time alone (the hypervisor took {stolen:.1%} of "
                    f"a CPU, max_steal_share {limit:.1%})")
        unfaithful = fidelity.unfaithful_emulation(fid)
        if unfaithful is not None:
            # The emulator broke its promise to the CPU-limited hosts: the run says
            # nothing about the modes (often another tenant's steal time did it).
            return ("unfaithful emulation", unfaithful,
                    f"the emulator did not keep its promise ({'; '.join(unfaithful)})")
        return None

    def _retake_on_resume(self, rid: str, index: results.CampaignIndex,
                          prog: Progress) -> bool:
        """A complete run that was to be taken again when the runner was killed (after
        its directory took the run's name, before the set-aside): set it aside now, by
        the attempts its manifest records (``attempt`` of ``tries``). True when it was."""
        man = results.read_json(self.root / rid / results.MANIFEST)
        if not isinstance(man, dict):
            return False
        attempt, tries = man.get("attempt"), man.get("tries")
        if not isinstance(attempt, int) or not isinstance(tries, int):
            return False  # made before the manifest recorded its tries
        found = self._retake(man, attempt, tries)
        if found is None:
            return False
        what, why, text = found
        prog.log(f"{rid}: attempt {attempt}/{tries} (finished before an interruption): "
                 f"{text}: kept in superseded/, running it again")
        earlier = [r for r in man.get("retaken") or [] if isinstance(r, dict)]
        self._set_aside(rid, attempt, index, what, why, man["fidelity"], prog, earlier)
        return True

    def _await_quiet(self, rid: str, fid: dict[str, Any], prog: Progress) -> None:
        """Before taking again an attempt the hypervisor took over quiet.QUIET_SHARE of a
        CPU from, wait (bounded) for a probe in which it takes less (experiments/quiet.py)."""
        steal = (fid.get("metrics") or {}).get("steal_share")
        if steal is None or steal < quiet.QUIET_SHARE:
            return
        limit = f"{quiet.QUIET_SHARE:.0%}"
        prog.set_phase(f"waiting for the hypervisor to take under {limit} of a CPU")

        def heard(worst: float, waited: float) -> None:
            prog.set_phase(f"waiting for the hypervisor: it took {worst:.0%} of a CPU in "
                           f"the last {quiet.PROBE_S:g} s (under {limit} wanted; "
                           f"{waited:.0f} of at most {quiet.WAIT_S:.0f} s)")

        w = self.await_quiet(on_probe=heard)
        if w.quiet:
            prog.log(f"{rid}: the hypervisor took {w.steal:.1%} of a CPU in a {quiet.PROBE_S:g} s "
                     f"probe after {w.waited_s:.0f} s of waiting: taking the run again")
        else:
            prog.log(f"{rid}: the hypervisor still took {w.steal:.1%} of a CPU after "
                     f"{w.waited_s:.0f} s of waiting: taking the run again all the same")

    def _run_with_retries(self, cfg: dict[str, Any], index: results.CampaignIndex,
                          prog: Progress) -> str:
        rid = cfg["run_id"]
        tries = 1 + self.sc.campaign.retries
        reason = ""
        # attempts set aside before an interrupted campaign resumed count as attempts
        for attempt in range(min(len(_retaken(index, rid)) + 1, tries), tries + 1):
            entry = index.get(rid)
            index.update(rid, attempts=int(entry.get("attempts", 0)) + 1, status="incomplete")
            try:
                manifest = self.run_one(cfg, prog, attempt, retaken=_retaken(index, rid))
            except _Interrupted:
                index.update(rid, status="incomplete", reason="interrupted")
                raise
            except Exception as exc:  # any failure is recorded, the campaign goes on
                reason = str(exc) if isinstance(exc, RunFailed) else f"{type(exc).__name__}: {exc}"
                prog.log(f"{rid}: attempt {attempt}/{tries} failed: {reason}")
                index.update(rid, status="failed", reason=reason)
                continue
            _test_kill("run-finished")
            found = self._retake(manifest, attempt, tries)
            if found is not None:
                what, why, text = found
                prog.log(f"{rid}: attempt {attempt}/{tries}: {text}: kept in superseded/, "
                         "running it again")
                self._set_aside(rid, attempt, index, what, why, manifest["fidelity"], prog)
                continue
            index.update(rid, status="complete", reason="")
            prog.end_run("complete")
            return "complete"
        prog.end_run(f"failed: {reason}")
        return "failed"

    # ---- one run ---------------------------------------------------------------------
    def run_one(self, cfg: dict[str, Any], prog: Progress, attempt: int = 1,
                retaken: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        """One run, written atomically into its directory; returns its manifest.
        `retaken`: earlier attempts of it moved to superseded/ and why (in the manifest)."""
        rid = cfg["run_id"]
        final = results.run_dir(self.root, rid)
        work = results.run_dir(self.root, rid, prefix=".", suffix=".partial")
        if work.is_symlink():
            raise RunFailed(f"{work} is a symlink; refusing to write through it")
        shutil.rmtree(work, ignore_errors=True)
        (work / "agents").mkdir(parents=True)
        (work / "logs").mkdir()
        (work / "tables").mkdir()
        results.atomic_write_json(work / "config.json", cfg)
        manifest: dict[str, Any] = {
            "run_id": rid, "campaign": cfg["campaign"], "attempt": attempt,
            "tries": 1 + self.sc.campaign.retries,
            "status": "incomplete", "started": _now(), **provenance.provenance(),
            "agent": agents_mod.agent_info(cfg["agent"]),
            **({"retaken": list(retaken)} if retaken else {}),
        }
        t0 = time.monotonic()
        try:
            outcome = self._execute(cfg, work, prog, manifest)
            prog.set_phase("parsing outputs")
            summary = tables.build_tables(work, cfg, outcome.pop("resource_rows"))
            manifest.update(outcome)
            wire = _optional("captures.wire")
            if cfg["capture"]["points"] and wire is not None:
                prog.set_phase("analysing captures")
                t_wire = time.monotonic()
                try:
                    wire.analyse_run(work, manifest.get("run_span"))
                except Exception as exc:  # evidence is a bonus; the run itself is valid
                    manifest["wire_error"] = f"{type(exc).__name__}: {exc}"
                manifest["wire_analysis_s"] = round(time.monotonic() - t_wire, 3)
            self._check(cfg, manifest, summary)
            manifest["status"] = "complete"
        except _Interrupted:
            manifest.update(status="incomplete", reason="interrupted")
            raise
        except RunFailed as exc:
            manifest.update(status="failed", reason=str(exc))
            raise
        except Exception as exc:
            manifest.update(status="failed", reason=f"{type(exc).__name__}: {exc}")
            raise
        finally:
            manifest["ended"] = _now()
            manifest["duration_s"] = round(time.monotonic() - t0, 3)
            self._finish(work, final, manifest)
        return manifest

    def _finish(self, work: Path, final: Path, manifest: dict[str, Any]) -> None:
        """Manifest last, then the partial directory takes the run's name."""
        # Signals must not interrupt the rename dance.
        old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
        try:
            results.write_manifest(work, manifest)
            if final.exists():
                trash = final.with_name(f".{final.name}.old")
                shutil.rmtree(trash, ignore_errors=True)
                os.replace(final, trash)
                os.replace(work, final)
                shutil.rmtree(trash, ignore_errors=True)
            else:
                os.replace(work, final)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)

    def _check(self, cfg: dict[str, Any], manifest: dict[str, Any], summary: dict[str, Any]
               ) -> None:
        bad = {p: c for p, c in manifest["exit_codes"].items() if c != 0}
        if bad:
            name, code = next(iter(bad.items()))
            raise RunFailed(
                f"{len(bad)} agent process(es) failed, e.g. {name} exit {code}: "
                f"{manifest.get('stderr_tails', {}).get(name, '')}"
            )
        if "cpu_engaged_s" in manifest and manifest["cpu_engaged_s"] is None:
            raise RunFailed("the hosts' CPU limits (cpu_from = 'measurement') never took "
                            "effect: the agents never all reported discovery complete, so "
                            "the run measured unlimited hosts")
        why = samehost.problem(manifest["same_host"], cfg["agent"]) if manifest.get(
            "same_host") else None
        if why:
            raise RunFailed(f"{why}: the run did not have what the scenario asked for")
        fan = manifest.get("fanout") or {}
        if fan.get("inactive") or fan.get("failed"):
            names = fan["inactive"] or fan["failed"]
            why = (f"no '{agents_mod.SHIM_ACTIVE}' line in its stderr" if fan["inactive"]
                   else f"'{agents_mod.SHIM_FAILED}' in its stderr")
            raise RunFailed(f"fanout {fan['setting']!r}: the IP_MULTICAST_ALL=0 shim was not "
                            f"active in {', '.join(names[:5])} ({why}): the run did not have "
                            "what the scenario asked for")
        # Runs of a few seconds (or num_iter bursts) may end before the first interval.
        if (cfg["test"] == "throughput" and cfg["agent"] != "ddsperf"
                and cfg["execution_time"] >= 3):
            rows = manifest.get("throughput_rows", {})
            quiet = [s for s, n in rows.items() if n == 0]
            if quiet:
                raise RunFailed(f"no throughput intervals from {', '.join(quiet[:5])}")

    def _execute(self, cfg: dict[str, Any], work: Path, prog: Progress,
                 manifest: dict[str, Any]) -> dict[str, Any]:
        """One run on its own network, phase by phase; returns what goes into the manifest
        (plus ``resource_rows``). :meth:`_stop` runs whether a phase failed or not, before
        the network is torn down."""
        import topologies

        prog.set_phase("building network")
        run = _RunState(cfg, work, ResourceSampler(interval=0.5), time.monotonic())
        spec = self.specs[cfg["topology_variant"]]
        cluster = self.sc.cluster.config(self.scenario_path) if self.sc.cluster else None
        with topologies.build(spec, workdir=work / "logs", cluster=cluster) as net:
            try:
                self._prepare(net, run, prog)
                self._start_agents(net, run, prog)
                self._await_agents(net, run, prog)
            finally:
                self._stop(net, run, prog)
        return self._summarise(run, prog)

    def _prepare(self, net: Testbed, run: _RunState, prog: Progress) -> None:
        """Before any agent: convergence, the topology's description, the multicast state
        before, the captures, the warm-up, the agents' groups joined on their hosts, and
        the agents' commands."""
        from multicast import membership

        cfg, work, out, timing = run.cfg, run.work, run.out, run.cfg["timing"]
        prog.set_phase("waiting for convergence")
        t_conv = time.monotonic()
        net.wait_converged(timeout=timing["converge_timeout"])
        out["convergence_s"] = round(time.monotonic() - t_conv, 3)
        out["topology"] = net.describe()
        with contextlib.suppress(Exception):
            results.atomic_write_json(work / "logs" / "multicast_state_before.json",
                                      net.multicast_state())
        if cfg["capture"]["points"]:
            run.capture = self._start_captures(net, cfg, work, prog)
        if timing["warmup"]:
            prog.set_phase(f"warm-up {timing['warmup']:g} s")
            time.sleep(timing["warmup"])
        host_ip = {h: net.host_ip(h) for h in set(cfg["placement"].values())}
        # The agents' discovery group is joined on every agent host and must be in
        # the snooping switches' tables before any agent starts (a lost report
        # otherwise cuts hosts off SPDP for the whole run).
        prog.set_phase("waiting for memberships")
        holder = run.holder = membership.Holder(
            net, membership.agent_groups(cfg, sorted(host_ip)))
        out.update(membership.wait(net, holder.groups, timing["converge_timeout"], holder))
        run.specs = agents_mod.build(cfg, host_ip, work / "agents")
        # Subscribers first: publishers wait for all of them anyway.
        run.specs.sort(key=lambda s: (not s.name.startswith("sub"), s.name))

    def _start_agents(self, net: Testbed, run: _RunState, prog: Progress) -> None:
        """The hosts' counters before, the fidelity monitor, every agent process (stdout and
        stderr in agents/), then the CPU/RSS and socket samplers."""
        cfg, work, out, specs = run.cfg, run.work, run.out, run.specs
        run.agent_hosts = sorted({s.host for s in specs})
        run.snmp_before = udpstats.read_snmp(net, run.agent_hosts)
        run.monitor = fidelity.Monitor(
            net, run.agent_hosts, work / "logs",
            fidelity.Thresholds.from_dict(cfg.get("fidelity")),
            cpu=net.cpu_limits(), plane_node=_plane_node(net))
        prog.set_phase(f"starting {len(specs)} agents")
        out["commands"] = {s.name: {"host": s.host, "argv": s.argv} for s in specs}
        run.t_start = time.monotonic()
        run.wall_start = time.time()  # pcap timestamps are wall clock too
        # Agents on another server of a cluster: their pids are that server's, so
        # this machine's /proc cannot sample them (said in the manifest).
        remote = run.remote = {s.name for s in specs if net.is_remote(s.host)}
        if remote:
            out["not_sampled"] = {
                "agents": sorted(remote),
                "what": "CPU/RSS (resources) and per-socket drops (socket_drops)",
                "why": "on another server of the cluster: its /proc is not read "
                       "from here; host counters (udp, fidelity) are"}
        for s in specs:
            fo = (work / "agents" / f"{s.name}.stdout").open("wb")
            fe = (work / "agents" / f"{s.name}.stderr").open("wb")
            run.files += [fo, fe]
            env = {**os.environ, **s.env} if s.env else None
            argv = s.argv
            if s.latency_file is not None and s.name in remote:
                where = net.output_path(s.host, s.latency_file)
                argv = [where if a == str(s.latency_file) else a for a in argv]
            p = net.popen(s.host, argv, stdout=fo, stderr=fe, env=env)
            run.procs[s.name] = p
            if cfg["resources"] and s.name not in remote:
                run.sampler.add(p.pid, s.name, s.host)
        run.sampler.start()
        socks = run.socks = sockstats.SocketSampler(
            {s.name: (run.procs[s.name].pid, s.host) for s in specs if s.name not in remote})
        socks.start()
        run.t_rows0 = time.monotonic()

    def _await_agents(self, net: Testbed, run: _RunState, prog: Progress) -> None:
        """Wait for the agents until execution_time + run_timeout after their start, then
        read what the run left: remote agents' latency files, the run's span, the hosts'
        UDP deltas and socket fan-out, per-socket drops and the hosts' netdev counters."""
        cfg, out, procs, t_start = run.cfg, run.out, run.procs, run.t_start
        deadline = t_start + (cfg["execution_time"] or 0) + cfg["timing"]["run_timeout"]
        prog.set_phase("running")
        windows = capture_windows.hook(run.capture, procs, run.work / "agents", cfg, t_start)
        cpu = net.cpu_limits()
        engage = None
        if cpu is not None and cpu.deferred:
            out["cpu_engaged_s"] = None  # discovery never completed

            def engage() -> None:
                if cpu.engage():
                    out["cpu_engaged_s"] = round(time.monotonic() - t_start, 3)
        timed_out = self._wait(procs, deadline, prog, run.work / "agents",
                               show_discovery=cfg["agent"] != "ddsperf",
                               monitor=run.monitor, windows=windows, engage=engage)
        out["agents_s"] = round(time.monotonic() - t_start, 3)
        for s in run.specs:
            if s.latency_file is not None and s.name in run.remote:
                net.fetch(s.host, s.latency_file)
        out["run_span"] = {"start": run.wall_start, "end": time.time(), "s": out["agents_s"]}
        socks, snmp_before = run.socks, run.snmp_before
        assert socks is not None  # started by _start_agents
        socks.stop()
        snmp_after = udpstats.read_snmp(net, run.agent_hosts)
        out["udp"] = udpstats.delta(
            {h: c["Udp"] for h, c in snmp_before.items()},
            {h: c["Udp"] for h, c in snmp_after.items()})
        # Host socket fan-out: socket deliveries per UDP datagram arriving at each
        # host, and receive drops per socket by role (experiments/sockstats.py).
        out["host_fanout"] = {h: sockstats.fanout(snmp_before[h], snmp_after[h])
                              for h in snmp_after if h in snmp_before}
        run.netdev = ({h: c["NetDev"] for h, c in snmp_before.items()},
                      {h: c["NetDev"] for h, c in snmp_after.items()})
        out["socket_drops"] = socks.result()
        drops = sum(c["RcvbufErrors"] for c in out["udp"].values())
        if drops:
            recv = sum(c["InDatagrams"] for c in out["udp"].values())
            prog.log(f"{cfg['run_id']}: {drops} datagrams dropped at full socket "
                     f"receive buffers ({100 * drops / max(recv + drops, 1):.2f}% of "
                     "those that reached the hosts; manifest: udp)")
        if timed_out:
            out["timed_out"] = timed_out

    def _stop(self, net: Testbed, run: _RunState, prog: Progress) -> None:
        """Undo whatever the phases got to, in this order: the memberships, the fidelity
        monitor, the agents, the samplers, the agents' files (their exit codes taken), the
        captures (their drops, windows or coverage recorded), then the multicast state
        after. Only the captures' stop and the state's write are guarded: an error in
        another step skips the steps after it."""
        cfg, work, out = run.cfg, run.work, run.out
        if run.holder is not None:
            run.holder.close()
        if run.monitor is not None:
            run.monitor.close_window()
            run.monitor.stop_samplers()
        self._stop_procs(run.procs, net)
        run.sampler.stop()
        if run.socks is not None:
            run.socks.stop()
        for f in run.files:
            f.close()
        run.exit_codes = {n: p.returncode for n, p in run.procs.items()}
        capture_handle = run.capture
        if capture_handle is not None:
            prog.set_phase("stopping captures")
            try:
                out["capture_drops"] = capture_handle.stop()
            except Exception as exc:
                out["capture_error"] = f"{type(exc).__name__}: {exc}"
            for point, st in (out.get("capture_drops") or {}).items():
                if st.get("dropped"):
                    prog.log(f"{cfg['run_id']}: capture {point} lost {st['dropped']} of "
                             f"{st.get('received')} packets in the kernel; its wire "
                             "tables undercount (manifest: capture_drops)")
            if isinstance(capture_handle, capture_windows.WindowedCapture):
                self._record_windows(capture_handle, cfg, out, prog)
            else:
                self._record_coverage(cfg, work, out, prog)
        with contextlib.suppress(Exception):
            results.atomic_write_json(work / "logs" / "multicast_state_after.json",
                                      net.multicast_state())
        prog.set_phase("tearing down")

    def _summarise(self, run: _RunState, prog: Progress) -> dict[str, Any]:
        """After the teardown: exit codes, CPU/RSS rows, the fidelity verdict (said aloud
        when host-bound, saturated or with warnings), failed agents' stderr tails, the
        fan-out, QoS and same-host evidence and the throughput rows per subscriber;
        RunFailed when agents were still running at the deadline."""
        cfg, work, out, exit_codes = run.cfg, run.work, run.out, run.exit_codes
        out["exit_codes"] = exit_codes
        out["resource_rows"] = run.sampler.rows
        if run.monitor is not None:
            out["fidelity"] = run.monitor.result(run.sampler.rows, run.t_rows0, cfg,
                                                 work / "agents", out.get("capture_drops"))
            fid = out["fidelity"]
            if not fidelity.is_verified(fid):
                prog.log(f"{cfg['run_id']}: UNVERIFIED, no verdict: not checked: "
                         + "; ".join(fid.get("unverified") or []) + " (manifest: fidelity)")
            if fid["bound"] == "host":
                prog.log(f"{cfg['run_id']}: HOST-BOUND, the testbed could not keep up: "
                         + "; ".join(fid["reasons"]) + " (manifest: fidelity)")
            elif fid["bound"] == "saturated":
                prog.log(f"{cfg['run_id']}: {fid['saturation_text']} (a property of the "
                         "emulated machines; manifest: fidelity)")
            if fid.get("drops_by_cpu_text"):
                prog.log(f"{cfg['run_id']}: socket drops by CPU: {fid['drops_by_cpu_text']} "
                         "(manifest: fidelity.per_cpu)")
            for w in fid["warnings"]:
                prog.log(f"{cfg['run_id']}: warning: {w}")
        out["stderr_tails"] = {n: _tail(work / "agents" / f"{n}.stderr")
                               for n, c in exit_codes.items() if c != 0}
        out["fanout"] = self._fanout_evidence(cfg, work / "agents", exit_codes)
        out["agent_qos"] = agent_qos_evidence(cfg, work / "agents", exit_codes)
        # what the writers ran: [matrix] heartbeat_timing, or the agent's own at this count
        out["heartbeat_timing"] = agents_mod.heartbeat_timing(cfg)
        if exit_codes:  # transports, same-host pairs, data by path
            before, after = run.netdev or ({}, {})
            out["same_host"] = samehost.evidence(cfg, work / "agents", before, after)
        out["throughput_rows"] = {}
        if "timed_out" in out:
            raise RunFailed(f"timeout: {', '.join(out['timed_out'][:5])} still running after "
                            f"{cfg['execution_time']} s + run_timeout "
                            f"{cfg['timing']['run_timeout']} s")
        for name in cfg["placement"]:
            if name.startswith("sub") and cfg["agent"] != "ddsperf":
                text = (work / "agents" / f"{name}.stdout").read_text(errors="replace")
                secs = tables.perftest_sections(text)
                out["throughput_rows"][name] = len(secs.get("throughput_intervals", []))
        return out

    @staticmethod
    def _fanout_evidence(cfg: dict[str, Any], agents_dir: Path,
                         exit_codes: dict[str, int | None]) -> dict[str, Any]:
        """manifest ``fanout``: the run's setting and, for "joined-only", each agent's proof
        that the IP_MULTICAST_ALL=0 shim was active (its stderr), and which agents lack it
        (``inactive``: no "active" line; ``failed``: a socket it could not change). Such a
        run fails in :meth:`_check`: it did not have what the scenario asked for."""
        setting = cfg.get("fanout", "kernel")
        if setting == "kernel":
            return {"setting": setting}
        from mcastlab import paths

        ev = {n: agents_mod.shim_evidence((agents_dir / f"{n}.stderr").read_text(
            errors="replace")) for n in exit_codes}
        out = {"setting": setting, "shim": str(paths.MCASTALL_SHIM), "agents": ev,
               "sockets": sum(int(e["sockets"] or 0) for e in ev.values())}
        out["inactive"] = [n for n, e in ev.items() if not e["active"]]
        out["failed"] = [n for n, e in ev.items() if e["failed"]]
        return out

    @staticmethod
    def _record_coverage(cfg: dict[str, Any], work: Path, out: dict[str, Any],
                         prog: Progress) -> None:
        """manifest capture_coverage: each point's first/last packet against the run's
        span; a ring buffer that wrapped is said aloud (its figures describe the end)."""
        cov = _optional("captures.coverage")
        if cov is None or "run_span" not in out:
            return
        try:
            out["capture_coverage"] = cov.of_run(work / "pcaps", out["run_span"])
        except Exception as exc:  # evidence about evidence: never fails the run
            out["capture_coverage_error"] = f"{type(exc).__name__}: {exc}"
            return
        for point, c in out["capture_coverage"].items():
            if not c["whole"]:
                prog.log(f"{cfg['run_id']}: {point}: {c['text']} (ring_files "
                         f"{cfg['capture']['ring_files']} x {cfg['capture']['ring_mb']} MB); "
                         "its wire figures describe only that part (manifest: "
                         "capture_coverage)")

    @staticmethod
    def _record_windows(capture: capture_windows.WindowedCapture, cfg: dict[str, Any],
                        out: dict[str, Any], prog: Progress) -> None:
        """manifest capture_windows: each window's start, end, packets and kernel drops
        (captures/windows.py); what went wrong with a window is said aloud."""
        rec = out["capture_windows"] = capture.record()
        packets = sum(int(w.get("packets") or 0) for w in rec["windows"])
        prog.log(f"{cfg['run_id']}: capture: {rec['text']}, {packets} packets "
                 "(manifest: capture_windows)")
        for problem in rec["problems"]:
            prog.log(f"{cfg['run_id']}: capture window: {problem}")

    def _start_captures(self, net: Testbed, cfg: dict[str, Any], work: Path, prog: Progress) -> Any:
        cap = _optional("captures.capture")
        if cap is None:
            prog.log("captures.capture is not available: this run has no pcaps")
            return None
        prog.set_phase("starting captures")
        c = cfg["capture"]
        points = net.capture_points()
        missing = [p for p in c["points"] if p not in points]
        if missing:
            raise RunFailed(f"capture points {', '.join(missing)} not in the built network "
                            f"(it has: {', '.join(sorted(points))})")
        chosen = {p: points[p] for p in c["points"]}
        window_plan = capture_windows.plan_of(cfg)
        if window_plan is not None:  # windows in the measurement window; IGMP/PIM all along
            return capture_windows.WindowedCapture(net, chosen, work / "pcaps", c["snaplen"],
                                                   window_plan).start_control()
        return cap.start(net, chosen, work / "pcaps", c["snaplen"], c["ring_files"], c["ring_mb"])

    def _wait(self, procs: dict[str, subprocess.Popen[bytes]], deadline: float,
              prog: Progress, agents_dir: Path, show_discovery: bool = True,
              monitor: fidelity.Monitor | None = None,
              windows: capture_windows.CaptureWindowHook | None = None,
              engage: Callable[[], None] | None = None) -> list[str]:
        """Wait for every process; returns the names still running at the deadline.

        The phase shows discovery (agents that matched all their peers, from their
        stderr) until every agent has, then how many have finished. The fidelity
        monitor's window opens when every agent matched (at once for agents that do not
        report discovery) and closes when the first agent exits; so do the capture
        windows' (experiments/capture_windows.py). ``engage`` is called at that moment
        too, before them (hosts whose CPU limits take effect from the measurement).
        """
        last = 0.0
        matched: set[str] = set()
        watch = DiscoveryWatch(agents_dir)
        # The capture windows' moments first: the monitor's reads the other servers of a
        # cluster over ssh (seconds), which must not delay or stretch the windows.
        if engage is not None and not show_discovery:
            engage()
        if windows is not None and not show_discovery:
            windows.open_window()
        if monitor is not None and not show_discovery:
            monitor.open_window()
        while True:
            running = [n for n, p in procs.items() if p.poll() is None]
            if windows is not None and len(running) < len(procs):
                windows.close_window()
            if monitor is not None and len(running) < len(procs):
                monitor.close_window()
            if not running:
                return []
            now = time.monotonic()
            if now >= deadline:
                return running
            if engage is not None and show_discovery and len(matched) == len(procs):
                engage()
            if windows is not None and show_discovery and len(matched) == len(procs):
                windows.open_window()
            if monitor is not None and show_discovery and len(matched) == len(procs):
                monitor.open_window()
            if now - last > (1 if len(matched) < len(procs) else 5):
                last = now
                if show_discovery:
                    matched |= watch.poll(sorted(procs.keys() - matched))
                if show_discovery and len(matched) < len(procs) and len(running) == len(procs):
                    prog.set_phase(f"discovery ({len(matched)}/{len(procs)} matched)")
                else:
                    prog.set_phase(f"running ({len(procs) - len(running)}/{len(procs)} done)")
            time.sleep(0.2)

    @staticmethod
    def _stop_procs(procs: dict[str, subprocess.Popen[bytes]], net: Testbed | None = None) -> None:
        live = [p for p in procs.values() if p.poll() is None]
        for p in live:
            with contextlib.suppress(ProcessLookupError):
                if net is not None:
                    net.interrupt(p)  # reaches an agent on another server too
                else:
                    p.send_signal(signal.SIGINT)
        end = time.monotonic() + 3
        for p in live:
            with contextlib.suppress(subprocess.TimeoutExpired):
                p.wait(timeout=max(end - time.monotonic(), 0.05))
        for p in live:
            if p.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    p.kill()
                with contextlib.suppress(subprocess.TimeoutExpired):
                    p.wait(timeout=2)
