"""The v5e compiler's VMEM verdicts against libtpu's offline compile of the same configs (bench/tpu/v5e).

`bench/tpu/offline_compile.py` compiled every config of the chip's VMEM records again on a CPU with no
TPU, for a `v5e:1x1` topology (libtpu 0.0.50.1, JAX 0.12.0.1, the chip's own stack), and wrote
`vmem-offline.jsonl`. Read here as JSON (no libtpu needed): it must cover every record line, and its
verdicts must be the chip's, config by config, with the same E1001 sizes where both refused.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench" / "tpu"))

import vmem_records  # noqa: E402

# What the run of 2026-12-06 found: the offline verdict is the chip's on all 144 configs the chip
# answered, 70 of them refused with E1001 sizes equal to the chip's to the printed digit.
ANSWERED, AGREE, REFUSED = 144, 144, 70
# Configs whose offline verdict is not the chip's, each with its cause: none found.
KNOWN_DISAGREEMENTS: dict[tuple, str] = {}


def _offline() -> list[dict]:
    path = vmem_records.HERE / "vmem-offline.jsonl"
    return [json.loads(text) for text in path.read_text().splitlines() if text.strip()]


def _key(row: dict) -> tuple:
    return (row["record"], row["kernel"], tuple(row["shape"]), row["dtype"], json.dumps(row["params"]))


def test_every_chip_record_has_its_offline_compile_with_the_chips_verdict_beside_it():
    chip = vmem_records.rows()
    offline = _offline()
    assert [_key(r) for r in offline] == [_key(r) for r in chip]
    for row, line in zip(chip, offline, strict=True):
        assert line["chip"] == {"compiled": row["compiled"], "e1001": row["e1001"]}, _key(row)
        assert line["counted_mib"] == row["counted_mib"]
        if row["compiled"] is not None:  # the chip's skipped configs were still compiled offline
            assert line["offline"]["compiled"] in (True, False)


def test_the_offline_compile_agrees_with_the_chip_as_many_times_as_the_file_says():
    answered = [x for x in _offline() if x["chip"]["compiled"] is not None]
    differ = {_key(x) for x in answered if x["chip"]["compiled"] != x["offline"]["compiled"]}
    assert len(answered) == ANSWERED
    assert sum(x["chip"]["compiled"] is False for x in answered) == REFUSED
    assert len(answered) - len(differ) == AGREE
    assert differ == set(KNOWN_DISAGREEMENTS)
    assert all(x["agree"] == (_key(x) not in differ) for x in answered)


def test_a_config_refused_both_ways_was_refused_with_the_same_e1001_sizes():
    both = [x for x in _offline() if x["chip"]["compiled"] is False and x["offline"]["compiled"] is False]
    assert len(both) == REFUSED - len(KNOWN_DISAGREEMENTS)
    for x in both:
        if x["chip"]["e1001"] and x["offline"]["e1001"]:
            assert x["offline"]["e1001"] == x["chip"]["e1001"], _key(x)
    assert all(x["offline"]["e1001"] for x in both)  # every offline refusal is an E1001 with its sizes


def test_the_offline_compile_was_for_the_chips_own_kind_and_stack():
    offline = _offline()
    chip = vmem_records.rows()
    assert {(x["topology"], x["device_kind"]) for x in offline} == {("v5e:1x1", "TPU v5 lite")}
    assert {r["device_kind"] for r in chip} == {"TPU v5 lite"}
    # The chip's stack (bench/tpu/README.md: JAX and jaxlib 0.12.0.1, libtpu 0.0.50.1).
    assert {r["jax"] for r in chip} == {"0.12.0.1"}
    assert {(x["jax"], x["jaxlib"], x["libtpu"]) for x in offline} == {("0.12.0.1", "0.12.0.1", "0.0.50.1")}
