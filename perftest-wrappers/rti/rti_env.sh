# shellcheck shell=bash
# Shared by build_perftest.sh and run_perftest.sh (sourced, not run): where RTI Connext's
# target libraries and the built perftest_cpp are, and Perftest's option matching.

# rti_platform NDDSHOME: the Connext target folder under $NDDSHOME/lib for this machine,
# e.g. x64Linux4gcc7.3.0 (RTI names Linux targets <cpu>Linux<kernel>gcc<version>; the
# folder also holds java/ and other targets). RTI_PLATFORM overrides. When several fit,
# the newest (version order) wins. Prints nothing and fails when none fits.
rti_platform() {
  local home=$1 cpu d best=""
  if [ -n "${RTI_PLATFORM:-}" ]; then
    [ -d "$home/lib/$RTI_PLATFORM" ] || return 1
    echo "$RTI_PLATFORM"
    return 0
  fi
  case "$(uname -m)" in
    x86_64) cpu=x64 ;;
    aarch64 | arm64) cpu=armv8 ;;
    armv7*) cpu=armv7 ;;
    i?86) cpu=i86 ;;
    *) cpu=$(uname -m) ;;
  esac
  while IFS= read -r d; do
    [ -d "$d" ] && best=$(basename "$d")
  done < <(find "$home/lib" -mindepth 1 -maxdepth 1 -type d -name "${cpu}Linux*" 2>/dev/null | sort -V)
  [ -n "$best" ] || return 1
  echo "$best"
}

# rti_targets NDDSHOME: the folders under $NDDSHOME/lib, for messages.
rti_targets() {
  find "$1/lib" -mindepth 1 -maxdepth 1 -type d -printf '%f ' 2>/dev/null || true
}

# opt_is ARG SHORTEST FULL: whether RTI Perftest reads ARG as option FULL. Perftest takes
# any case-insensitive prefix of an option name, the first in its table's key order
# (ParameterManager.h IS_OPTION), so ARG names FULL when it is a prefix of FULL at least
# as long as SHORTEST (tests check SHORTEST against experiments/agent_options.py).
opt_is() {
  local a=${1,,} s=${2,,} f=${3,,}
  [ "${#a}" -ge "${#s}" ] && [ "${f:0:${#a}}" = "$a" ]
}
