"""Skip markers for netns tests that need a kernel feature this machine may lack.

A routed network needs multicast routing (CONFIG_IP_MROUTE): the host kernel's, or the
routers' own user-mode Linux kernels (router_kernel=uml, topologies/uml.py) where the host's
lacks it. Link shaping needs sch_netem. The testbed refuses to build without them, naming the
missing feature, and the tests that need one are skipped with that same message instead of
failing.
"""

from __future__ import annotations

import pytest

from mcastlab import capabilities


def needs(feature: str) -> pytest.MarkDecorator:
    """skipif the kernel lacks ``feature`` (a name of :data:`capabilities.MESSAGES`)."""
    what, _ = capabilities.MESSAGES[feature]
    return pytest.mark.skipif(not capabilities.detect()[feature], reason=what)


# Routed tests run wherever routers can route multicast: in the host's kernel or in their own.
routed = pytest.mark.skipif(
    not (capabilities.detect()["mroute"] or capabilities.detect()["uml"]),
    reason=f"{capabilities.MESSAGES['mroute'][0]} and {capabilities.MESSAGES['uml'][0]}")
