"""Which work of a step waits for a dot to finish: anything downstream of a reduction across its
result's columns. A mixin for `walker.Walker`.

Mosaic lowers a dot one MXU-wide group of output columns at a time, each group finished after all
of its contraction chunks (`tpu_matmul_rule` in `apply_vector_layout.cc`, jax-ml/jax@43d14af^: the
column-group loop outside the contraction loop). Element-wise work on the result (`acc += dot`,
a scale, a mask) and reductions over its rows can proceed group by group as the groups finish, so
they overlap the dot, as any vector work of the step does. A reduction over the last (lane) axis,
the dot's columns, needs every group: it starts when the dot ends, and so does everything computed
from it (a row max, then `exp(s - max)`, its sum, a second dot on the result).

So each value carries a code `(wait, pending)`: `wait` is the dot (numbered in the order the step
issues them) whose end it waits for, through such a reduction; `pending` the dot it is still coming
out of, column group by column group (-1: none). The MXU runs a step's dots in the order they are
issued, so a value that waits for several dots waits for the last of them: combining values takes
the largest of each, and a dot that is pending but not after `wait` is finished. A lane reduction
of a pending value waits for that dot (its element-wise part, which combines the column groups as
they come, does not: only its trip through the cross-lane unit and what follows); a dot's result
is pending on itself and waits for what its operands wait for. Vector work is charged, besides the
step's total, to the dot it waits for (`ops.Acc.after`), and each dot records the MXU work issued
up to its end (`ops.Acc.prefix`); `cost.Rates.compute` takes the step to last at least as long as
each of those dots' prefix followed by the vector work that waits for it.

Values are tracked through refs (a dot's result stored to a scratch and read back later in the step
is still pending), loops and branches; a grid-mode branch's writes count in every step (where its
predicate selects it or not: a structural, not a per-step, record). A synchronisation (a DMA
started or waited for, a semaphore, a step marker) ends the work in flight: the walk's events
already put the work after it after the work before it, so the codes restart. A value absent from
`codes` waits for nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sandbox.harness.jaxapi import core as jcore
from sandbox.harness.model.evaluate import Ref

NONE = (-1, -1)  # waits for no dot, comes out of none

Code = tuple[int, int]  # (the dot it waits for, the dot it is pending on)


def combine(codes: Sequence[Code]) -> Code:
    """A value computed from values with these codes: it waits for the last dot any of them does."""
    wait = max((c[0] for c in codes), default=-1)
    pending = max((c[1] for c in codes), default=-1)
    return (wait, pending if pending > wait else -1)


class Barriers:
    """Each value's code (see the module's docstring), kept beside the walk's environment."""

    codes: dict[Any, Code]  # var -> code; absent: NONE
    ref_codes: dict[Any, Code]  # Ref.key -> the codes stored into the ref since the last sync, combined
    dots: int  # dots issued so far: the next one's number

    def _code(self, atoms: Sequence[Any]) -> Code:
        codes = self.codes
        return combine([codes.get(a, NONE) for a in atoms if isinstance(a, jcore.Var)])

    def _set(self, outs: Sequence[Any], code: Code) -> None:
        """Record `code` for `outs` (a var walked again, in a loop, forgets its earlier code)."""
        if code != NONE:
            for var in outs:
                self.codes[var] = code
        elif self.codes:
            for var in outs:
                self.codes.pop(var, None)

    def _through(self, eqn: Any, barrier: bool) -> tuple[int, int]:
        """An operation's result code from its operands'. The dots its operands wait for and its
        result waits for: they differ where `barrier`, a lane reduction, gets a pending value."""
        wait, pending = self._code(eqn.invars)
        waits = wait
        if barrier and pending >= 0:
            wait, pending = pending, -1
        self._set(eqn.outvars, (wait, pending))
        return waits, wait

    def _dot_code(self, eqn: Any) -> tuple[int, int]:
        """A dot's number, and the dot it waits for; its result is pending on it."""
        wait = self._code(eqn.invars)[0] if self.codes else -1
        number = self.dots
        self.dots += 1
        self.codes[eqn.outvars[0]] = (wait, number)
        return number, wait

    def _load_code(self, ref: Any, out: Any) -> int:
        code = self.ref_codes.get(ref.key, NONE) if isinstance(ref, Ref) else NONE
        self._set((out,), code)
        return code[0]

    def _store_code(self, ref: Any, value: Any, *, add: bool = False) -> int:
        """A store into `ref` of `value` (a var or literal): the ref's code combines every value
        stored into it in the step; the dot the store (with `add`, the sum too) waits for."""
        code = self.codes.get(value, NONE) if self.codes and isinstance(value, jcore.Var) else NONE
        if not isinstance(ref, Ref):
            return code[0]
        old = self.ref_codes.get(ref.key, NONE)
        if code != NONE:
            self.ref_codes[ref.key] = combine([old, code])
        return combine([old, code])[0] if add else code[0]

    def _bind(self, inner: Sequence[Any], outer: Sequence[Any]) -> None:
        """Codes across a call, branch or loop boundary: `inner` vars take `outer` atoms' codes."""
        if not self.codes:
            return
        found = [self.codes.get(a, NONE) if isinstance(a, jcore.Var) else NONE for a in outer]
        for var, code in zip(inner, found, strict=False):
            self._set((var,), code)

    def _join(self, outer: Sequence[Any], options: Sequence[Sequence[Any]]) -> None:
        """A branch's results: each combines the codes every branch gives it."""
        if not self.codes:
            return
        for i, var in enumerate(outer):
            self._set((var,), self._code([o[i] for o in options if i < len(o)]))

    def _restart(self) -> None:
        """At a synchronisation point: the work in flight is done, no value waits for a dot."""
        if self.codes:
            self.codes.clear()
        if self.ref_codes:
            self.ref_codes.clear()
