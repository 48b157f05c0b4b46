"""What a sweep's two processes must agree on: the inputs at a problem size, and each config's check size.

A sweep ("Tune") is judged like a run: its kernel process (`sandbox.harness.sweep`) runs each config
at its check size and sends the outputs; its reference's process (`sandbox.harness.reference`)
makes the same inputs and the expected outputs; the checker, outside both, compares them. Both
processes take the inputs and the check sizes from here, so a config's outputs and its expected
outputs are for the same problem. The reference's process never loads the user's kernel in
catalog mode, so nothing here needs it.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

import jax

from sandbox.protocol import Case, EntrySpec, SweepSpec
from sandbox.protocol.sweep import ParamValue

MakeInputs = Callable[[dict[str, int]], Any]  # a problem size → the kernel's inputs


def base_case(cases: tuple[Case, ...], name: str) -> Case:
    """The case whose dtype and seed the sweep uses: the one named, else the last TPU-sized one."""
    if name:
        for case in cases:
            if case.name == name:
                return case
        raise ValueError(f"the entry has no case {name!r}")
    return next((c for c in reversed(cases) if c.tpu_only), cases[-1])


def catalog_inputs(entry: EntrySpec, make_inputs: Callable[[Case], Any], spec: SweepSpec) -> MakeInputs:
    """The entry's `make_inputs` at any size, with the base case's dtype and seed."""
    base = base_case(entry.cases, spec.case)
    return lambda dims: make_inputs(Case(base.name, base.dtype, base.seed, {**base.dims, **dims}))


def catalog_check_base(entry: EntrySpec, spec: SweepSpec) -> dict[str, int]:
    """The correctness size before it is fitted to a config's blocks: the entry's first CPU case."""
    base = base_case(entry.cases, spec.case)
    return dict(next((c for c in entry.cases if not c.tpu_only), base).dims)


def scratch_inputs(make_inputs: Callable[..., Any]) -> MakeInputs:
    """A scratch file's `make_inputs(seed, **dims)` at any size, seed 0."""
    return lambda dims: make_inputs(0, **dims)


def scratch_check_base(make_inputs: Callable[..., Any]) -> dict[str, int]:
    """A scratch file's check size: the integer defaults of its `make_inputs` keywords."""
    return {
        name: p.default
        for name, p in inspect.signature(make_inputs).parameters.items()
        if isinstance(p.default, int) and not isinstance(p.default, bool)
    }


def check_groups(spec: SweepSpec, base: dict[str, int]) -> list[tuple[dict[str, int], tuple[int, ...]]]:
    """This job's configs grouped by check size: (dims, config indices), first seen first."""
    groups: dict[tuple[tuple[str, int], ...], list[int]] = {}
    sizes: dict[tuple[tuple[str, int], ...], dict[str, int]] = {}
    for index, params in spec.configs():
        dims = spec.check_dims(params, base)
        key = tuple(sorted(dims.items()))
        sizes.setdefault(key, dims)
        groups.setdefault(key, []).append(index)
    return [(sizes[key], tuple(indices)) for key, indices in groups.items()]


def bound(
    kernel: Callable[..., Any], params: dict[str, ParamValue], mutable: tuple[int, ...]
) -> Callable[..., Any]:
    """`kernel` with this config's parameters; mutable inputs become fresh refs inside the trace."""
    fn = functools.partial(kernel, **params)
    if not mutable:
        return fn

    def with_refs(*args: Any) -> Any:
        refs = [jax.new_ref(a) if i in mutable else a for i, a in enumerate(args)]
        out = fn(*refs)
        return out, [refs[i][...] for i in mutable]

    return with_refs
