"""The measurements taken on the lent TPU v5e (bench/tpu/v5e), checked without a chip: their schema,
that every native catalog case passed, the time model's error on the measured sweeps, and that the
docs page is what the records say (bench/tpu/tpu_records.py writes it)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench" / "tpu"))

import tpu_records as records  # noqa: E402

from sandbox.catalog.entries import load_catalog  # noqa: E402
from sandbox.results import measured  # noqa: E402

CASE_FIELDS = {"kind", "entry", "case", "status", "measured_device_seconds", "device", "jax", "libtpu"}


def test_every_case_of_every_single_device_v5e_entry_was_run_natively_and_passed():
    rows = records.read("cases.jsonl")
    cases = [r for r in rows if r["kind"] == "case"]
    assert cases and all(set(r) >= CASE_FIELDS for r in cases)
    assert {(r["device"], r["jax"], r["libtpu"]) for r in rows} == {("TPU v5 lite", "0.12.0.1", "0.0.50.1")}
    catalog = load_catalog()
    wanted = {
        (e.slug, c.name) for e in catalog.entries if e.devices == 1 and "v5e" in e.chips for c in e.cases
    }
    assert {(r["entry"], r["case"]) for r in cases} == wanted
    assert [r for r in cases if r["status"] != "passed"] == []
    timed = [r for r in cases if r["measured_device_seconds"]]
    assert len(timed) == len({r["entry"] for r in cases})  # each entry's TPU-size case, on the device
    assert all("TPU" in r["case"] and r["reference_device_seconds"] > 0 for r in timed)


def test_the_model_is_within_its_band_on_the_measured_sweep_and_ranks_the_best_right():
    path = records.HERE / "tune.jsonl"
    rows = measured.compare(path)  # the product's own reader of --record files
    assert len(rows) >= 30 and all(r["device"] == "TPU v5 lite" and r["commit"] for r, _ in rows)
    errors = [e for _, e in rows if e is not None]
    assert max(abs(e) for e in errors) < 0.15
    assert sum(abs(e) <= 0.10 for e in errors) / len(errors) >= 0.9
    sweep = [r for r, _ in rows if r["entry"] == "tiled_matmul_pallas_call"]
    by_model = min(sweep, key=lambda r: r["estimated_seconds"])
    by_chip = min(sweep, key=lambda r: r["measured_device_seconds"])
    assert by_model["params"] == by_chip["params"] == {"bm": 512, "bk": 1024, "bn": 1024}


def test_configs_the_compiler_refused_are_the_ones_its_sizes_put_over_the_limit():
    rows = [r for r in records.read("vmem.jsonl") if r.get("compiled") is not None]
    assert len(rows) >= 15
    for r in rows:
        if r["compiled"] is False:
            e = r["e1001"]
            assert e["size_m"] > e["limit_m"] == 16.0 and e["over_m"] == pytest.approx(
                e["size_m"] - 16.0, abs=0.02
            )


def test_the_docs_page_is_what_the_records_say():
    assert records.DOC.read_text() == records.document(), "run: python bench/tpu/tpu_records.py --write"
