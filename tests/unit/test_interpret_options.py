"""Every interpret option a job carries reaches JAX's `InterpretParams` (jax 0.12.0.1 has them all)."""

import dataclasses

from jax.experimental.pallas import tpu as pltpu

from sandbox.harness import compat
from sandbox.protocol import InterpretOptions


def test_each_option_is_passed_to_the_interpreter():
    options = InterpretOptions(
        detect_races=True,
        uninitialized_memory="zero",
        dma_execution_mode="eager",
        random_seed=3,
        out_of_bounds_reads="uninitialized",
        buffer_bounds="padded",
    )
    params, missing = compat.interpret_params(pltpu.InterpretParams, options, "0.12.0.1")
    assert missing == ()
    for field in dataclasses.fields(InterpretOptions):
        assert getattr(params, field.name) == getattr(options, field.name), field.name


def test_an_option_a_version_lacks_is_reported_not_passed():
    @dataclasses.dataclass(frozen=True)
    class OldParams:
        detect_races: bool = False

    options = InterpretOptions(buffer_bounds="padded")
    params, missing = compat.interpret_params(OldParams, options, "0.10.2")
    assert params == OldParams()
    assert [m.feature for m in missing] == ["interpret option buffer_bounds"]
