#!/usr/bin/env bash
# Run real RTI Perftest (C++ traditional API, 4.x) with the native agent's command line.
#
#   perftest-wrappers/rti/run_perftest.sh -pub -numSubscribers 3 -executionTime 20 ...
#
# Needs NDDSHOME (an RTI Connext DDS installation) and a valid license
# (RTI_LICENSE_FILE, or rti_license.dat in NDDSHOME or the current directory), and a
# perftest_cpp binary: PERFTEST_BIN, else $PERFTEST_HOME/bin/<arch>/release/perftest_cpp as
# built by ./build.sh from rticommunity/rtiperftest (see README.md). Adds `-batchSize 0`
# unless the caller gave -batchSize: Connext Pro batches small samples by default and then
# pings every latencyCount *batches*; the study pinged every latencyCount samples.
set -euo pipefail

die() { echo "run_perftest.sh: $*" >&2; exit 3; }

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

bin="${PERFTEST_BIN:-}"
if [ -z "$bin" ] && [ -n "${PERFTEST_HOME:-}" ]; then
  bin=$(ls "$PERFTEST_HOME"/bin/*/release/perftest_cpp 2>/dev/null | head -1 || true)
fi
[ -n "$bin" ] && [ -x "$bin" ] || die "perftest_cpp not found: set PERFTEST_BIN=<path to perftest_cpp> or PERFTEST_HOME=<rtiperftest checkout built with ./build.sh --platform <arch> --nddshome \$NDDSHOME --cpp-build>"

args=("$@")
has_batch=0
for a in "${args[@]}"; do
  if [ "$(echo "$a" | tr '[:upper:]' '[:lower:]')" = "-batchsize" ]; then has_batch=1; fi
done
[ "$has_batch" = 1 ] || args+=(-batchSize 0)

# Connext's libraries for the perftest_cpp dynamic build.
arch_lib=$(ls -d "$NDDSHOME"/lib/*/ 2>/dev/null | head -1 || true)
[ -n "$arch_lib" ] && export LD_LIBRARY_PATH="${arch_lib%/}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

echo "run_perftest.sh: $bin ${args[*]} (license $license)" >&2
exec "$bin" "${args[@]}"
