"""The harness's interpret-mode fixes are pinned to the JAX version they were written for."""

import pytest

from sandbox.harness.jaxapi.interpret_fixes import applies, reason
from sandbox.harness.jaxapi.versions import PINNED


def test_fixes_apply_only_to_the_pinned_jax():
    assert PINNED == "0.12.0.1"
    assert applies("0.12.0.1") and reason("0.12.0.1") == ""


@pytest.mark.parametrize("version", ["0.12.0", "0.12.0.2", "0.12.1", "0.13.0", "0.12.0.1.dev1", "0.10.2"])
def test_other_versions_are_left_alone(version: str):
    assert not applies(version)
    assert reason(version) == (
        f"not available on jax {version} (the playground's interpret-mode fix hooks are written for jax "
        "0.12.0.1's internals)"
    )
