"""The playground's VMEM verdict against the v5e compiler's, config by config (bench/tpu/v5e).

Every config the chip compiled or refused (vmem.jsonl: compiled around the 16 MiB scoped limit, with the
compiler's E1001 sizes; tune.jsonl: every config Tune ran on the chip, so compiled) is traced here at its
own size (abstract inputs: nothing runs), and the playground's refusal (`vmem_refusal`, what Tune's
`over_vmem` and the lowering check's warning say) must be the chip's. Where the compiler reported a size
for a config whose blocks fit, the playground's count with the compiler's scratch for its dots
(`checks.compiler_scratch`) must be within 1 MiB of it.
"""

from __future__ import annotations

import functools
import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench" / "tpu"))

import tpu_records as records  # noqa: E402
import vmem_grid  # noqa: E402
import vmem_records  # noqa: E402

from sandbox.catalog.entries import load_catalog  # noqa: E402
from sandbox.harness.checks.compiler_scratch import scratch_bytes  # noqa: E402
from sandbox.harness.lowering.chip_checks import facts, vmem_refusal  # noqa: E402
from sandbox.harness.model.estimate import chip_context  # noqa: E402
from sandbox.harness.sweep_plan import base_case  # noqa: E402
from sandbox.protocol.chips import chip_info  # noqa: E402

jax = pytest.importorskip("jax")
MIB = 2**20
V5E = chip_info("v5e")

# Configs the chip compiled that the playground refuses, or refused that it passes: none now. The three
# of 2026-12-05 (one K step; a (512, 1) output block) were explained by the follow-up compiles of
# 2026-12-06 (vmem-followup.jsonl; `compiler_scratch.uncounted_bytes`). A config that disagrees again
# goes here as a strict xfail, kept visible until it is explained.
UNEXPLAINED: set[tuple] = set()


def _key(row: dict) -> tuple:
    return (row["kernel"], tuple(row["shape"]), row["dtype"], tuple(sorted(row["params"].items())))


def _vmem_rows() -> list[dict]:
    rows = [row for name in vmem_records.VMEM_RECORDS for row in records.read(name)]
    return [r for r in rows if r["compiled"] is not None]


def _traced(config: vmem_grid.Config):
    fn, specs = vmem_grid.build(config)
    return facts(jax.make_jaxpr(fn)(*specs))


def _config(row: dict) -> vmem_grid.Config:
    return vmem_grid.Config(
        row["kernel"], tuple(row["shape"]), row["dtype"], row["params"], row["counted_mib"]
    )


@pytest.mark.parametrize(
    "row",
    [
        pytest.param(r, marks=pytest.mark.xfail(strict=True, reason="compiled on the chip; see UNEXPLAINED"))
        if _key(r) in UNEXPLAINED
        else r
        for r in _vmem_rows()
    ],
    ids=lambda r: f"{r['kernel']}-{'x'.join(map(str, r['shape']))}-{r['dtype']}-{r['params']}",
)
def test_the_playground_refuses_what_the_v5e_compiler_refused_and_nothing_else(row):
    found = _traced(_config(row))
    refusal = vmem_refusal(found, V5E)
    assert (refusal is None) == row["compiled"], refusal


@pytest.mark.parametrize(
    "row",
    [r for r in _vmem_rows() if r["e1001"] and r["counted_mib"] <= 16.0],
    ids=lambda r: f"{r['kernel']}-{r['dtype']}-{r['params']}",
)
def test_the_count_with_the_compilers_scratch_is_the_size_in_its_e1001(row):
    found = _traced(_config(row))
    ((kernel, used),) = found.unlimited
    total = used + scratch_bytes(dict(found.dots)[kernel], V5E)
    assert total / MIB == pytest.approx(row["e1001"]["size_m"], abs=1.0)
    assert used / MIB == pytest.approx(row["counted_mib"], abs=0.01)  # the bench counted as the playground


def test_the_followup_compiles_decide_both_rules():
    """Each rule of `uncounted_bytes` rests on compiled and refused configs side by side."""
    rows = records.read("vmem-followup.jsonl")
    one_step = [
        r for r in rows if r["kernel"] == "tiled_matmul_pallas_call" and r["shape"][1] == r["params"]["bk"]
    ]
    more_steps = [
        r for r in rows if r["kernel"] == "tiled_matmul_pallas_call" and r["shape"][1] > r["params"]["bk"]
    ]
    assert one_step and all(r["compiled"] for r in one_step)
    assert more_steps and not any(r["compiled"] for r in more_steps)
    sums = [r for r in rows if r["kernel"] == "row_sum_blocks"]
    assert {r["compiled"] for r in sums} == {True, False}
    for r in sums:
        inputs = 2 * r["params"]["rows"] * r["shape"][1] * 4 / MIB
        assert r["compiled"] == (inputs <= 16.0)
        if not r["compiled"]:
            assert r["e1001"]["size_m"] == pytest.approx(inputs, abs=0.01)


# The catalog entries whose kernel takes x (m, k) and y (k, n): traced here at a sweep's size directly.
TWO_OPERANDS = {"tiled_matmul_pallas_call", "tiled_matmul", "hbm_manual_dma"}
# The plain sweep files that trace off a TPU as they are (JAX's flash attention and gmm ask the local
# device for its TPU generation while tracing).
PLAIN_PALLAS_CALLS = {"bench/tpu/sweeps/elementwise.py", "bench/tpu/sweeps/softmax.py"}


@functools.cache
def _sweep_file(path: str):
    """A plain Tune file of bench/tpu/sweeps, loaded once for all its rows."""
    spec = importlib.util.spec_from_file_location(Path(path).stem, ROOT / path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _swept(row: dict, entries: dict):
    """The function and abstract inputs of one measured Tune config, or None where its inputs are made
    by an entry's own make_inputs (block tables, mutable refs) or that trace only for a TPU: Tune
    itself checked those, with the same `vmem_refusal`."""
    size = row["size"]
    if row["entry"] in TWO_OPERANDS:
        entry = entries[row["entry"]]
        dtype = jax.numpy.dtype(base_case(entry.cases, "").dtype)
        args = [
            jax.ShapeDtypeStruct((size["m"], size["k"]), dtype),
            jax.ShapeDtypeStruct((size["k"], size["n"]), dtype),
        ]
        return getattr(vmem_grid.catalog(row["entry"]), entry.entry_point), args
    if row["file"] in PLAIN_PALLAS_CALLS:
        module = _sweep_file(row["file"])
        return module.kernel, jax.eval_shape(lambda: module.make_inputs(0, **size))
    return None


def test_nothing_tune_ran_on_the_chip_is_refused():
    entries = {e.slug: e for e in load_catalog().entries}
    rows = records.read("tune.jsonl")
    checked = 0
    for row in rows:
        found = _swept(row, entries)
        if found is None:
            continue
        kernel, args = found
        fn = functools.partial(kernel, **row["params"])
        with chip_context(V5E):  # pl.kernel meshes ask for the TPU they are traced for
            traced = jax.make_jaxpr(fn)(*args)
        assert vmem_refusal(facts(traced), V5E) is None, (row["file"], row["params"])
        checked += 1
    assert checked >= 140
