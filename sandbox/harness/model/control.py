"""Control flow in a kernel body, for `walker.Walker`: branches (`cond`, `pl.when`) and loops (`scan`,
`fori_loop`, `while`). In grid mode a branch costs where its predicate selects it (a mask over the
steps) and a loop's body is walked while any step still runs it; in program mode the branch its
known predicate picks runs, and a loop that talks to the DMA engine makes one step per iteration
(walked once per iteration class where `iteration_classes` can). A mixin: the walk itself is `Walker.run`. Each
boundary passes on which values wait for a dot (`barriers`): a loop's carries from one iteration
to the next, a grid-mode branch's results from every branch.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import numpy as np

from sandbox.harness.model.barriers import Barriers
from sandbox.harness.model.evaluate import UNKNOWN, Ref
from sandbox.harness.model.hoisting import NOTHING, Hoisted, invariant_eqns, once_units
from sandbox.harness.model.iteration_classes import MIN_ITERATIONS, walk_by_class
from sandbox.harness.model.ops import Acc, has_sync, jaxpr_of, scan_counts

MAX_LOOP = 1_000_000
GRID_LOOP_BUDGET = 1 << 22  # grid mode: iterations x steps walked exactly; more is costed from one


class ControlFlow(Barriers):
    """Branches and loops (see the module's docstring)."""

    sequential: bool
    acc: Acc
    mask: Any
    notes: set[str]
    label: str
    hoisted: Hoisted
    sublanes: int
    lanes: int

    def run(self, jaxpr: Any, env: dict[Any, Any]) -> list[Any]:
        raise NotImplementedError

    def _read(self, env: dict[Any, Any], atom: Any) -> Any:
        raise NotImplementedError

    def _remember(self, value: Any) -> None:
        raise NotImplementedError

    def step(self, label: str, kind: int | None = None) -> None:
        raise NotImplementedError

    def _cond(self, eqn: Any, env: dict[Any, Any]) -> None:
        branches = [jaxpr_of(b) for b in eqn.params["branches"]]
        which = self._read(env, eqn.invars[0])
        operands = [self._read(env, v) for v in eqn.invars[1:]]
        for branch in branches:
            self._bind(branch.invars, eqn.invars[1:])
        if self.sequential:
            if which is UNKNOWN:
                self.notes.add("a branch depends on data: its last (usually the working) branch is assumed")
                which = len(branches) - 1
            branch = branches[min(max(int(which), 0), len(branches) - 1)]
            outs = self.run(branch, dict(zip(branch.invars, operands, strict=False)))
            branches = [branch]
        elif which is not UNKNOWN:
            which = np.clip(np.asarray(which).astype(np.int64), 0, len(branches) - 1)
            self._remember(which)
            outs = self._masked(branches, operands, which)
        else:
            self._remember(UNKNOWN)
            outs = self._costliest(branches, operands)
        for var, value in zip(eqn.outvars, outs, strict=False):
            env[var] = value
        self._join(eqn.outvars, [b.outvars for b in branches])

    def _masked(self, branches: list[Any], operands: list[Any], which: Any) -> list[Any]:
        saved, results = self.mask, []
        for b, branch in enumerate(branches):
            selected = which == b
            if not np.any(selected):
                results.append([UNKNOWN] * len(branch.outvars))
                continue
            self.mask = saved * selected
            results.append(self.run(branch, dict(zip(branch.invars, operands, strict=False))))
        self.mask = saved
        outs = []
        for i in range(len(branches[0].outvars)):
            options = [r[i] for r in results]
            known = all(o is not UNKNOWN and not isinstance(o, Ref) for o in options)
            outs.append(np.choose(which, np.broadcast_arrays(*options)) if known else UNKNOWN)
        return outs

    def _costliest(self, branches: list[Any], operands: list[Any]) -> list[Any]:
        self.notes.add("a branch depends on data: the costlier branch is assumed at every step")
        saved = self.acc
        accs = []
        for branch in branches:
            self.acc = Acc(saved.zero)
            self.run(branch, dict(zip(branch.invars, operands, strict=False)))
            accs.append(self.acc)
        self.acc = saved
        weights = np.stack([np.broadcast_to(a.weight(), np.shape(saved.zero)) for a in accs])
        best = np.argmax(weights, axis=0)
        for b, acc in enumerate(accs):
            saved.absorb(acc, best == b)
        return [UNKNOWN] * len(branches[0].outvars)

    def _scan(self, eqn: Any, env: dict[Any, Any]) -> None:
        body = jaxpr_of(eqn.params["jaxpr"])
        length = eqn.params["length"]
        consts_n, carry_n = scan_counts(eqn.params)
        values = [self._read(env, v) for v in eqn.invars]
        consts, carry, xs = (
            values[:consts_n],
            values[consts_n : consts_n + carry_n],
            values[consts_n + carry_n :],
        )
        self._bind(body.invars, eqn.invars)
        carries = body.invars[consts_n : consts_n + carry_n]
        if not self.sequential and length * np.size(self.acc.zero) > GRID_LOOP_BUDGET:
            unknown = [*consts, *([UNKNOWN] * (carry_n + len(xs)))]
            carry = self._scan_once(body, unknown, length, consts_n)[:carry_n]
            self._bind(carries, body.outvars[:carry_n])
        else:
            stepped = self.sequential and has_sync(body)
            hoisted = invariant_eqns(body, consts_n)
            if stepped and not xs and length >= MIN_ITERATIONS:
                found = walk_by_class(self, body, consts, carry, length, carry_n, hoisted)
                if found is not None:
                    carry, length = found, 0
                    self._bind(carries, body.outvars[:carry_n])
            for i in range(length):
                if stepped:
                    self.step(f"{self.label}loop step {i}")
                x = [
                    v[i] if isinstance(v, np.ndarray) and v.ndim and len(v) == length else UNKNOWN for v in xs
                ]
                with self._hoisting(hoisted if i else NOTHING):
                    carry = self.run(body, dict(zip(body.invars, [*consts, *carry, *x], strict=False)))[
                        :carry_n
                    ]
                self._bind(carries, body.outvars[:carry_n])
        self._bind(eqn.outvars[:carry_n], carries)
        for var, value in zip(
            eqn.outvars, [*carry, *([UNKNOWN] * (len(eqn.outvars) - carry_n))], strict=False
        ):
            env[var] = value

    def _scan_once(self, body: Any, values: list[Any], length: int, constants: int) -> list[Any]:
        """Grid mode, a long loop: walk its body once with unknown carries and count it `length` times,
        its invariant work (`hoisting`) once."""
        self.notes.add(f"a loop of {length} iterations is costed from one iteration (its carries unknown)")
        hoisted = invariant_eqns(body, constants)
        saved = self.acc
        self.acc = Acc(saved.zero)
        with self._hoisting(hoisted):
            outs = self.run(body, dict(zip(body.invars, values, strict=False)))
        saved.absorb(self.acc, length)
        self.acc = saved
        if once := once_units(body, hoisted, self.sublanes, self.lanes):
            self.acc.add(None, 0, once, self.mask, -1)
        return [UNKNOWN] * len(outs)

    @contextlib.contextmanager
    def _hoisting(self, hoisted: Hoisted) -> Iterator[None]:
        """While walking a loop's later iterations: its invariant equations cost a reload at most."""
        saved = self.hoisted
        if hoisted.eqns:
            self.hoisted = Hoisted(saved.eqns | hoisted.eqns, saved.read_in_loop | hoisted.read_in_loop)
        try:
            yield
        finally:
            self.hoisted = saved

    def _while(self, eqn: Any, env: dict[Any, Any]) -> None:
        cond, body = jaxpr_of(eqn.params["cond_jaxpr"]), jaxpr_of(eqn.params["body_jaxpr"])
        cn, bn = eqn.params["cond_nconsts"], eqn.params["body_nconsts"]
        values = [self._read(env, v) for v in eqn.invars]
        cconsts, bconsts, carry = values[:cn], values[cn : cn + bn], values[cn + bn :]
        self._bind(cond.invars, [*eqn.invars[:cn], *eqn.invars[cn + bn :]])
        self._bind(body.invars, eqn.invars[cn:])
        saved = self.mask
        stepped = self.sequential and has_sync(body)
        hoisted = invariant_eqns(body, bn)
        for i in range(MAX_LOOP):
            (go,) = self.run(cond, dict(zip(cond.invars, [*cconsts, *carry], strict=False)))
            if go is UNKNOWN:
                self.notes.add("a while loop's trip count depends on data: one iteration is assumed")
                go = np.asarray(i == 0)
            self.mask = saved * go if not self.sequential else saved
            self._remember(go)
            if not np.any(go):
                break
            if stepped:
                self.step(f"{self.label}loop step {i}")
            with self._hoisting(hoisted if i else NOTHING):
                carry = self.run(body, dict(zip(body.invars, [*bconsts, *carry], strict=False)))
            self._bind(body.invars[bn:], body.outvars)
            self._bind(cond.invars[cn:], body.outvars)
        self.mask = saved
        self._bind(eqn.outvars, body.invars[bn:])
        for var, value in zip(eqn.outvars, carry, strict=False):
            env[var] = value
