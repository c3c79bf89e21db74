"""Epoch AI ML hardware CSV: both export layouts, spot-checked values, odd cells, bad rows, wrong files."""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime

import pytest

from chipwatch.datasets.epoch_hardware import parse_ml_hardware
from chipwatch.datasets.records import DatasetFormatError, fact_fields
from tests.fixtures.corpus import requires_corpus

pytestmark = requires_corpus

NEW = "epoch-ai/ml_hardware__joshyou-clod.csv"
OLD = "epoch-ai/ml_hardware__sr3k-data.csv"


def _rows(data: bytes) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(data.decode("utf-8"), newline="")))


def _write(rows: list[list[str]]) -> bytes:
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    return out.getvalue().encode()


@pytest.mark.parametrize("name", [NEW, OLD])
def test_every_row_of_both_exports_is_a_chip(corpus_bytes, name):
    result = parse_ml_hardware(corpus_bytes(name))
    assert result.kind == "epoch-ml-hardware"
    assert result.rows_read == 170
    assert len(result.records) == 170
    assert result.errors == () and result.warnings == () and result.duplicates == ()
    assert len(result.by_key()) == 170


@pytest.mark.parametrize(
    "name,memory_header", [(NEW, "Memory (bytes)"), (OLD, "Memory size per board (Byte)")]
)
def test_figures_match_the_csv_cells_whatever_the_column_order(corpus_bytes, name, memory_header):
    data = corpus_bytes(name)
    by_name = parse_ml_hardware(data).by_key()
    for row in _rows(data):
        chip = by_name[row["Hardware name"]]
        assert chip["tdp_w"] == (float(row["TDP (W)"]) if row["TDP (W)"] else None)
        assert chip["memory_bytes"] == (float(row[memory_header]) if row[memory_header] else None)
        fp8 = row["FP8 performance (FLOP/s)"]
        assert chip["flop_s"].get("fp8") == (float(fp8) if fp8 else None)


def test_spot_checks_in_the_newer_export(corpus_bytes):
    chips = parse_ml_hardware(corpus_bytes(NEW)).by_key()
    b200 = chips["NVIDIA B200"]
    assert b200["manufacturer"] == "NVIDIA" and b200["chip_type"] == "GPU"
    assert b200["tdp_w"] == 1000.0
    assert b200["flop_s"]["fp8"] == 4.5e15 and b200["flop_s"]["fp4"] == 9e15
    assert b200["flop_s"]["tensor_fp16_bf16"] == 2.25e15
    assert b200["op_s"]["int8"] == 4.5e15
    assert b200["memory_bytes"] == 180e9 and b200["memory_bandwidth_bytes_s"] == 7.7e12
    assert b200["release_date"] == {"value": "2024-11-15", "precision": "day"}
    mi300x = chips["AMD Instinct MI300X"]
    assert mi300x["release_price_usd"] == 15000.0 and mi300x["tdp_w"] == 750.0
    assert mi300x["die_size_mm2"] == 1017.0 and mi300x["process_nm"] == 5.0 and mi300x["foundry"] == "TSMC"
    assert datetime.fromisoformat(mi300x["last_modified"]) == datetime(2025, 11, 8, 1, 45, 30, tzinfo=UTC)


def test_scientific_notation_and_blanks(corpus_bytes):
    chips = parse_ml_hardware(corpus_bytes(NEW)).by_key()
    gb300 = chips["NVIDIA GB300 (Blackwell Ultra)"]
    assert gb300["flop_s"]["fp4"] == 1.5e16 and gb300["op_s"]["int4"] == 1.5e16 and gb300["tdp_w"] == 1400.0
    assert chips["AMD Instinct MI355X"]["op_s"]["int4"] == 1.00663e16
    rubin_cpx = chips["NVIDIA Rubin CPX"]
    assert rubin_cpx["flop_s"] == {"fp4": 3e16}
    assert rubin_cpx["tdp_w"] is None and rubin_cpx["release_date"] is None
    trainium3 = chips["Amazon Trainium3"]
    assert trainium3["memory_bytes"] is None and trainium3["release_price_usd"] is None


def test_multi_line_quoted_notes_and_links(corpus_bytes):
    tpu = parse_ml_hardware(corpus_bytes(NEW)).by_key()["Google TPU v7 Ironwood"]
    assert tpu["notes"].count("\n") >= 4
    assert tpu["notes"].endswith("We round to 960 W.")
    assert tpu["datasheet_links"] == [
        "https://blog.google/products/google-cloud/ironwood-tpu-age-of-inference/",
        "https://docs.cloud.google.com/tpu/docs/tpu7x",
    ]
    # The quoted cell spans lines, so the row number and the line number part ways.
    assert (tpu["row"], tpu["line"]) == (2, 4)


def test_the_two_exports_differ_in_tpu_v7_tdp(corpus_bytes):
    old = parse_ml_hardware(corpus_bytes(OLD)).by_key()
    new = parse_ml_hardware(corpus_bytes(NEW)).by_key()
    assert old["Google TPU v7 Ironwood"]["tdp_w"] == 980.0
    assert new["Google TPU v7 Ironwood"]["tdp_w"] == 960.0
    assert set(old) == set(new)
    changed_tdp = {name for name in new if new[name]["tdp_w"] != old[name]["tdp_w"]}
    assert "Google TPU v7 Ironwood" in changed_tdp
    assert "NVIDIA B200" not in changed_tdp
    # Same stated content, whatever the column order: B200 is unchanged between the exports.
    b200_old, b200_new = fact_fields(old["NVIDIA B200"]), fact_fields(new["NVIDIA B200"])
    assert {k: v for k, v in b200_old.items() if k != "last_modified"} == {
        k: v for k, v in b200_new.items() if k != "last_modified"
    }


def test_reordered_columns_give_the_same_records(corpus_bytes):
    data = corpus_bytes(NEW)
    rows = list(csv.reader(io.StringIO(data.decode(), newline="")))
    reversed_rows = [list(reversed(row)) for row in rows]
    original = parse_ml_hardware(data)
    shuffled = parse_ml_hardware(_write(reversed_rows))
    assert [fact_fields(r) for r in shuffled.records] == [fact_fields(r) for r in original.records]


def test_unreadable_cells_are_unknown_with_a_warning(corpus_bytes):
    rows = list(csv.reader(io.StringIO(corpus_bytes(NEW).decode(), newline="")))
    tdp, release = rows[0].index("TDP (W)"), rows[0].index("Release date")
    rows[1][tdp] = "inf"
    rows[3][tdp] = "about 700"
    rows[4][tdp] = "N/A"
    rows[5][release] = "0202-07-30"
    result = parse_ml_hardware(_write(rows))
    assert len(result.records) == 170 and result.errors == ()
    by_row = {record["row"]: record for record in result.records}
    assert by_row[1]["tdp_w"] is None and by_row[3]["tdp_w"] is None and by_row[4]["tdp_w"] is None
    assert by_row[5]["release_date"] is None
    assert [(w.row, w.reason.split(":")[0]) for w in result.warnings] == [
        (1, "TDP (W)"),
        (3, "TDP (W)"),
        (5, "Release date"),
    ]
    assert "not a finite number" in result.warnings[0].reason


def test_bad_rows_are_reported_with_their_number_and_the_rest_kept(corpus_bytes):
    rows = list(csv.reader(io.StringIO(corpus_bytes(NEW).decode(), newline="")))
    rows[3][0] = "  "
    rows[6] = rows[6][:-3]
    result = parse_ml_hardware(_write(rows))
    assert [(e.row, e.reason) for e in result.errors] == [
        (3, "no Hardware name"),
        (6, "36 cells under a header of 39"),
    ]
    assert len(result.records) == 168 and result.rows_read == 170


def test_duplicate_rows_are_one_chip_and_conflicting_ones_an_error(corpus_bytes):
    rows = list(csv.reader(io.StringIO(corpus_bytes(NEW).decode(), newline="")))
    tdp = rows[0].index("TDP (W)")
    conflicting = list(rows[2])
    conflicting[tdp] = "1.0"
    result = parse_ml_hardware(_write([*rows, rows[2], conflicting]))
    assert len(result.records) == 170
    assert [(d.row, d.key, d.first_row) for d in result.duplicates] == [(171, rows[2][0], 2)]
    assert [(e.row, e.reason) for e in result.errors] == [
        (172, f"key {rows[2][0]!r} repeats row 2 with other values"),
    ]
    assert result.by_key()[rows[2][0]]["tdp_w"] == float(rows[2][tdp])


def test_a_file_of_another_kind_is_refused_naming_the_missing_columns(corpus_bytes):
    with pytest.raises(DatasetFormatError) as caught:
        parse_ml_hardware(corpus_bytes("epoch-ai/gpu_clusters.csv"))
    assert caught.value.missing == ("Hardware name", "Manufacturer", "Release date", "TDP (W)")
    assert "'Hardware name'" in str(caught.value)
    with pytest.raises(DatasetFormatError, match="not UTF-8"):
        parse_ml_hardware(b"\xff\xfe\x00junk")
    with pytest.raises(DatasetFormatError, match="no header"):
        parse_ml_hardware(b"")


def test_parsing_is_deterministic(corpus_bytes):
    data = corpus_bytes(OLD)
    assert parse_ml_hardware(data) == parse_ml_hardware(data.decode("utf-8"))


def test_byte_order_mark_blank_lines_and_a_header_alone(corpus_bytes):
    data = corpus_bytes(NEW)
    header, _, rest = data.partition(b"\n")
    with_bom = b"\xef\xbb\xbf" + header + b"\n\n" + rest + b"\n\n"
    assert [r["row_key"] for r in parse_ml_hardware(with_bom).records] == [
        r["row_key"] for r in parse_ml_hardware(data).records
    ]
    alone = parse_ml_hardware(header + b"\n")
    assert alone.records == () and alone.errors == () and alone.rows_read == 0
