"""The agents under test and everything that differs between them (one place).

The agents share one contract (perftest-wrappers/native/README.md); what their stderr
shows for the same command line, their names and binaries differ, and only here.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

BIN = Path(__file__).resolve().parents[2] / "perftest-wrappers" / "bin"


@dataclass(frozen=True)
class AgentKind:
    """One agent and what its stderr shows for the same command line."""

    name: str            # the scenario's agent.kind
    binary: Path
    asan: Path
    source: str          # where setup.sh builds it from
    prog: str            # the prefix of its command-line error messages
    process_prefix: str  # its process name as the kernel keeps it (15 characters)
    # stderr evidence of the effective configuration:
    nic_eth0: str        # -nic eth0 resolved to that interface (by name); format with ip=
    peers_evidence: tuple[str, ...]  # -peer 9@<ip0>: format with ip0=, probing indices 0..9
    shm: bool = False    # has a shared-memory transport: -transport SHMEM, default UDPv4|SHMEM

    def peers(self, ip0: str) -> list[str]:
        return [e.format(ip0=ip0) for e in self.peers_evidence]


AGENTS: dict[str, AgentKind] = {
    "native": AgentKind(
        "native", BIN / "perftest_cyclone", BIN / "perftest_cyclone_asan",
        "perftest-wrappers/native", "perftest_cyclone", "perftest_cyclon",
        nic_eth0='NetworkInterface name="eth0"',
        peers_evidence=("<MaxAutoParticipantIndex>9</MaxAutoParticipantIndex>",
                        '<Peer address="{ip0}"/>')),
    "fastdds": AgentKind(
        "fastdds", BIN / "perftest_fastdds", BIN / "perftest_fastdds_asan",
        "perftest-wrappers/fastdds", "perftest_fastdds", "perftest_fastdd",
        # the agent resolves the name to the interface's address, Fast DDS's whitelist entry
        nic_eth0="<interfaceWhiteList><address>{ip}</address><!-- -nic eth0 -->",
        peers_evidence=("<maxInitialPeersRange>10</maxInitialPeersRange>",
                        "<initialPeersList><locator><udpv4><address>{ip0}</address>"),
        shm=True),
}
