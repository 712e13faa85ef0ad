"""Emulated networks: switched LANs and routed multicast domains (see docs/contracts.md §2).

    spec = topologies.resolve("lan", {"hosts": 4, "snooping": True})
    topologies.missing_capabilities(spec)         # [] when this machine can build it
    with topologies.build(spec, workdir=logs) as net:
        net.wait_converged(timeout=60)
        net.popen("h1", ["cmd", ...], stdout=f, stderr=g)

Families, one module each: lan, routed, lab (lab and production).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcastlab.errors import BuildError, ConvergenceError, TopologyParamError
from topologies.spec import Spec

if TYPE_CHECKING:  # at run time build() imports it, when it builds
    from topologies.net import Network

__all__ = [
    "FAMILIES",
    "BuildError",
    "ConvergenceError",
    "Spec",
    "TopologyParamError",
    "build",
    "host_names",
    "missing_capabilities",
    "resolve",
]


def _planners() -> dict[str, Callable[[dict[str, Any]], Spec]]:
    from topologies import lab, lan, routed

    return {"lan": lan.plan, "routed": routed.plan, "lab": lab.plan_lab,
            "production": lab.plan_production}


FAMILIES = ("lan", "routed", "lab", "production")


def resolve(name: str, params: dict[str, Any] | None = None) -> Spec:
    """Validate `params` for topology `name`; raises TopologyParamError naming key and values."""
    planners = _planners()
    if name not in planners:
        raise TopologyParamError(f"unknown topology {name!r}; allowed: {', '.join(FAMILIES)}")
    return planners[name](dict(params or {}))


def missing_capabilities(spec: Spec) -> list[str]:
    """One message per missing capability (naming the alternative); empty when buildable."""
    from mcastlab import capabilities

    return capabilities.missing(spec.needs)


def host_names(spec: Spec) -> list[str]:
    """Logical host names, without building anything."""
    return list(spec.hosts)


@contextlib.contextmanager
def build(spec: Spec, workdir: Path | str | None = None, cluster: Any = None,
          fail_on: str = "") -> Iterator[Network]:
    """Build `spec` (namespaces, links, switches, daemons); tear everything down on exit.

    Raises TopologyParamError before creating anything if a capability is missing.
    Any failure while building raises :class:`BuildError` (one line: the step, the node,
    the build log); everything built so far is torn down first. When the work directory
    was private (no `workdir`), the log is kept in ``/var/log/mcastlab/``. `cluster` (a
    :class:`topologies.cluster.ClusterConfig`) places the nodes on several servers.
    `fail_on` (tests only) names a node whose configuration gets one command that fails.
    """
    from topologies.net import Network, check_buildable

    check_buildable(spec)
    if cluster is not None:
        from topologies.cluster import placement

        placement(spec, cluster)  # refused before anything is built
    net = Network(spec, Path(workdir) if workdir is not None else None, cluster=cluster,
                  fail_on=fail_on)
    failure: BuildError | None = None
    try:
        try:
            net.start()
        except Exception as exc:  # Mininet, ovs-vsctl, a daemon: named by the step under way
            import traceback

            if isinstance(exc, BuildError):
                failure = exc
            else:
                what, node = net.step
                failure = BuildError(what, node, f"{type(exc).__name__}: {exc}")
            net.log(f"== build failed: {failure}\n{traceback.format_exc()}")
            failure = failure.with_log(str(keep_log(net)))
        if failure is None:
            yield net
    finally:
        net.stop()
    if failure is not None:
        raise failure


def keep_log(net: Network) -> Path:
    """Where the build log will be after teardown: in the work directory, or — when that
    directory is private and removed at teardown — a copy in /var/log/mcastlab/."""
    import shutil

    from topologies.net import FAILED_LOG_DIR

    if not net.private_workdir:
        return Path(net.build_log)
    FAILED_LOG_DIR.mkdir(parents=True, exist_ok=True)
    kept = FAILED_LOG_DIR / f"build-{net.tag}.log"
    shutil.copyfile(net.build_log, kept)
    return kept
