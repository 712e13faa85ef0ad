#!/usr/bin/env bash
# Benchmark (acceptance 5 of issue 2, acceptance 3 of issue 13; not a test): the native
# agent (Cyclone DDS) and the Fast DDS agent against Cyclone's own ddsperf, in one
# invocation, on the same two network namespaces joined by a Linux bridge.
#
#   sudo perftest-wrappers/bench.sh [SECONDS]      (default 10 s per measurement)
#
# 1. throughput, 1 -> 1, reliable, 100 B: each agent (-pub/-sub) vs `ddsperf pub size 100`/`sub`
# 2. latency, 100 B: each agent -latencyTest vs `ddsperf ping size 100`/`pong`
# Prints samples/s of each, the throughput ratio agent/ddsperf (goal >= 1.0, no less than
# 0.9) and the median one-way latency of each and their ratio (goal <= 1.1); then the Fast
# DDS column: its figures, fastdds/ddsperf and fastdds/native. All three report one-way
# latency as RTT/2. Without a built Fast DDS agent its column says why (setup.sh's note)
# and the rest is measured as before. Run it on a quiet machine.
set -euo pipefail

secs=${1:-10}
here=$(cd "$(dirname "$0")" && pwd)
agent="$here/bin/perftest_cyclone"
fastdds="$here/bin/perftest_fastdds"
fastdds_note="$here/../build/fastdds-unsupported.txt"
[ "$(id -u)" = 0 ] || { echo "bench.sh: must run as root (it creates network namespaces)" >&2; exit 1; }
[ -x "$agent" ] || { echo "bench.sh: $agent is missing: run ./setup.sh" >&2; exit 1; }
command -v ddsperf >/dev/null || { echo "bench.sh: ddsperf is missing (apt-get install cyclonedds-tools)" >&2; exit 1; }
fastdds_why=""
if [ ! -x "$fastdds" ]; then
  fastdds_why="$fastdds is not built"
  [ -f "$fastdds_note" ] && fastdds_why="$fastdds_why: $(cat "$fastdds_note")"
  [ -f "$fastdds_note" ] || fastdds_why="$fastdds_why (run ./setup.sh)"
fi

tag=$(od -An -N3 -tx1 /dev/urandom | tr -d ' \n')
nsa="pb${tag}a"; nsb="pb${tag}b"; br="pb${tag}br"; va="pb${tag}va"; vb="pb${tag}vb"
net="10.$((250 + 0x${tag:0:2} % 5)).$((0x${tag:2:2}))"
ipa="$net.1"; ipb="$net.2"
work=$(mktemp -d)
pids=()
# shellcheck source=perftest-wrappers/bench_lib.sh
source "$here/bench_lib.sh"

cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  ip link del "$va" 2>/dev/null || true
  ip link del "$vb" 2>/dev/null || true
  ip link del "$br" 2>/dev/null || true
  ip netns del "$nsa" 2>/dev/null || true
  ip netns del "$nsb" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

ip link add "$br" type bridge
ip link set "$br" type bridge mcast_snooping 0
ip link set "$br" up
for pair in "$nsa:$va:$ipa" "$nsb:$vb:$ipb"; do
  IFS=: read -r ns veth addr <<<"$pair"
  ip netns add "$ns"
  ip link add "$veth" type veth peer name eth0 netns "$ns"
  ip link set "$veth" master "$br" up
  ip -n "$ns" addr add "$addr/24" dev eth0
  ip -n "$ns" link set eth0 up
  ip -n "$ns" link set lo up
  ip -n "$ns" route add 224.0.0.0/4 dev eth0
done

uri() { echo "<CycloneDDS><Domain id=\"any\"><General><Interfaces><NetworkInterface address=\"$1\"/></Interfaces></General></Domain></CycloneDDS>"; }
echo "bench: $secs s per measurement; namespaces $nsa ($ipa) and $nsb ($ipb) on bridge $br" >&2

# 1a. agent throughput
agent_throughput "$agent" a "$nsa" "$ipa" "$nsb" "$ipb"; agent_tp=$result

# 1b. ddsperf throughput (keep-all reliable, its defaults); average of the per-second
# rates after the first second
bg "$nsb" "$work/dsub" env CYCLONEDDS_URI="$(uri "$ipb")" ddsperf -D "$((secs + 2))" sub
sleep 1
ip netns exec "$nsa" env CYCLONEDDS_URI="$(uri "$ipa")" ddsperf -D "$secs" pub size 100 >/dev/null 2>&1
wait "${pids[-1]}" || true
ddsperf_tp=$(awk '/ size 100 .* rate / {for (i = 1; i <= NF; i++) if ($i == "rate") {r = $(i + 1); if (r > 0) {n++; if (n > 1) {s += r; k++}}}} END {if (k) printf "%.0f", s / k * 1000; else print 0}' "$work/dsub")

# 1c. Fast DDS agent throughput (same command line)
fastdds_tp=0
if [ -z "$fastdds_why" ]; then agent_throughput "$fastdds" f "$nsa" "$ipa" "$nsb" "$ipb"; fastdds_tp=$result; fi

# 2a. agent latency test
agent_latency "$agent" a "$nsa" "$ipa" "$nsb" "$ipb"; agent_lat=$result

# 2b. ddsperf ping/pong (ping prints one-way = RTT/2 statistics once a second)
bg "$nsb" "$work/dpong" env CYCLONEDDS_URI="$(uri "$ipb")" ddsperf -D "$((secs + 2))" pong
sleep 1
ip netns exec "$nsa" env CYCLONEDDS_URI="$(uri "$ipa")" ddsperf -D "$secs" ping size 100 >"$work/dping" 2>&1
wait "${pids[-1]}" || true
# median of the per-second medians (one-way, us)
ddsperf_lat=$(awk '/ size 100 mean / {for (i = 1; i <= NF; i++) if ($i == "50%") {v = $(i + 1); sub("us", "", v); print v}}' "$work/dping" \
  | sort -g | awk '{a[NR] = $1} END {if (NR) print a[int((NR + 1) / 2)]; else print 0}')

# 2c. Fast DDS agent latency test
fastdds_lat=0
if [ -z "$fastdds_why" ]; then agent_latency "$fastdds" f "$nsa" "$ipa" "$nsb" "$ipb"; fastdds_lat=$result; fi

printf 'throughput 1->1 reliable 100 B:  agent %s samples/s  ddsperf %s samples/s  ratio agent/ddsperf %s (goal >= 1.0, min 0.9)\n' \
  "$agent_tp" "$ddsperf_tp" "$(ratio "$agent_tp" "$ddsperf_tp")"
printf 'latency one-way median 100 B:    agent %s us  ddsperf %s us  ratio agent/ddsperf %s (goal <= 1.1)\n' \
  "$agent_lat" "$ddsperf_lat" "$(ratio "$agent_lat" "$ddsperf_lat")"
if [ -n "$fastdds_why" ]; then
  printf 'fastdds: not measured: %s\n' "$fastdds_why"
else
  printf 'fastdds throughput 1->1 reliable 100 B:  fastdds %s samples/s  ratio fastdds/ddsperf %s  fastdds/native %s\n' \
    "$fastdds_tp" "$(ratio "$fastdds_tp" "$ddsperf_tp")" "$(ratio "$fastdds_tp" "$agent_tp")"
  printf 'fastdds latency one-way median 100 B:    fastdds %s us  ratio fastdds/ddsperf %s  fastdds/native %s\n' \
    "$fastdds_lat" "$(ratio "$fastdds_lat" "$ddsperf_lat")" "$(ratio "$fastdds_lat" "$agent_lat")"
fi
