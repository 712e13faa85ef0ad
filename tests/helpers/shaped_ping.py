"""What a ping across shaped egresses must show: every echo at least the delays late, and a
round-trip loss a binomial count of 1 - (1 - loss)**egresses, accepted within 4.5
standard deviations (false alarm < 1e-5)."""

from __future__ import annotations

import math
import re
import subprocess


def check(res: subprocess.CompletedProcess, egresses: int, delay_ms: float,
          loss_pct: float) -> None:
    """Asserts the summary of ``ping -q`` (``res``) against ``egresses`` shaped egresses of
    ``delay_ms`` and ``loss_pct`` each, there and back together."""
    m = re.search(r"(\d+) packets transmitted, (\d+) received", res.stdout)
    assert m, res.stdout + res.stderr
    sent, received = int(m.group(1)), int(m.group(2))
    rtt = re.search(r"= ([\d.]+)/([\d.]+)/([\d.]+)/", res.stdout)
    assert rtt and float(rtt.group(1)) >= egresses * delay_ms, res.stdout
    p = 1 - (1 - loss_pct / 100) ** egresses
    lost = sent - received
    sd = math.sqrt(sent * p * (1 - p))
    assert abs(lost - sent * p) <= 4.5 * sd, (lost, sent, p)
