"""Where the project's files, built binaries and private dependencies live."""

from __future__ import annotations

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
AGENT_BIN_DIR = REPO_ROOT / "perftest-wrappers" / "bin"
NATIVE_AGENT = AGENT_BIN_DIR / "perftest_cyclone"
NATIVE_AGENT_ASAN = AGENT_BIN_DIR / "perftest_cyclone_asan"
# The same contract on eProsima Fast DDS (perftest-wrappers/fastdds).
FASTDDS_AGENT = AGENT_BIN_DIR / "perftest_fastdds"
FASTDDS_AGENT_ASAN = AGENT_BIN_DIR / "perftest_fastdds_asan"
# LD_PRELOAD shim setting IP_MULTICAST_ALL=0 on the agents' UDP sockets (perftest-wrappers/
# mcastall): `[matrix] fanout = ["joined-only"]`. Its checkers stay in the build directory.
MCASTALL_SHIM = AGENT_BIN_DIR / "libmcastall_off.so"
MCASTALL_CHECK = REPO_ROOT / "build" / "perftest-wrappers_mcastall" / "mcastall_check"
MCASTALL_CHECK_ASAN = (REPO_ROOT / "build" / "perftest-wrappers_mcastall-asan"
                       / "mcastall_check_asan")
# Written by setup.sh when it does not build the Fast DDS agent: why (version, distribution).
FASTDDS_UNSUPPORTED_NOTE = REPO_ROOT / "build" / "fastdds-unsupported.txt"
RTI_WRAPPER = REPO_ROOT / "perftest-wrappers" / "rti" / "run_perftest.sh"
DEPS_DIR = REPO_ROOT / ".deps"
SMCROUTE_PREFIX = DEPS_DIR / "smcroute"
SMCROUTED = SMCROUTE_PREFIX / "usr" / "sbin" / "smcrouted"
SMCROUTECTL = SMCROUTE_PREFIX / "usr" / "sbin" / "smcroutectl"
# Debian marks frr and pimd as conflicting (installing frr removes pimd), so setup.sh
# unpacks frr's .deb into .deps/frr, like smcroute; a system-wide FRR is used otherwise.
FRR_PREFIX = DEPS_DIR / "frr"
FRR_PRIVATE = (FRR_PREFIX / "usr/lib/frr/pimd").exists()
FRR_LIBEXEC = FRR_PREFIX / "usr/lib/frr" if FRR_PRIVATE else Path("/usr/lib/frr")
VTYSH = FRR_PREFIX / "usr/bin/vtysh" if FRR_PRIVATE else Path("/usr/bin/vtysh")
EXPERIMENTS_DIR = REPO_ROOT / "experiments"
# Runtime state of live testbeds (what was created, for `mcastlab clean`).
STATE_DIR = Path("/run/mcastlab")
