#!/usr/bin/env bash
# Run real RTI Perftest (C++ traditional API, 4.x) with the native agent's command line.
#
#   perftest-wrappers/rti/run_perftest.sh -pub -numSubscribers 3 -executionTime 20 ...
#
# Needs NDDSHOME (an RTI Connext DDS installation) and a valid license
# (RTI_LICENSE_FILE, or rti_license.dat in NDDSHOME or the current directory), and a
# perftest_cpp binary: PERFTEST_BIN, else $PERFTEST_HOME/bin/<platform>/release/perftest_cpp
# (PERFTEST_HOME defaults to .deps/rtiperftest, where build_perftest.sh builds it).
#
# What it adds to the caller's options, each said on stderr:
# - nothing to the transport: without -transport Perftest uses its XML profile's, UDPv4 and
#   shared memory (Perftest's default, as the study ran it; mcastlab's same_host = "shm"),
#   with -transport UDPv4 UDP only (same_host = "udp", the testbed's default). Connext
#   takes shared memory only to participants of its own host id (by default derived from
#   the host's IPv4 address, which differs per emulated host). Transports other than UDPv4
#   and SHMEM are refused. The effective transport is said on stderr
#   ("config: transport ..."), where the runner reads it.
# - `-qosFile <PERFTEST_HOME>/perftest_qos_profiles.xml` unless -qosFile or -noXmlQos is
#   given: Perftest reads its QoS profiles from its working directory by default.
#   PERFTEST_QOS_FILE overrides the file.
# - `-batchSize 0` to a publisher that sets no -batchSize: Connext Pro batches samples up
#   to 8192 bytes by default and then pings every latencyCount *batches*; the study pinged
#   every latencyCount samples. Subscribers get nothing: -batchSize is publisher-only and
#   Perftest refuses it with -sub.
# shellcheck source-path=SCRIPTDIR
set -euo pipefail

die() { echo "run_perftest.sh: $*" >&2; exit 3; }
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=rti_env.sh
. "$here/rti_env.sh"

[ -n "${NDDSHOME:-}" ] || die "NDDSHOME is not set: install RTI Connext DDS and export NDDSHOME=<its directory> (this wrapper runs real RTI Perftest; without a license use perftest-wrappers/bin/perftest_cyclone)"
[ -d "$NDDSHOME" ] || die "NDDSHOME=$NDDSHOME is not a directory"

license=""
for f in "${RTI_LICENSE_FILE:-}" "$NDDSHOME/rti_license.dat" "$PWD/rti_license.dat"; do
  if [ -n "$f" ] && [ -f "$f" ]; then license=$f; break; fi
done
[ -n "$license" ] || die "no RTI license found: set RTI_LICENSE_FILE=<path to rti_license.dat> or copy it to $NDDSHOME/rti_license.dat"
if grep -q "<expiration_date>" "$license" 2>/dev/null; then
  exp=$(sed -n 's:.*<expiration_date>\([0-9-]*\)</expiration_date>.*:\1:p' "$license" | head -1)
  if [ -n "$exp" ] && [ "$(date +%F)" \> "$exp" ]; then
    die "the RTI license $license expired on $exp: get a new one from RTI"
  fi
fi
export RTI_LICENSE_FILE="$license"

platform=$(rti_platform "$NDDSHOME") || die "no $(uname -m) Linux target libraries under $NDDSHOME/lib (found: $(rti_targets "$NDDSHOME")): install the Connext target package for this machine, or set RTI_PLATFORM=<folder>"

perftest_home=${PERFTEST_HOME:-$(cd "$here/../.." && pwd)/.deps/rtiperftest}
bin="${PERFTEST_BIN:-}"
if [ -z "$bin" ]; then
  bin="$perftest_home/bin/$platform/release/perftest_cpp"
  [ -x "$bin" ] || bin=$(find "$perftest_home/bin" -path '*/release/perftest_cpp' 2>/dev/null | sort | head -1 || true)
fi
[ -x "$bin" ] || die "perftest_cpp not found: set PERFTEST_BIN=<path to perftest_cpp> or PERFTEST_HOME=<rtiperftest checkout built by perftest-wrappers/rti/build_perftest.sh> (looked in $perftest_home/bin/$platform/release)"

args=("$@")
role="" has_batch=0 has_qos=0 transport=""
for ((i = 0; i < ${#args[@]}; i++)); do
  a=${args[i]}
  case "$a" in -*) ;; *) continue ;; esac  # a value: Perftest never takes one starting with -
  if opt_is "$a" -pu -pub; then role=pub
  elif opt_is "$a" -su -sub; then role=sub
  elif opt_is "$a" -b -batchSize; then has_batch=1
  elif opt_is "$a" -q -qosFile || opt_is "$a" -noX -noXmlQos; then has_qos=1
  elif opt_is "$a" -tr -transport; then transport=${args[i + 1]:-}
  fi
done

notes=()
case "$transport" in
  "") echo "config: transport UDPv4|SHMEM (Perftest's default)" >&2 ;;
  UDPv4|SHMEM) echo "config: transport $transport" >&2 ;;
  *) die "-transport $transport refused: allowed UDPv4, SHMEM, or none (Perftest's default, UDPv4|SHMEM); the emulated hosts have no other network (no IPv6, TCP or WAN servers)" ;;
esac
if [ "$has_qos" = 0 ]; then
  qos=${PERFTEST_QOS_FILE:-$perftest_home/perftest_qos_profiles.xml}
  if [ ! -f "$qos" ] && [ -z "${PERFTEST_QOS_FILE:-}" ]; then
    qos="$(cd "$(dirname "$bin")/../../.." 2>/dev/null && pwd)/perftest_qos_profiles.xml"
  fi
  [ -f "$qos" ] || die "perftest_qos_profiles.xml not found (looked for $qos): set PERFTEST_QOS_FILE=<its path> or PERFTEST_HOME=<the rtiperftest checkout>"
  args+=(-qosFile "$qos")
  notes+=("added -qosFile $qos")
fi
if [ "$role" = pub ] && [ "$has_batch" = 0 ]; then
  args+=(-batchSize 0)
  notes+=("added -batchSize 0 (one ping every latencyCount samples, not batches)")
fi

# Connext's libraries for a perftest_cpp linked dynamically.
export LD_LIBRARY_PATH="$NDDSHOME/lib/$platform${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

for n in "${notes[@]}"; do echo "run_perftest.sh: $n" >&2; done
echo "run_perftest.sh: $bin ${args[*]} (license $license, platform $platform)" >&2
exec "$bin" "${args[@]}"
