#!/usr/bin/env bash
# Benchmark (not a test): the native agent (Cyclone DDS) and the Fast DDS agent against
# Cyclone's own ddsperf, in one invocation, on the same two network namespaces joined by a
# Linux bridge; every program with its defaults, as a user runs it.
#
#   sudo perftest-wrappers/bench.sh [SECONDS] [ROUNDS]   (10 s per measurement, 5 rounds)
#
# MCASTLAB_BENCH_AGENT=/path/to/perftest_cyclone measures another build of the native agent
# (e.g. an earlier revision's) in place of this tree's.
#
# Each round measures, one after the other:
# 1. throughput, 1 -> 1, reliable, 100 B: the agent (-pub/-sub) then `ddsperf pub size 100`/`sub`
# 2. latency, 100 B: the agent's -latencyTest then `ddsperf ping size 100`/`pong`
# so agent and ddsperf alternate ROUNDS times and a change of the machine's load hits both
# alike. Prints every round, then the medians and the median of the rounds' ratios
# agent/ddsperf: throughput (goal >= 1.0) and median one-way latency (goal <= 1.1). Then the
# Fast DDS agent, measured once after the rounds: its figures, fastdds/ddsperf and
# fastdds/native against the medians. All report one-way latency as RTT/2. Without a built
# Fast DDS agent its line says why (setup.sh's note). Run it on a quiet machine.
set -euo pipefail

secs=${1:-10}
rounds=${2:-5}
here=$(cd "$(dirname "$0")" && pwd)
agent="${MCASTLAB_BENCH_AGENT:-$here/bin/perftest_cyclone}"
fastdds="$here/bin/perftest_fastdds"
fastdds_note="$here/../build/fastdds-unsupported.txt"
[[ $secs =~ ^[1-9][0-9]*$ && $rounds =~ ^[1-9][0-9]*$ ]] || {
  echo "bench.sh: SECONDS and ROUNDS must be positive integers (got '$secs' '$rounds')" >&2; exit 2; }
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
echo "bench: $rounds rounds, $secs s per measurement; namespaces $nsa ($ipa) and $nsb ($ipb) on bridge $br" >&2

# ddsperf_throughput: ddsperf's keep-all reliable throughput with its defaults; the mean of
# the subscriber's per-second rates after the first second.
ddsperf_throughput() {
  bg "$nsb" "$work/dsub" env CYCLONEDDS_URI="$(uri "$ipb")" ddsperf -D "$((secs + 2))" sub
  sleep 1
  ip netns exec "$nsa" env CYCLONEDDS_URI="$(uri "$ipa")" ddsperf -D "$secs" pub size 100 >/dev/null 2>&1
  wait "${pids[-1]}" || true
  result=$(awk '/ size 100 .* rate / {for (i = 1; i <= NF; i++) if ($i == "rate") {r = $(i + 1); if (r > 0) {n++; if (n > 1) {s += r; k++}}}} END {if (k) printf "%.0f", s / k * 1000; else print 0}' "$work/dsub")
}

# ddsperf_latency: ping/pong (ping prints one-way = RTT/2 statistics once a second); the
# median of the per-second medians (us).
ddsperf_latency() {
  bg "$nsb" "$work/dpong" env CYCLONEDDS_URI="$(uri "$ipb")" ddsperf -D "$((secs + 2))" pong
  sleep 1
  ip netns exec "$nsa" env CYCLONEDDS_URI="$(uri "$ipa")" ddsperf -D "$secs" ping size 100 >"$work/dping" 2>&1
  wait "${pids[-1]}" || true
  result=$(awk '/ size 100 mean / {for (i = 1; i <= NF; i++) if ($i == "50%") {v = $(i + 1); sub("us", "", v); print v}}' "$work/dping" \
    | median)
}

tp_a=(); tp_d=(); tp_r=(); lat_a=(); lat_d=(); lat_r=()
for ((k = 1; k <= rounds; k++)); do
  agent_throughput "$agent" a "$nsa" "$ipa" "$nsb" "$ipb"; tp_a+=("$result")
  ddsperf_throughput; tp_d+=("$result")
  agent_latency "$agent" a "$nsa" "$ipa" "$nsb" "$ipb"; lat_a+=("$result")
  ddsperf_latency; lat_d+=("$result")
  tp_r+=("$(ratio "${tp_a[-1]}" "${tp_d[-1]}")"); lat_r+=("$(ratio "${lat_a[-1]}" "${lat_d[-1]}")")
  printf 'round %d/%d: throughput agent %s ddsperf %s samples/s (%s); latency agent %s ddsperf %s us (%s)\n' \
    "$k" "$rounds" "${tp_a[-1]}" "${tp_d[-1]}" "${tp_r[-1]}" "${lat_a[-1]}" "${lat_d[-1]}" "${lat_r[-1]}"
done
agent_tp=$(printf '%s\n' "${tp_a[@]}" | median); ddsperf_tp=$(printf '%s\n' "${tp_d[@]}" | median)
agent_lat=$(printf '%s\n' "${lat_a[@]}" | median); ddsperf_lat=$(printf '%s\n' "${lat_d[@]}" | median)

# Fast DDS agent, once (same command lines as the native agent)
fastdds_tp=0; fastdds_lat=0
if [ -z "$fastdds_why" ]; then
  agent_throughput "$fastdds" f "$nsa" "$ipa" "$nsb" "$ipb"; fastdds_tp=$result
  agent_latency "$fastdds" f "$nsa" "$ipa" "$nsb" "$ipb"; fastdds_lat=$result
fi

printf 'throughput 1->1 reliable 100 B, median of %d alternating rounds:  agent %s samples/s  ddsperf %s samples/s  median ratio agent/ddsperf %s (goal >= 1.0)\n' \
  "$rounds" "$agent_tp" "$ddsperf_tp" "$(printf '%s\n' "${tp_r[@]}" | median)"
printf 'latency one-way median 100 B, median of %d alternating rounds:    agent %s us  ddsperf %s us  median ratio agent/ddsperf %s (goal <= 1.1)\n' \
  "$rounds" "$agent_lat" "$ddsperf_lat" "$(printf '%s\n' "${lat_r[@]}" | median)"
if [ -n "$fastdds_why" ]; then
  printf 'fastdds: not measured: %s\n' "$fastdds_why"
else
  printf 'fastdds throughput 1->1 reliable 100 B, once:  fastdds %s samples/s  ratio fastdds/ddsperf %s  fastdds/native %s (medians)\n' \
    "$fastdds_tp" "$(ratio "$fastdds_tp" "$ddsperf_tp")" "$(ratio "$fastdds_tp" "$agent_tp")"
  printf 'fastdds latency one-way median 100 B, once:    fastdds %s us  ratio fastdds/ddsperf %s  fastdds/native %s (medians)\n' \
    "$fastdds_lat" "$(ratio "$fastdds_lat" "$ddsperf_lat")" "$(ratio "$fastdds_lat" "$agent_lat")"
fi
