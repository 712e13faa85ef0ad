#!/usr/bin/env bash
# Benchmark (issue 16, acceptance 3 groundwork; not a test): what a VXLAN tunnel between two
# servers costs a 1 -> 1 agent run, against the same run within one server, in one
# invocation. Both "servers" are network namespaces of this machine, joined by a veth pair
# as the underlay, so this measures the encapsulation (VXLAN over UDP, MTU 1450 inside)
# and one more bridge hop, not a physical network between machines.
#
#   sudo perftest-wrappers/bench_tunnel.sh [SECONDS]      (default 10 s per measurement)
#
#   server A (netns)                                  server B (netns)
#   +--------------------------------+   underlay    +---------------------------+
#   | bridge ---- vxlan (VNI 42) ---- veth ======== veth ---- vxlan ---- bridge |
#   |  |    \                        |  10.x.y.1/.2  |                    |      |
#   +--|-----\-----------------------+               +--------------------|------+
#     pub     sub "within"                                             sub "across"
#   (netns)  (netns)                                                   (netns)
#
# The native agent (Cyclone DDS), reliable, 100 B, as perftest-wrappers/bench.sh:
# throughput (subscriber's Avg Samples/s) and median one-way latency (-latencyTest), each
# within A and across the tunnel; prints across/within ratios. Run it on a quiet machine.
# Everything it makes is named with a random tag and removed on exit; it never touches
# anything else.
set -euo pipefail

secs=${1:-10}
here=$(cd "$(dirname "$0")" && pwd)
agent="$here/bin/perftest_cyclone"
[ "$(id -u)" = 0 ] || { echo "bench_tunnel.sh: must run as root (it creates network namespaces)" >&2; exit 1; }
[ -x "$agent" ] || { echo "bench_tunnel.sh: $agent is missing: run ./setup.sh" >&2; exit 1; }

tag=$(od -An -N3 -tx1 /dev/urandom | tr -d ' \n')
srv_a="tb${tag}A"; srv_b="tb${tag}B"
pub="tb${tag}p"; sub_in="tb${tag}i"; sub_out="tb${tag}o"
net="10.$((250 + 0x${tag:0:2} % 5)).$((0x${tag:2:2}))"     # the hosts' LAN, /24
under="10.$((245 + 0x${tag:0:2} % 5)).$((0x${tag:4:2}))"   # the underlay, /30
work=$(mktemp -d)
namespaces=()
pids=()
# shellcheck source=perftest-wrappers/bench_lib.sh
source "$here/bench_lib.sh"

cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  for ns in "${namespaces[@]}"; do ip netns del "$ns" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

mkns() { ip netns add "$1"; namespaces+=("$1"); ip -n "$1" link set lo up; }

# The two servers, their underlay, a bridge each and the VXLAN pair as a bridge port.
# The VXLAN device lives in its server's namespace, its UDP socket on the underlay address.
mkns "$srv_a"; mkns "$srv_b"
ip link add ua netns "$srv_a" type veth peer name ub netns "$srv_b"
ip -n "$srv_a" addr add "$under.1/30" dev ua; ip -n "$srv_a" link set ua up
ip -n "$srv_b" addr add "$under.2/30" dev ub; ip -n "$srv_b" link set ub up
for pair in "$srv_a:ua:$under.1:$under.2" "$srv_b:ub:$under.2:$under.1"; do
  IFS=: read -r srv dev local remote <<<"$pair"
  ip -n "$srv" link add br0 type bridge
  ip -n "$srv" link set br0 type bridge mcast_snooping 0
  ip -n "$srv" link add vx0 type vxlan id 42 local "$local" remote "$remote" dev "$dev" dstport 4789
  ip -n "$srv" link set vx0 mtu 1450 master br0 up
  ip -n "$srv" link set br0 up
done

# Hosts: the publisher and one subscriber on server A, the other subscriber on server B.
# Every host interface gets the tunnel's MTU (1450) so both paths carry the same datagrams.
addhost() {  # name server address
  mkns "$1"
  ip link add eth0 netns "$1" type veth peer name "p$1" netns "$2"
  ip -n "$2" link set "p$1" mtu 1450 master br0 up
  ip -n "$1" link set eth0 mtu 1450
  ip -n "$1" addr add "$3/24" dev eth0
  ip -n "$1" link set eth0 up
  ip -n "$1" route add 224.0.0.0/4 dev eth0
}
addhost "$pub" "$srv_a" "$net.1"
addhost "$sub_in" "$srv_a" "$net.2"
addhost "$sub_out" "$srv_b" "$net.3"

echo "bench_tunnel: $secs s per measurement; publisher $net.1, subscriber within $net.2, across $net.3 (VXLAN over $under.0/30)" >&2

agent_throughput "$agent" in "$pub" "$net.1" "$sub_in" "$net.2"; tp_in=$result
agent_throughput "$agent" out "$pub" "$net.1" "$sub_out" "$net.3"; tp_out=$result
agent_latency "$agent" in "$pub" "$net.1" "$sub_in" "$net.2"; lat_in=$result
agent_latency "$agent" out "$pub" "$net.1" "$sub_out" "$net.3"; lat_out=$result
vx_packets=$(ip -n "$srv_a" -s -j link show vx0 | python3 -c 'import json,sys; s=json.load(sys.stdin)[0]["stats64"]; print(s["tx"]["packets"], s["rx"]["packets"])')

printf 'throughput 1->1 reliable 100 B:  within %s samples/s  across %s samples/s  ratio across/within %s\n' \
  "$tp_in" "$tp_out" "$(ratio "$tp_out" "$tp_in")"
printf 'latency one-way median 100 B:    within %s us  across %s us  ratio across/within %s\n' \
  "$lat_in" "$lat_out" "$(ratio "$lat_out" "$lat_in")"
printf 'vxlan packets on server A (tx rx): %s\n' "$vx_packets"
