"""`Call.run_quietly`, what every timing brackets, waits for what the kernel wrote: its outputs, and for a
kernel that writes through a mutable ref and returns nothing, a read back from each ref (on the v5e such
calls were timed from a window that closed before the kernel ran)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest

from sandbox.harness import calls


def _in_place(x_ref, w):
    x_ref[...] = x_ref[...] @ w


def test_a_call_that_returns_nothing_waits_on_each_ref_it_wrote(monkeypatch):
    waited: list = []
    real = jax.block_until_ready
    monkeypatch.setattr(jax, "block_until_ready", lambda x: waited.append(x) or real(x))
    x, w = jnp.ones((8, 4)), 2 * jnp.eye(4)
    call = calls.prepare(_in_place, [x, w], mutable=(0,))
    call.run_quietly()
    ((result, written),) = waited
    assert result is None and len(written) == 1
    assert float(written[0]) == pytest.approx(2.0)  # read after the kernel's write, so it sees it
    assert float(call.args[0][0, 0]) == pytest.approx(2.0)


def test_a_call_with_outputs_waits_on_them_and_reads_nothing_back(monkeypatch):
    waited: list = []
    real = jax.block_until_ready
    monkeypatch.setattr(jax, "block_until_ready", lambda x: waited.append(x) or real(x))
    call = calls.prepare(lambda a: a * 2, [jnp.ones(3)], mutable=())
    call.run_quietly()
    ((result, written),) = waited
    assert written == [] and result.shape == (3,)
