#!/usr/bin/env bash
# Build RTI Perftest (public sources, release 4.x) against the user's RTI Connext DDS.
#
#   NDDSHOME=/opt/rti_connext_dds-7.x perftest-wrappers/rti/build_perftest.sh [TAG]
#
# Clones rticommunity/rtiperftest at TAG (default 4.3; its release tags are 4.0, 4.1,
# 4.1.1, 4.2, 4.3) into .deps/rtiperftest and runs its build.sh for the traditional C++
# API and this machine's Connext target (x64Linux..., from $NDDSHOME/lib; RTI_PLATFORM
# overrides). run_perftest.sh then finds the binary there without further settings.
# shellcheck source-path=SCRIPTDIR
set -euo pipefail
die() { echo "build_perftest.sh: $*" >&2; exit 3; }

tag=${1:-4.3}
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=rti_env.sh
. "$here/rti_env.sh"
dest="$(cd "$here/../.." && pwd)/.deps/rtiperftest"

[ -n "${NDDSHOME:-}" ] || die "NDDSHOME is not set: install RTI Connext DDS and export NDDSHOME=<its directory>"
[ -d "$NDDSHOME" ] || die "NDDSHOME=$NDDSHOME is not a directory"
platform=$(rti_platform "$NDDSHOME") || die "no $(uname -m) Linux target libraries under $NDDSHOME/lib (found: $(rti_targets "$NDDSHOME")): install the Connext target package for this machine, or set RTI_PLATFORM=<folder>"
[ -x "$NDDSHOME/bin/rtiddsgen" ] || die "$NDDSHOME/bin/rtiddsgen not found: Perftest's build needs Connext's code generator"
command -v git >/dev/null || die "git is missing (apt-get install git)"

if [ -d "$dest/.git" ]; then
  have=$(git -C "$dest" describe --tags --exact-match 2>/dev/null || echo "an untagged commit")
  [ "$have" = "$tag" ] || die "$dest holds $have, not $tag: remove it to build $tag"
else
  git clone --depth 1 --branch "$tag" https://github.com/rticommunity/rtiperftest.git "$dest" \
    || die "cannot clone rtiperftest at tag $tag (release tags: 4.0 4.1 4.1.1 4.2 4.3)"
fi
(cd "$dest" && ./build.sh --platform "$platform" --nddshome "$NDDSHOME" --cpp-build)
bin="$dest/bin/$platform/release/perftest_cpp"
[ -x "$bin" ] || die "the build finished without $bin"
echo "built: $bin (rtiperftest $tag, Connext target $platform)"
echo "run_perftest.sh finds it there; elsewhere: export PERFTEST_HOME=$dest"
