"""The differential corpus (`bench/tpu/corpus`): known good in interpret mode, lowerable for a v5e, and,
once the chip's run is committed (`bench/tpu/v5e/corpus/`), compared kernel by kernel with the chip.

Interpret mode is switched on process-wide (`pltpu.set_tpu_interpret_mode`), so the corpus runs in a
child process, once per module, in the playground's simulator (`run.py --mode simulator`: interpret
mode with the harness's fixes, so f32 dots run as the MXU's one bf16 pass). The comparison with the chip is one test
per kernel: the simulator's verdict must be the chip's, and its outputs must match the chip's within
the kernel's `chip` tolerance (stated in the test id's failure message). Kernels whose `chip_note` says
why the chip is expected to differ (tanh, log, Precision.HIGH) are marked xfail with that reason,
strictly: a difference that goes away must have its note taken away.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import jax
import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "bench" / "tpu" / "corpus"
CHIP = ROOT / "bench" / "tpu" / "v5e" / "corpus"
sys.path.insert(0, str(CORPUS))

from corpus_case import Case, Tolerance, errors, within  # noqa: E402

pytestmark = pytest.mark.slow
_spec = importlib.util.spec_from_file_location("corpus_run", CORPUS / "run.py")
corpus_run = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(corpus_run)
CASES = corpus_run.all_cases()
BY_NAME = {c.name: c for c in CASES}


def read_run(folder: Path) -> tuple[dict[str, dict], dict[str, np.ndarray]]:
    verdicts = {}
    for line in (folder / "verdicts.jsonl").read_text().splitlines():
        record = json.loads(line)
        verdicts[record["name"]] = record
    with np.load(folder / "outputs.npz") as npz:
        return verdicts, {key: npz[key] for key in npz.files}


@pytest.fixture(scope="module")
def interpret_run(tmp_path_factory) -> tuple[dict[str, dict], dict[str, np.ndarray]]:
    out = tmp_path_factory.mktemp("corpus")
    proc = subprocess.run(
        [sys.executable, str(CORPUS / "run.py"), "--mode", "simulator", "--out", str(out), "--budget", "600"],
        capture_output=True,
        text=True,
        timeout=900,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return read_run(out)


def test_corpus_has_30_kernels_with_distinct_names_and_seeds():
    assert len(CASES) >= 30
    assert len({c.name for c in CASES}) == len(CASES)
    assert len({c.seed for c in CASES}) == len(CASES)


def test_corpus_lowers_for_a_v5e():
    """Mosaic's lowering runs here: a kernel the chip's compiler cannot take often fails already here."""
    device = jax.sharding.AbstractDevice("TPU v5 lite", 1, "tpu")
    failures = {}
    with jax.sharding.use_abstract_mesh(jax.sharding.AbstractMesh((), ()).update(abstract_device=device)):
        for case in CASES:
            specs = [jax.ShapeDtypeStruct(x.shape, x.dtype) for x in case.make_inputs()]
            try:
                jax.jit(case.run).trace(*specs).lower(lowering_platforms=("tpu",))
            except Exception as exc:
                failures[case.name] = str(exc)[:300]
    assert not failures


@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_corpus_kernel_runs_in_interpret_mode(interpret_run, name):
    verdicts, outputs = interpret_run
    record, case = verdicts[name], BY_NAME[name]
    assert record["error"] is None
    assert record["status"] == case.interpret_status, record
    assert f"{name}/0" in outputs


def chip_marks(case: Case) -> list:
    # Strict: a known difference that stops being one (XPASS) must have its note taken away.
    return [pytest.mark.xfail(reason=case.chip_note, strict=True)] if case.chip_note else []


def describe(name: str, mine: np.ndarray, chip: np.ndarray, tol: Tolerance) -> str:
    diff = np.abs(mine.astype(np.float64) - chip.astype(np.float64))
    where = tuple(int(i) for i in np.unravel_index(int(np.nanargmax(diff)), diff.shape)) if diff.size else ()
    abs_err, rel_err = errors(mine, chip)
    return f"{name}: simulator vs chip max abs {abs_err:.3g} (rel {rel_err:.3g}) at {where}; tolerance {tol}"


@pytest.mark.parametrize("name", [pytest.param(c.name, marks=chip_marks(c)) for c in CASES])
def test_corpus_kernel_agrees_with_the_chip(interpret_run, name):
    if not (CHIP / "outputs.npz").exists():
        pytest.skip(
            f"no chip run committed yet: {CHIP.relative_to(ROOT)}/outputs.npz comes from "
            "`run.py --mode tpu` on the lent v5e"
        )
    chip_verdicts, chip_outputs = read_run(CHIP)
    verdicts, outputs = interpret_run
    case, chip = BY_NAME[name], chip_verdicts.get(name)
    if chip is None:
        pytest.skip(f"{name} is newer than the chip's run")
    assert chip["seed"] == case.seed, "the chip ran other inputs"
    problems = []
    if verdicts[name]["status"] != chip["status"]:
        problems.append(
            f"verdict: simulator {verdicts[name]['status']}, chip {chip['status']} ({chip['error']})"
        )
    keys = sorted(k for k in chip_outputs if k.startswith(f"{name}/"))
    for key in keys:
        mine, theirs = outputs[key], chip_outputs[key]
        if not within(mine, theirs, case.chip):
            problems.append(describe(key, mine, theirs, case.chip))
    assert not problems, "; ".join(problems)
