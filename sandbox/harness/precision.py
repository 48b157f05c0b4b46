"""What the chip's arithmetic means for a check: the MXU's bf16 pass, and its inexact transcendentals.

- f32 dots at the default precision run as one bf16 pass. In the simulator the `mxu_precision` fix
  counts the dots it rewrote (`sandbox.harness.jaxapi.fixes.mxu`); on a chip the MXU does it itself, so the
  traced program is searched for such dots. A mismatch then comes with one line that says why.
- transcendentals (exp, tanh, log, logistic, rsqrt, an approximate reciprocal) are exact in the
  simulator and within a measured band on the chip (`ChipInfo.transcendental_bands`): a simulated
  run names those the program uses, and the checker says so beside a check tighter than the band.
"""

from __future__ import annotations

from typing import Any

import jax

from sandbox.harness.jaxapi.fixes import mxu
from sandbox.harness.model.ops import sub_jaxprs
from sandbox.harness.target import Target
from sandbox.protocol import chip_info


def mismatch_hint(target: Target, call: Any) -> str:
    if target.interpret:
        return mxu.HINT if mxu.ROUNDED[0] else ""
    try:
        closed = jax.make_jaxpr(call.fn)(*call.args)
    except Exception:  # the kernel ran; its program is only searched for a hint
        return ""
    return mxu.HINT if _has_default_f32_dot(closed.jaxpr) else ""


def chip_bands(target: Target, call: Any) -> tuple[tuple[str, float], ...]:
    """The chip's measured bands of the transcendentals the program computes (simulated runs only:
    on a chip the verdict is already the chip's)."""
    bands = dict(chip_info(target.chip).transcendental_bands)
    if not target.interpret or not bands:
        return ()
    try:
        closed = jax.make_jaxpr(call.fn)(*call.args)
    except Exception:  # the kernel ran; its program is only searched for a note
        return ()
    used = _transcendentals(closed.jaxpr, set())
    return tuple((name, bands[name]) for name in sorted(used) if name in bands)


def _transcendentals(jaxpr: Any, found: set[str]) -> set[str]:
    for eqn in jaxpr.eqns:
        name = eqn.primitive.name
        if name == "reciprocal" and eqn.params.get("approx"):
            found.add("reciprocal(approx=True)")
        elif name in ("exp", "tanh", "log", "logistic", "rsqrt"):
            found.add(name)
        for inner in sub_jaxprs(eqn):
            _transcendentals(getattr(inner, "jaxpr", inner), found)
    return found


def _has_default_f32_dot(jaxpr: Any) -> bool:
    for eqn in jaxpr.eqns:
        if mxu.one_bf16_pass(eqn):
            return True
        if any(_has_default_f32_dot(getattr(inner, "jaxpr", inner)) for inner in sub_jaxprs(eqn)):
            return True
    return False
