"""Log axes a person can read: major ticks only, labelled in µs, ms or s for times and as
12k, 3.5M otherwise, and no two tick labels overlapping, over the spans the report's
figures meet (a few percent to seven decades). The summary figure of make run's report
used to label every minor tick of its log latency axes ("200000 100000 90000 ...")."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from analysis import figures

SPANS = [(900.0, 1300.0), (80.0, 2.2e4), (80.0, 2.0e6), (5.0, 5.0e7), (0.02, 3.0)]


def _labels(fig, axis) -> list:
    fig.canvas.draw()
    lo, hi = sorted(axis.get_view_interval())
    return [t.label1 for t in axis.get_major_ticks() + axis.get_minor_ticks()
            if t.label1.get_visible() and t.label1.get_text() and lo <= t.get_loc() <= hi]


@pytest.mark.parametrize(("lo", "hi"), SPANS)
@pytest.mark.parametrize("times", [True, False])
def test_log_axis_labels_are_few_readable_and_apart(lo: float, hi: float, times: bool) -> None:
    plt = figures._plt()
    fig, ax = plt.subplots(figsize=(3.6, 3.3))  # one panel of the summary figure
    try:
        ax.plot([1, 2, 3], np.geomspace(lo, hi, 3), marker="o")
        ax.set_yscale("log")
        figures.log_axis(ax, "y", times=times)
        labels = _labels(fig, ax.yaxis)
        texts = [lab.get_text() for lab in labels]
        assert len(labels) >= 2 or hi / lo < 2, texts
        boxes = [lab.get_window_extent() for lab in labels]
        for (a, ta), (b, tb) in itertools.combinations(zip(boxes, texts, strict=True), 2):
            assert not a.overlaps(b), (ta, tb, texts)
        if times:
            assert all(t.endswith((" µs", " ms", " s")) for t in texts), texts
        else:
            assert all(" " not in t for t in texts), texts
    finally:
        plt.close(fig)


def test_time_labels_pick_the_unit_by_size() -> None:
    assert [figures.time_label(v) for v in (0.5, 999, 1000, 2.5e4, 1e6, 3e7)] == [
        "0.5 µs", "999 µs", "1 ms", "25 ms", "1 s", "30 s"]
