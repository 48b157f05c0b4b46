"""Loop-invariant vector work: what Mosaic computes once before a loop instead of every iteration.

A `fori_loop` body often builds values that do not change from one iteration to the next: an iota,
a mask compared from it, a broadcast of a value read before the loop. The compiler hoists them out
of the loop (loop-invariant code motion), so the chip does that work once; the walk counted it every
iteration. Measured on the lent v5e (bench/tpu/v5e/listings.jsonl, ragged paged attention, JAX
0.12.0.1): the model counted 7,624 VALU vregs a step of the inner loop, largely iotas, masks and
broadcasts, and estimated 2.1-2.6x the chip's time; the compiler's inner loop has no such work in it.

An equation is invariant here when it is a pure vector operation (no effect, no ref: a VMEM load
inside the loop may see a store of the loop, so it is never hoisted; no loop or branch; a call only
if all in it is pure, as `jnp`'s jitted floor division and remainder are) whose operands are
literals, the loop's constants, or other invariant values. Iterations after the first pay nothing for
a value only other hoisted work reads, and for one the loop reads (`reload`) nothing if it is one
vreg, else a reload of its vregs from VMEM or computing it again, whichever is less: a hoisted value
that does not fit the register file is spilled (the listing's inner loop reloads 478 spills a step)
or rematerialised where that is cheaper.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from sandbox.harness.jaxapi import core as jcore
from sandbox.harness.model.ops import CALLS, memory_cost, sub_jaxprs, vector_units, weighted

# Equations that read or write memory, or talk to the DMA engine or other cores: never hoisted.
_STATEFUL_PREFIXES = ("get", "swap", "masked", "addupdate", "dma", "semaphore", "barrier", "ref_", "prng")


@dataclass(frozen=True)
class Hoisted:
    """A loop body's invariant equations (`id`s): all of them, and those whose value the loop itself
    reads (the rest only feed other hoisted work, and cost nothing in later iterations)."""

    eqns: frozenset[int] = frozenset()
    read_in_loop: frozenset[int] = frozenset()


NOTHING = Hoisted()


def invariant_eqns(body: Any, constants: int) -> Hoisted:
    """The equations of a loop body (a jaxpr whose first `constants` inputs are the loop's constants)
    that compute the same value in every iteration."""
    return _invariant(body, constants)


@functools.lru_cache(maxsize=256)
def _invariant(body: Any, constants: int) -> Hoisted:
    known: set[Any] = {*body.constvars, *body.invars[:constants]}
    made_by: dict[Any, int] = {}
    found: set[int] = set()
    for eqn in body.eqns:
        if pure(eqn) and all(isinstance(v, jcore.Literal) or v in known for v in eqn.invars):
            known.update(eqn.outvars)
            made_by.update(dict.fromkeys(eqn.outvars, id(eqn)))
            found.add(id(eqn))
    read = {
        made_by[v]
        for eqn in body.eqns
        if id(eqn) not in found
        for v in eqn.invars
        if not isinstance(v, jcore.Literal) and v in made_by
    }
    read |= {made_by[v] for v in body.outvars if not isinstance(v, jcore.Literal) and v in made_by}
    return Hoisted(frozenset(found), frozenset(read))


def pure(eqn: Any) -> bool:
    """No effect, no ref, no memory or DMA operation; a call (`jnp`'s jitted helpers: floor division,
    remainder) only if everything in it is pure; no loop or branch."""
    name = eqn.primitive.name
    if getattr(eqn, "effects", None) or name.startswith(_STATEFUL_PREFIXES):
        return False
    if any(isinstance(getattr(v, "aval", None), jcore.AbstractRef) for v in (*eqn.invars, *eqn.outvars)):
        return False
    inner = sub_jaxprs(eqn)
    return not inner or (name in CALLS and all(pure(e) for j in inner for e in j.eqns))


def reload(
    eqn: Any, computed: Callable[[], Mapping[str, float]], sublanes: int, lanes: int
) -> dict[str, float]:
    """What a hoisted value the loop reads costs an iteration after the first, `computed` what
    computing it again costs: nothing if it fits one vreg (it stays in a register), else a load of
    its vregs (spilled before the loop) or, where that costs more, computing it again (the compiler
    rematerialises a value cheaper to make than to reload, as a broadcast kept in one vreg)."""
    avals = [v.aval for v in eqn.outvars if hasattr(getattr(v, "aval", None), "shape")]
    loads = max((memory_cost(a.shape, a.dtype, sublanes, lanes) for a in avals), default=0.0)
    if loads <= sublanes * lanes:
        return {}
    again = dict(computed())
    return again if weighted(again) < weighted({"load": loads}) else {"load": loads}


def once_units(body: Any, hoisted: Hoisted, sublanes: int, lanes: int) -> dict[str, float]:
    """The vector work of a loop body's hoisted equations, done once before the loop (a long loop
    costed from one walk, `ControlFlow._scan_once`, adds it apart)."""
    return work_of([e for e in body.eqns if id(e) in hoisted.eqns], sublanes, lanes)


def work_of(eqns: Any, sublanes: int, lanes: int) -> dict[str, float]:
    """The vector work of `eqns`, calls followed in."""
    total: dict[str, float] = {}
    for eqn in eqns:
        inner = sub_jaxprs(eqn)
        found = (
            work_of([e for j in inner for e in j.eqns], sublanes, lanes)
            if inner
            else vector_units(eqn, sublanes, lanes)
        )
        for unit, ops in found.items():
            total[unit] = total.get(unit, 0.0) + ops
    return total
