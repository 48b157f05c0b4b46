"""libtpu's own compile for a chip this host does not have (`sandbox.harness.jaxapi.offline`): it
compiles what the chip compiles and refuses what the chip refuses, with the chip's message."""

import jax
import jax.numpy as jnp
import pytest
from jax.experimental import pallas as pl

from sandbox.harness.jaxapi import offline


def _double(block_rows: int):  # type: ignore[no-untyped-def]
    def body(x_ref, o_ref):  # type: ignore[no-untyped-def]
        o_ref[...] = x_ref[...] * 2.0

    def fn(x):  # type: ignore[no-untyped-def]
        spec = pl.BlockSpec((block_rows, 8192), lambda i: (i, 0))
        return pl.pallas_call(
            body,
            grid=(x.shape[0] // block_rows,),
            in_specs=[spec],
            out_specs=spec,
            out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
            interpret=False,
        )(x)

    return fn


X = jax.ShapeDtypeStruct((1024, 8192), jnp.float32)


@pytest.fixture
def cpu_job(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JAX_PLATFORMS", "cpu")  # a job off a chip slot


def test_it_compiles_what_fits_and_refuses_what_the_chip_refuses(cpu_job: None):
    fits = offline.compile_for("v5e", _double(64), [X])  # 2 x 2 x 2 MiB: within 16 MiB
    assert fits.refused is None and fits.by == "libtpu 0.0.50.1" and fits.chip == "v5e"
    over = offline.compile_for("v5e", _double(512), [X])  # 2 x 2 x 16 MiB
    assert over.refused is not None
    text = str(over.refused)
    assert "E1001" in text and "Scoped allocation with size 64.00M and limit 16.00M" in text, text
    # A v6e's default limit is 32 MiB, a v5p's too (the same kernel, the chips' own figures).
    assert "limit 32.00M" in str(offline.compile_for("v6e", _double(512), [X]).refused)


def test_what_it_cannot_compile_is_said(cpu_job: None, monkeypatch: pytest.MonkeyPatch):
    assert offline.can_compile("v5e") == ""
    assert offline.can_compile("tpu8i") == "libtpu 0.0.50.1 has no compiler for tpu8i"
    with pytest.raises(offline.NotCompiled, match="has no compiler for tpu8t"):
        offline.compile_for("tpu8t", _double(64), [X])
    monkeypatch.setenv("JAX_PLATFORMS", "tpu,cpu")  # a job on a chip slot compiles natively
    assert offline.can_compile("v5e") == "this job runs on a TPU, where the kernel is compiled natively"


def test_a_mutable_ref_argument_is_not_compiled_as_an_array(cpu_job: None):
    """Placed as an array, a ref would be traced as another function (one with no kernel, which
    compiles): the compile is not tried, and says why."""
    ref = jax.new_ref(jnp.zeros((8, 128), jnp.float32))
    with pytest.raises(offline.NotCompiled, match=r"an argument is a .*Ref.*, not an array"):
        offline.placed("v5e", [ref])
    assert len(offline.placed("v5e", [X, 2.0])) == 2  # Python scalars pass as they are


def test_a_function_without_array_arguments_is_not_compiled_for_the_cpu(cpu_job: None):
    """Nothing would put its program on the chip: it would lower for the CPU, where Pallas refuses
    ("Only interpret mode is supported on CPU backend"), a refusal the chip would never give."""
    with pytest.raises(offline.NotCompiled, match="takes no array"):
        offline.placed("v5e", [])
