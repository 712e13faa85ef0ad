"""Run ids name one run each, and the run count is known before anything is expanded.

Variant and placement names may contain "-", the separator of run ids: variants ``a`` and
``a-b`` with placements ``b-c`` and ``c`` once gave 3 runs for a 4-cell matrix, the cell
(``a-b``, ``c``) silently dropped because its id was (``a``, ``b-c``)'s. The expander now
raises on any duplicate id, naming both cells, and :func:`experiments.matrix.run_count`
(which the scenario check bounds before expanding) must equal the expansion's length for
every design.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import topologies
from experiments import matrix
from experiments.scenario import AGENT_KINDS, ScenarioError, from_dict, validate


def _hosts(specs: dict[str, Any]) -> dict[str, list[str]]:
    return {v: list(topologies.host_names(s)) for v, s in specs.items()}


def _scenario(**matrix_keys: Any) -> dict[str, Any]:
    return {"campaign": {"name": "ids"}, "topology": {"name": "lan", "params": {"hosts": 4}},
            "agent": {"kind": "native"},
            "matrix": {"participants": [1], "modes": ["unicast"], **matrix_keys}}


def test_names_that_collide_are_refused_naming_both_cells(tmp_path: Any) -> None:
    raw = _scenario(placements=["b-c", "c"])
    raw["topology"]["variants"] = {"a": {}, "a-b": {}}
    raw["placements"] = {"b-c": {"hosts": ["h1"]}, "c": {"hosts": ["h2"]}}
    sc = from_dict(raw)
    assert matrix.run_count(sc) == 4
    with pytest.raises(ScenarioError) as err:
        matrix.expand(sc, {"a": ["h1", "h2"], "a-b": ["h1", "h2"]}, "s.toml")
    assert err.value.key == "topology.variants"
    msg = str(err.value)
    assert "'lan-rel-100B-a-b-c-1x1-unicast-r1'" in msg
    assert "(topology variant 'a', placement 'b-c')" in msg
    assert "(topology variant 'a-b', placement 'c')" in msg


def test_names_that_do_not_collide_give_every_cell_its_run() -> None:
    raw = _scenario(placements=["b_c", "c"])
    raw["topology"]["variants"] = {"a": {}, "a_b": {}}
    raw["placements"] = {"b_c": {"hosts": ["h1"]}, "c": {"hosts": ["h2"]}}
    sc = from_dict(raw)
    runs = matrix.expand(sc, {"a": ["h1", "h2"], "a_b": ["h1", "h2"]})
    assert {(r["topology_variant"], r["placement_variant"]) for r in runs} == {
        ("a", "b_c"), ("a", "c"), ("a_b", "b_c"), ("a_b", "c")}
    assert len({r["run_id"] for r in runs}) == 4


def test_the_expander_raises_on_a_duplicate_instead_of_skipping_it() -> None:
    """A matrix that slipped past the scenario check with a value twice (here built
    without it) is not quietly shortened."""
    sc = from_dict(_scenario(participants=[1, 3]))
    twice = sc.model_copy(update={"matrix": sc.matrix.model_copy(
        update={"participants": [1, 3, 1]})})
    with pytest.raises(ScenarioError, match=r"'lan-rel-100B-1x1-unicast-r1': \(the same cell\)"):
        matrix.expand(twice, {"": ["h1", "h2", "h3", "h4"]})


def test_the_baseline_gets_its_own_repetitions_in_a_one_at_a_time_design() -> None:
    """baseline_repetitions gives the baseline (every axis at its first value) more runs;
    each switched combination keeps ``repetitions``, per count as well."""
    sc = from_dict(_scenario(participants=[1, 3], design="one-at-a-time", repetitions=2,
                             reliability=["reliable", "best-effort"],
                             fanout=["kernel", "joined-only"], baseline_repetitions=5,
                             baseline_repetitions_by_count={"3": 4}))
    runs = matrix.expand(sc, {"": ["h1", "h2", "h3", "h4"]})
    reps: dict[tuple[str, str, str], list[int]] = {}
    for r in runs:
        reps.setdefault(("rel" if r["reliable"] else "be", r.get("fanout", "kernel"),
                         f"{r['publishers']}x{r['subscribers']}"), []).append(r["repetition"])
    assert reps == {("rel", "kernel", "1x1"): [1, 2, 3, 4, 5],
                    ("rel", "kernel", "3x3"): [1, 2, 3, 4],
                    ("rel", "joined-only", "1x1"): [1, 2], ("rel", "joined-only", "3x3"): [1, 2],
                    ("be", "kernel", "1x1"): [1, 2], ("be", "kernel", "3x3"): [1, 2]}
    assert matrix.run_count(sc) == len(runs) == 5 + 4 + 4 * 2


def test_normalised_axes_are_not_duplicates() -> None:
    """The latency test ignores latency_count and pub_rate, multicast data ignores the
    discovery axis: those cells are one run each, not duplicates."""
    sc = from_dict(_scenario(tests=["throughput", "latency"], latency_count=[10, 100],
                             pub_rate=[0, 5], modes=["unicast", "multicast"],
                             discovery=["spdp-multicast", "unicast-peers"]))
    runs = matrix.expand(sc, {"": ["h1", "h2", "h3", "h4"]})
    # throughput: 2 lc x 2 rates x (2 unicast + 1 multicast); latency: 1 x 3
    assert len(runs) == 4 * 3 + 3 == matrix.run_count(sc)
    assert len({r["run_id"] for r in runs}) == len(runs)


def _axis(values: list[Any]) -> st.SearchStrategy[list[Any]]:
    return st.lists(st.sampled_from(values), min_size=1, max_size=len(values), unique=True)


@st.composite
def scenarios(draw: st.DrawFn) -> dict[str, Any]:
    raw = _scenario(
        participants=draw(_axis([1, 2, 3])),
        modes=draw(_axis(["unicast", "multicast"])),
        discovery=draw(_axis(["spdp-multicast", "unicast-peers"])),
        reliability=draw(_axis(["reliable", "best-effort"])),
        data_len=draw(_axis([100, 1024])),
        latency_count=draw(_axis([10, 1000])),
        pub_rate=draw(_axis([0, 50])),
        agents=draw(_axis([k for k in AGENT_KINDS if k != "rti"])),
        fanout=draw(_axis(["kernel", "joined-only"])),
        same_host=draw(_axis(["udp", "shm"])),
        design=draw(st.sampled_from(["factorial", "one-at-a-time"])),
        repetitions=draw(st.integers(1, 3)),
    )
    del raw["agent"]
    if draw(st.booleans()):
        raw["matrix"]["tests"] = ["throughput", "latency"]
        raw["matrix"]["participants"] = [1]
    variants = draw(_axis(["v1", "v2", "v3"]))
    if len(variants) > 1:
        raw["topology"]["variants"] = {v: {"snooping": i % 2 == 0}
                                       for i, v in enumerate(variants)}
    places = draw(_axis(["p1", "p2"]))
    if len(places) > 1 or draw(st.booleans()):
        raw["placements"] = {p: {"hosts": [f"h{i + 1}", "h4"]} for i, p in enumerate(places)}
    if draw(st.booleans()):
        raw["matrix"]["repetitions_by_count"] = {str(raw["matrix"]["participants"][0]): 2}
    if raw["matrix"]["design"] == "one-at-a-time" and draw(st.booleans()):
        raw["matrix"]["baseline_repetitions"] = draw(st.integers(1, 4))
    return raw


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(raw=scenarios())
def test_run_count_is_the_expansions_length(raw: dict[str, Any]) -> None:
    try:
        sc = from_dict(raw)
    except ScenarioError:
        return  # e.g. "shm" with only agents that have no shared memory
    hosts = {v: ["h1", "h2", "h3", "h4"] for v in sc.topology.resolved()}
    runs = matrix.expand(sc, hosts)
    assert matrix.run_count(sc) == len(runs)
    assert len({r["run_id"] for r in runs}) == len(runs)


@pytest.mark.parametrize("quick", [False, True])
def test_run_count_of_the_shipped_scenarios(quick: bool) -> None:
    from pathlib import Path

    for path in sorted(Path("experiments").glob("*.toml")):
        if quick and "[quick]" not in path.read_text():
            continue
        sc, specs = validate(path, check_machine=False, quick=quick)
        assert matrix.run_count(sc) == len(matrix.expand(sc, _hosts(specs))), path
