"""latency.parquet is written from publisher 0's latency file as a stream (row groups of
``tables.LATENCY_BATCH`` samples), never as one list of every sample: the same table as
parsing the whole file, for any batch size, warm-up and file layout."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest

from experiments import tables
from experiments.perftest_output import PerftestParseError, parse_latency_file

# Perftest 4.1+ layout (two data lengths appended) and the older one value per line.
LAYOUTS = {
    "perftest-4.3": "Sample Number, Value\n" + "".join(f"{i}, {40 + i % 7}\n" for i in range(23))
                    + "\nSample Number, Value\n0, 52\n1, 50.5\n2, 51\n\n",
    "one-per-line": "".join(f"{10 + i / 4}\n" for i in range(19)) + "\n",
    "empty": "",
}


@pytest.mark.parametrize("batch", [1, 7, 1 << 20])
@pytest.mark.parametrize("warmup", [0, 3, 25, 1000])
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_streamed_table_is_the_parsed_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           batch: int, warmup: int, layout: str) -> None:
    monkeypatch.setattr(tables, "LATENCY_BATCH", batch)
    src = tmp_path / "pub0.latency.txt"
    src.write_text(LAYOUTS[layout])
    dest = tmp_path / "tables" / "latency.parquet"
    in_file, kept = tables.write_latency_table(src, dest, "r1", warmup)
    values = parse_latency_file(LAYOUTS[layout])
    assert (in_file, kept) == (len(values), len(values[warmup:]))
    t = pq.read_table(dest)
    assert t.schema == tables.LATENCY_SCHEMA
    assert t.to_pylist() == [{"run_id": "r1", "sample": i, "latency_us": v}
                             for i, v in enumerate(values[warmup:])]
    if batch == 7 and kept > 7:
        assert pq.ParquetFile(dest).num_row_groups == -(-kept // 7)
    assert [p.name for p in dest.parent.iterdir()] == ["latency.parquet"]  # no temporaries


def test_no_latency_file_gives_an_empty_table(tmp_path: Path) -> None:
    dest = tmp_path / "latency.parquet"
    assert tables.write_latency_table(tmp_path / "absent.txt", dest, "r1", 5) == (0, 0)
    assert pq.read_table(dest).num_rows == 0


def test_a_bad_line_leaves_no_table(tmp_path: Path) -> None:
    src = tmp_path / "pub0.latency.txt"
    src.write_text("Sample Number, Value\n0, 1\n1, x\n")
    dest = tmp_path / "latency.parquet"
    with pytest.raises(PerftestParseError, match="line 3"):
        tables.write_latency_table(src, dest, "r1", 0)
    assert list(tmp_path.iterdir()) == [src]
