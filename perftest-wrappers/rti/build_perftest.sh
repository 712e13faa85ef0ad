#!/usr/bin/env bash
# Build RTI Perftest (public sources, release 4.x) against the user's RTI Connext DDS.
#
#   NDDSHOME=/opt/rti_connext_dds-7.x perftest-wrappers/rti/build_perftest.sh [TAG]
#
# Clones rticommunity/rtiperftest at TAG (default v4.1) into .deps/rtiperftest and runs its
# build.sh for the traditional C++ API. Afterwards run_perftest.sh finds the binary through
# PERFTEST_HOME=.deps/rtiperftest (printed at the end).
set -euo pipefail
die() { echo "build_perftest.sh: $*" >&2; exit 3; }

tag=${1:-v4.1}
here=$(cd "$(dirname "$0")/../.." && pwd)
dest="$here/.deps/rtiperftest"

[ -n "${NDDSHOME:-}" ] && [ -d "$NDDSHOME" ] || die "NDDSHOME must point to an RTI Connext DDS installation (it is '${NDDSHOME:-unset}')"
arch=$(basename "$(ls -d "$NDDSHOME"/lib/*linux* 2>/dev/null | head -1)" 2>/dev/null || true)
[ -n "$arch" ] || die "no Linux target libraries under $NDDSHOME/lib: install the Connext target package for this machine"
command -v git >/dev/null || die "git is missing (apt-get install git)"

if [ ! -d "$dest/.git" ]; then
  git clone --depth 1 --branch "$tag" https://github.com/rticommunity/rtiperftest.git "$dest"
fi
(cd "$dest" && ./build.sh --platform "$arch" --nddshome "$NDDSHOME" --cpp-build)
echo "built: $(ls "$dest"/bin/*/release/perftest_cpp)"
echo "use:   export PERFTEST_HOME=$dest"
