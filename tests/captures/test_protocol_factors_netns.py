"""Connext's multicast resend choice on the wire: when a repair goes to the group.

    h1 (pub0) -- s1 (snooping bridge, querier) -- h2 (sub0), h3 (sub1), h4 (sub2)
    capture on h1-eth0

One multicast run per value of ``[matrix] multicast_resend`` (1 publisher, 3
subscribers). Every agent gets ``-receiveBufferSize 4096`` (Perftest's option; the kernel
keeps 8 KiB, a dozen datagrams), so the readers' sockets overflow when the writer sends
its window of 50 samples at once and the readers NACK what they lost: real loss without
netem. With "second-nack" (Connext's multicast_resend_threshold 2; Cyclone's
RetransmitMerging never) a reader's repair goes to it alone unless another reader's
repair of that sample is still queued, then to the group: most repairs are addressed to
one host. With "first-nack" (-multicastResendOnFirstNack, RetransmitMerging adaptive)
every repair goes to the group. The manifest's effective QoS reads the choice back. In
both, as Perftest's -multicast asks (enable_multicast_periodic_heartbeat), the writer's
periodic acknowledgement requests go to the group (those that answer a NACK go to that
reader).

Measured (2026-12-07, 4 s runs): "second-nack" 978 repairs to single readers and 80 to
the group; "first-nack" 223 to the group and none to single readers; acknowledgement
requests 3,732 to the group and 1,166 to single readers (second-nack).
"""

from __future__ import annotations

import ipaddress
import json
from pathlib import Path

import pytest

from captures import dissect as dz
from captures import heartbeats, repairs
from tests.helpers.scenarios import run_native_campaign

pytestmark = [pytest.mark.netns, pytest.mark.timeout(600)]

H1 = int(ipaddress.IPv4Address("10.0.0.1"))

SCENARIO = """
[campaign]
name = "multicast_resend"
retries = 1
[topology]
name = "lan"
params = { hosts = 4, snooping = true, querier = true }
[agent]
kind = "native"
extra_args = ["-receiveBufferSize", "4096"]
[matrix]
publishers = [1]
subscribers = [3]
modes = ["multicast"]
execution_time = 4
multicast_resend = ["second-nack", "first-nack"]
[placement]
strategy = "explicit"
publishers = ["h1"]
subscribers = ["h2", "h3", "h4"]
[timing]
warmup = 0
converge_timeout = 60
run_timeout = 120
[capture]
points = ["h1-eth0"]
snaplen = 256
window_s = 0
"""


def test_repairs_go_to_the_group_from_the_nack_the_factor_says(tmp_path: Path) -> None:
    root = run_native_campaign(tmp_path, SCENARIO, timeout=500)
    got = {}
    for value, threshold in (("second-nack", "2"), ("first-nack", "1")):
        run = root / f"lan-rel-100B-resend-{value}-1x3-multicast-r1"
        manifest = json.loads((run / "manifest.json").read_text())
        qos = manifest["agent_qos"]
        assert qos["publisher"]["writer.multicast_resend_threshold"] == threshold, qos
        assert qos["asked"] == {
            "writer.multicast_resend_threshold": f"multicast_resend = {value}"}
        assert qos["subscriber"]["transport.recv_socket_buffer_size"] == "4096 B"
        pcaps = sorted((run / "pcaps").glob("h1-eth0.pcap*"))
        assert pcaps, f"{run.name}: no capture"
        d = dz.dissect(pcaps[0])
        got[value] = repairs.destinations(d, source=H1)
        # Perftest's -multicast: periodic heartbeats to the group, read back and on the wire
        assert qos["publisher"]["writer.multicast_periodic_heartbeat"] == "on", qos
        (writer,) = heartbeats.throughput_writers(d, 1, source=H1)
        to_group, to_one = heartbeats.request_destinations(d, writer[0], writer[1])
        print(f"{run.name}: {got[value]}; acknowledgement requests to the group {to_group}, "
              f"to one reader {to_one}")
        assert to_group > to_one, (to_group, to_one)
    second, first = got["second-nack"], got["first-nack"]
    assert second.first > 1000 and first.first > 1000, got
    assert second.to_reader > 0, f"no loss, nothing to repair: {second}"
    assert second.to_reader > 2 * second.to_group, second  # mostly one reader's repairs
    assert first.to_group > 0 and first.to_reader == 0, first
