# shellcheck shell=bash
# shellcheck disable=SC2154,SC2034  # $work and $secs come from the caller, which reads $result
# Sourced by bench.sh (not run): one measurement of a
# Perftest-compatible agent (the native one or Fast DDS's: one command line, one output)
# between a publisher and a subscriber, each in its own network namespace.
# The caller defines $work (a scratch directory), $secs (seconds per measurement) and the
# array pids (processes started by bg, for its cleanup). A result is left in $result, not
# printed into a $(...) subshell: the processes bg starts must be in the caller's pids.

# bg NAMESPACE OUTFILE COMMAND...: start COMMAND in NAMESPACE, record its pid.
bg() { local ns=$1 out=$2; shift 2; ip netns exec "$ns" "$@" >"$out" 2>"$out.err" & pids+=($!); }

# agent_throughput BINARY PREFIX PUB_NS PUB_ADDR SUB_NS SUB_ADDR: the subscriber's Avg Samples/s.
agent_throughput() {
  bg "$5" "$work/$2sub" "$1" -sub -nic "$6" -dataLen 100 -noPrintConfig
  ip netns exec "$3" "$1" -pub -nic "$4" -dataLen 100 -executionTime "$secs" -noPrintConfig >/dev/null 2>"$work/$2pub.err"
  wait "${pids[-1]}"
  result=$(awk -F, '/^Sample Size \(Bytes\), Total Samples, Avg/ {getline; print $3+0}' "$work/$2sub")
}

# agent_latency BINARY PREFIX PUB_NS PUB_ADDR SUB_NS SUB_ADDR: the publisher's median one-way
# latency (us). (-latencyTest is a publisher-only option in Perftest 4.x.)
agent_latency() {
  bg "$5" "$work/$2lsub" "$1" -sub -nic "$6" -dataLen 100 -noPrintConfig
  ip netns exec "$3" "$1" -pub -nic "$4" -dataLen 100 -latencyTest -executionTime "$secs" -noPrintIntervals -noPrintConfig >"$work/$2lpub" 2>"$work/$2lpub.err"
  wait "${pids[-1]}"
  result=$(awk -F, '/^Sample Size \(Bytes\), Ave/ {getline; print $6+0}' "$work/$2lpub")
}

# median: the median of the numbers on stdin, one per line (the lower of the middle two).
median() { sort -g | awk '{a[NR] = $1} END {if (NR) print a[int((NR + 1) / 2)]; else print 0}'; }

# ratio A B: A / B with two decimals, n/a when B is 0.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (b > 0) printf "%.2f", a / b; else print "n/a"}'; }
