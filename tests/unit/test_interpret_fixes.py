"""The harness's interpret-mode fixes are pinned to the JAX version they were written for."""

import pytest

from sandbox.harness.jaxapi.interpret_fixes import FIXED_JAX_VERSION, applies


def test_fixes_apply_only_to_the_pinned_jax():
    assert FIXED_JAX_VERSION == "0.12.0.1"
    assert applies("0.12.0.1")


@pytest.mark.parametrize("version", ["0.12.0", "0.12.0.2", "0.12.1", "0.13.0", "0.12.0.1.dev1"])
def test_other_versions_are_left_alone(version: str):
    assert not applies(version)
