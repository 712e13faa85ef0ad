"""Skip markers for netns tests that need a kernel feature this machine may lack.

A routed network needs the kernel's multicast routing (CONFIG_IP_MROUTE) and link
shaping needs sch_netem; some kernels are built without them. The testbed refuses to build
there, naming the missing feature, and the tests that need one are skipped with that same
message instead of failing.
"""

from __future__ import annotations

import pytest

from mcastlab import capabilities


def needs(feature: str) -> pytest.MarkDecorator:
    """skipif the kernel lacks ``feature`` (a name of :data:`capabilities.MESSAGES`)."""
    what, _ = capabilities.MESSAGES[feature]
    return pytest.mark.skipif(not capabilities.detect()[feature], reason=what)


routed = needs("mroute")
