#!/usr/bin/env bash
# mcastlab installer: system packages, smcroute in a private prefix, the Python virtual
# environment, and the native agents. Idempotent; run as root on Debian 12 or Ubuntu 22.04+.
#
#   ./setup.sh            install whatever is missing
#   ./setup.sh --check    report what is missing, install nothing (exit 1 if anything is)
#   ./setup.sh --with-tex also install TeX, for `make -C paper`
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
cd "$here"

check_only=0
with_tex=0
for arg in "$@"; do
  case "$arg" in
    --check) check_only=1 ;;
    --with-tex) with_tex=1 ;;
    -h|--help) sed -n '2,8p' "$0"; exit 0 ;;
    *) echo "setup.sh: unknown option '$arg' (allowed: --check, --with-tex)" >&2; exit 2 ;;
  esac
done

# Every system package the project uses. user-mode-linux is a kernel with multicast routing
# and netem run as a process: the routers' kernel where the host's lacks them
# (topologies/uml.py). pimd comes from apt; smcroute and FRR conflict
# with it in Debian (they all own the kernel's multicast-routing socket), so they are
# unpacked into .deps/<name> instead (their libraries come from apt above): none of them
# ever runs in the same network namespace as another.
APT_PACKAGES=(
  build-essential cmake pkg-config git
  python3 python3-venv python3-dev
  iproute2 iputils-ping ethtool bridge-utils procps kmod psmisc
  mininet openvswitch-switch
  pimd
  user-mode-linux
  tcpdump tshark libpcap-dev
  cyclonedds-dev cyclonedds-tools
  iperf3 socat rt-tests shellcheck
  openssh-client openssh-server
  libyang2 libc-ares2 libjson-c5 libreadline8 libcap2 libpam0g
)
# eProsima Fast DDS for the second agent (perftest-wrappers/fastdds). Optional: where apt
# lacks it or has a version the agent does not support, setup says so and goes on without
# that agent (agent kinds fastdds and fastdds-asan are then unavailable).
FASTDDS_PACKAGES=(libfastrtps-dev fastdds-tools)
# The agent is written and tested against Fast DDS 2.9 (Debian 12: 2.9.1); it uses the 2.x
# API (fastrtps library, ReturnCode_t), which Fast DDS 3 renamed.
FASTDDS_MIN=2.9
FASTDDS_BELOW=3.0
TEX_PACKAGES=(texlive-latex-base texlive-latex-recommended texlive-latex-extra texlive-fonts-recommended latexmk)
[ "$with_tex" = 1 ] && APT_PACKAGES+=("${TEX_PACKAGES[@]}")

VENV="$here/.venv"
UV_VERSION=0.13.9  # installs the lock into the venv (see below)
DEPS="$here/.deps"
# Native components: each folder has a CMakeLists.txt that places its own outputs (see
# the folder's README); each is built twice, Release and Debug with AddressSanitizer
# (-DMCASTLAB_ASAN=ON). A stamp of the sources' hash decides whether to rebuild.
NATIVE_COMPONENTS=(perftest-wrappers/native captures/native perftest-wrappers/mcastall)
FASTDDS_COMPONENT=perftest-wrappers/fastdds
FASTDDS_NOTE="$here/build/fastdds-unsupported.txt"  # why the Fast DDS agent is not built
PRIVATE_DEBS=(smcroute frr)
private_ok() { case "$1" in smcroute) [ -x "$DEPS/smcroute/usr/sbin/smcrouted" ] ;;
                           frr) [ -x "$DEPS/frr/usr/lib/frr/pimd" ] ;; esac; }

missing=()
say() { printf 'setup: %s\n' "$*" >&2; }

python_for_venv() {
  # tomllib needs Python 3.11+; Ubuntu 22.04 ships 3.10 as python3 but has python3.11.
  for py in python3 python3.13 python3.12 python3.11; do
    p=$(command -v "/usr/bin/$py" || true)
    [ -n "$p" ] || continue
    if "$p" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' 2>/dev/null; then
      echo "$p"; return 0
    fi
  done
  return 1
}

apt_missing() {
  local out=()
  for p in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || out+=("$p")
  done
  echo "${out[@]:-}"
}

lock_hash() { sha256sum "$here/requirements.lock" "$here/pyproject.toml" | sha256sum | cut -c1-16; }

sources_hash() {
  # The Fast DDS agent also compiles the native agent's options.c, printer.c and measure.c.
  local extra=()
  [ "$1" = "$FASTDDS_COMPONENT" ] && extra=("$here/perftest-wrappers/native")
  find "$here/$1" "${extra[@]}" -type f \( -name '*.c' -o -name '*.h' -o -name '*.cpp' -o -name '*.hpp' \
      -o -name '*.idl' -o -name 'CMakeLists.txt' \) -print0 \
    | sort -z | xargs -0 cat | sha256sum | cut -c1-16
}
stamp_of() { echo "$here/build/$(echo "$1" | tr / _).stamp"; }
native_stale() { [ -f "$here/$1/CMakeLists.txt" ] && [ "$(cat "$(stamp_of "$1")" 2>/dev/null)" != "$(sources_hash "$1")" ]; }

# Fast DDS: "ok", "absent" (not installed) or why the installed version is unsupported.
fastdds_state() {
  local v
  v=$(dpkg-query -W -f='${Version}' libfastrtps-dev 2>/dev/null) || { echo absent; return; }
  dpkg-query -W -f='${Status}' libfastrtps-dev 2>/dev/null | grep -q 'install ok installed' || { echo absent; return; }
  v=${v#*:}; v=${v%%[+~-]*}
  if dpkg --compare-versions "$v" ge "$FASTDDS_MIN" && dpkg --compare-versions "$v" lt "$FASTDDS_BELOW"; then
    echo ok
  else
    echo "Fast DDS $v is installed, but the Fast DDS agent supports $FASTDDS_MIN <= version < $FASTDDS_BELOW" \
         "(it is written and tested against 2.9.1, Debian 12); agent kinds fastdds and fastdds-asan are" \
         "unavailable on this machine (the native agent is not affected)"
  fi
}

# ---- what is missing -------------------------------------------------------------
am=$(apt_missing)
[ -n "$am" ] && missing+=("system packages: $am")
for d in "${PRIVATE_DEBS[@]}"; do private_ok "$d" || missing+=("$d unpacked in $DEPS/$d"); done
getent group frrvty >/dev/null || missing+=("system group frrvty (FRR refuses to start without it)")
if [ ! -x "$VENV/bin/python" ] || [ "$(cat "$VENV/.mcastlab-lock" 2>/dev/null)" != "$(lock_hash)" ]; then
  missing+=("Python virtual environment $VENV (requirements.lock)")
fi
for c in "${NATIVE_COMPONENTS[@]}"; do
  native_stale "$c" && missing+=("native build of $c")
done
fds=$(fastdds_state)
case "$fds" in
  ok) native_stale "$FASTDDS_COMPONENT" && missing+=("native build of $FASTDDS_COMPONENT") ;;
  absent)
    if apt-cache show libfastrtps-dev >/dev/null 2>&1; then
      missing+=("Fast DDS packages: ${FASTDDS_PACKAGES[*]}")
    else
      say "note: Fast DDS (libfastrtps-dev) is not available from apt here: the Fast DDS agent cannot be built"
    fi ;;
  *) say "note: $fds" ;;
esac

if [ "$check_only" = 1 ]; then
  if [ ${#missing[@]} -eq 0 ]; then say "nothing missing"; exit 0; fi
  for m in "${missing[@]}"; do say "missing: $m"; done
  exit 1
fi

if [ "$(id -u)" != 0 ]; then
  echo "setup.sh: must run as root (it installs system packages and the tests build network namespaces)" >&2
  exit 1
fi

# ---- system packages ---------------------------------------------------------------
if [ -n "$am" ]; then
  say "installing system packages: $am"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  # Ubuntu 22.04: python3 is 3.10; the venv needs 3.11.
  if ! python_for_venv >/dev/null; then am="$am python3.11 python3.11-venv python3.11-dev"; fi
  # shellcheck disable=SC2086
  apt-get install -y -qq --no-install-recommends $am >/dev/null
fi

# ---- Fast DDS (optional: the second agent) --------------------------------------------
if [ "$(fastdds_state)" = absent ]; then
  export DEBIAN_FRONTEND=noninteractive
  if apt-get install -y -qq --no-install-recommends "${FASTDDS_PACKAGES[@]}" >/dev/null 2>&1 \
     || { apt-get update -qq && apt-get install -y -qq --no-install-recommends "${FASTDDS_PACKAGES[@]}" >/dev/null 2>&1; }; then
    say "installed Fast DDS: ${FASTDDS_PACKAGES[*]}"
  else
    say "Fast DDS is not available from apt on this distribution (${FASTDDS_PACKAGES[*]}): the Fast DDS" \
        "agent is not built; agent kinds fastdds and fastdds-asan are unavailable (the native agent is not affected)"
  fi
fi

# ---- smcroute and FRR, unpacked beside pimd ------------------------------------------
for d in "${PRIVATE_DEBS[@]}"; do
  private_ok "$d" && continue
  say "unpacking $d into $DEPS/$d"
  tmp=$(mktemp -d)
  (cd "$tmp" && apt-get download -qq "$d" >/dev/null 2>&1) || {
    apt-get update -qq && (cd "$tmp" && apt-get download -qq "$d"); }
  mkdir -p "$DEPS/$d"
  dpkg -x "$tmp"/"$d"_*.deb "$DEPS/$d"
  rm -rf "$tmp"
done
getent group frrvty >/dev/null || groupadd --system frrvty

# ---- Python virtual environment ------------------------------------------------------
if [ ! -x "$VENV/bin/python" ] || [ "$(cat "$VENV/.mcastlab-lock" 2>/dev/null)" != "$(lock_hash)" ]; then
  py=$(python_for_venv) || { echo "setup.sh: no Python 3.11+ found" >&2; exit 1; }
  say "creating virtual environment with $py"
  [ -x "$VENV/bin/python" ] || "$py" -m venv "$VENV"
  # pip spent about 60 s of a fresh machine's 2-minute setup on the lock (70 wheels unpacked
  # and byte-compiled one by one); uv installs the same pinned versions in about 5 s. uv is
  # a wheel from the same index; where it cannot be installed or fails, pip does the work.
  if "$VENV/bin/pip" install -q "uv==$UV_VERSION" >/dev/null 2>&1 \
     && "$VENV/bin/uv" pip install -q --python "$VENV/bin/python" -r requirements.lock \
     && "$VENV/bin/uv" pip install -q --python "$VENV/bin/python" --no-deps -e .; then
    :
  else
    say "uv unavailable or failed: installing the lock with pip"
    "$VENV/bin/pip" install -q --upgrade pip
    "$VENV/bin/pip" install -q -r requirements.lock
    "$VENV/bin/pip" install -q --no-deps -e . >/dev/null 2>&1 || "$VENV/bin/pip" install --no-deps -e .
  fi
  # Mininet comes from the distribution (it needs its mnexec binary); expose only its
  # package to the venv rather than every system site-package.
  site=$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  mn_pkg=$(/usr/bin/python3 -c 'import mininet, os; print(os.path.dirname(mininet.__file__))')
  ln -sfn "$mn_pkg" "$site/mininet"
  lock_hash > "$VENV/.mcastlab-lock"
fi

# ---- native components (Release and AddressSanitizer builds) ------------------------
mkdir -p "$here/build"
fds=$(fastdds_state)
if [ "$fds" = ok ]; then
  NATIVE_COMPONENTS+=("$FASTDDS_COMPONENT")
  rm -f "$FASTDDS_NOTE"
else
  [ "$fds" = absent ] && fds="Fast DDS (libfastrtps-dev) is not installed: it is not available from apt on this distribution"
  say "not building $FASTDDS_COMPONENT: $fds"
  echo "$fds" > "$FASTDDS_NOTE"
fi
for c in "${NATIVE_COMPONENTS[@]}"; do
  native_stale "$c" || continue
  say "building $c"
  b="$here/build/$(echo "$c" | tr / _)"
  cmake -S "$here/$c" -B "$b" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$b" -j"$(nproc)" >/dev/null
  cmake -S "$here/$c" -B "$b-asan" -DCMAKE_BUILD_TYPE=Debug -DMCASTLAB_ASAN=ON >/dev/null
  cmake --build "$b-asan" -j"$(nproc)" >/dev/null
  sources_hash "$c" > "$(stamp_of "$c")"
done

say "ready"
