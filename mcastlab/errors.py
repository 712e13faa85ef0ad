"""Errors shared by the layers: raised in one package, caught or re-raised in another.

They live here, below every package that raises or catches them, so that no package
needs a higher or sibling one just to name a failure.
"""

from __future__ import annotations


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


class UnsafeResults(ValueError):
    """A results folder given as input names something outside itself (a run id that is
    not a plain directory name, a manifest member outside its run, a symbolic link), lists
    a run twice, or is given twice: one line naming the file and the entry
    (mcastlab/safepath.py)."""
