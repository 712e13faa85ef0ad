"""The Perftest options a scenario may add to every agent (``[agent] extra_args``).

``extra_args`` are appended to the command line of *every* process of a run, publishers
and subscribers alike, so only options valid for both roles are accepted; options the
runner sets itself (roles, ids, counts, addresses, files) are refused, since a second
value would silently override the scenario. Keep this table in sync with the native
agent's parser (perftest-wrappers/native/options.c).

Example::

    >>> check_extra_args(["-bestEffort"]) is None
    True
    >>> check_extra_args(["-latencyFile", "/etc/passwd"]).split(";")[0]
    'option -latencyFile is a publisher-only option, set by the runner (inside the run directory)'
"""

from __future__ import annotations

# option -> (takes a value, why it is refused in extra_args; None: allowed)
RUNNER = "set by the runner"
OPTIONS: dict[str, tuple[bool, str | None]] = {
    # both roles, not set by the runner: allowed
    "-bestEffort": (False, None), "-keyed": (False, None), "-instances": (True, None),
    "-cpu": (False, None), "-noPrintIntervals": (False, None),
    "-sendQueueSize": (True, None),
    "-discoveryTimeout": (True, None), "-finishTimeout": (True, None),
    "-leaseDuration": (True, None), "-spdpInterval": (True, None),
    "-noPrintConfig": (False, None),
    # one role only in Perftest (ParameterManager): extra_args reach both roles
    "-batchSize": (True, "a publisher-only option (extra_args reach subscribers too)"),
    # set per process by the runner
    "-pub": (False, RUNNER), "-sub": (False, RUNNER),
    "-pidMultiPubTest": (True, f"a publisher-only option, {RUNNER}"),
    "-sidMultiSubTest": (True, f"a subscriber-only option, {RUNNER}"),
    "-numPublishers": (True, f"a subscriber-only option, {RUNNER}"),
    "-numSubscribers": (True, f"a publisher-only option, {RUNNER}"),
    "-dataLen": (True, f"{RUNNER} (matrix.data_len)"),
    "-domain": (True, f"{RUNNER} (agent.domain)"),
    "-nic": (True, f"{RUNNER} (each host's address)"),
    "-allowInterfaces": (True, f"{RUNNER} (each host's address)"),
    "-outputFormat": (True, f"{RUNNER} (csv, parsed into the tables)"),
    "-multicast": (False, f"{RUNNER} (matrix.modes)"),
    "-multicastAddr": (True, f"{RUNNER} (Perftest's default groups)"),
    "-peer": (True, f"{RUNNER} (matrix.discovery)"),
    "-latencyTest": (False, f"a publisher-only option, {RUNNER} (matrix.tests)"),
    "-latencyCount": (True, f"a publisher-only option, {RUNNER} (matrix.latency_count)"),
    "-executionTime": (True, f"a publisher-only option, {RUNNER} (matrix.execution_time)"),
    "-numIter": (True, f"a publisher-only option, {RUNNER} (matrix.num_iter)"),
    "-pubRate": (True, f"a publisher-only option, {RUNNER} (matrix.pub_rate)"),
    "-latencyFile": (True, f"a publisher-only option, {RUNNER} (inside the run directory)"),
    "-maxParticipantIndex": (True, f"{RUNNER} (from the placement)"),
}


def check_extra_args(args: list[str]) -> str | None:
    """Why ``args`` cannot be appended to every agent's command line, or None if they can."""
    allowed = ", ".join(sorted((o for o, (_, why) in OPTIONS.items() if why is None),
                               key=str.lower))
    by_lower = {o.lower(): o for o in OPTIONS}
    i = 0
    while i < len(args):
        a = args[i]
        name = by_lower.get(a.lower())
        if name is None:
            return (f"unknown option {a!r} (options are case-insensitive Perftest names); "
                    f"allowed in extra_args: {allowed}")
        takes_value, why = OPTIONS[name]
        if why is not None:
            return f"option {name} is {why}; allowed in extra_args: {allowed}"
        if takes_value:
            if i + 1 >= len(args):
                return f"option {name} needs a value"
            value = args[i + 1]
            if any(c in value for c in "<>&\"'\n") or value.startswith("-"):
                return f"option {name}: bad value {value!r}"
            i += 1
        i += 1
    return None
