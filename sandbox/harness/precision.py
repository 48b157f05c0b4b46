"""Whether a kernel's f32 dots ran as the MXU runs them at the default precision: one bf16 pass.

In the simulator the `mxu_precision` fix counts the dots it rewrote (`sandbox.harness.fixes.mxu`); on
a chip the MXU does it itself, so the kernel's traced program is searched for such dots. Either way a
mismatch of that size then comes with one line that says why and what to do (`fixes.mxu.HINT`).
"""

from __future__ import annotations

from typing import Any

import jax

from sandbox.harness.fixes import mxu
from sandbox.harness.model.ops import sub_jaxprs
from sandbox.harness.target import Target


def mismatch_hint(target: Target, call: Any) -> str:
    if target.interpret:
        return mxu.HINT if mxu.ROUNDED[0] else ""
    try:
        closed = jax.make_jaxpr(call.fn)(*call.args)
    except Exception:  # the kernel ran; its program is only searched for a hint
        return ""
    return mxu.HINT if _has_default_f32_dot(closed.jaxpr) else ""


def _has_default_f32_dot(jaxpr: Any) -> bool:
    for eqn in jaxpr.eqns:
        if mxu.one_bf16_pass(eqn):
            return True
        if any(_has_default_f32_dot(getattr(inner, "jaxpr", inner)) for inner in sub_jaxprs(eqn)):
            return True
    return False
